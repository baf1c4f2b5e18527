-- The SQLite dialect of postgres/0019_player_deletion.up.sql.
ALTER TABLE players ADD COLUMN deleted_at INTEGER;
CREATE INDEX players_deleted ON players (deleted_at) WHERE deleted_at IS NOT NULL;
