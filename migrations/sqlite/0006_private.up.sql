-- The SQLite dialect of postgres/0006_private.up.sql: private is 0/1 and
-- invited_ids a JSON array (text), as player_ids is.
ALTER TABLE matches ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matches ADD COLUMN invited_ids TEXT NOT NULL DEFAULT '[]';
