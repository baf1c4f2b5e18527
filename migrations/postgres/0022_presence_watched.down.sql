ALTER TABLE player_presence DROP COLUMN watched_at;
