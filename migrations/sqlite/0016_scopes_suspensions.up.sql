-- The SQLite dialect of postgres/0015_scopes_suspensions.up.sql.
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
ALTER TABLE players ADD COLUMN suspended_at INTEGER;
ALTER TABLE player_tokens ADD COLUMN replaced_by BLOB;
