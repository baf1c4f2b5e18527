DROP INDEX players_deleted;
ALTER TABLE players DROP COLUMN deleted_at;
