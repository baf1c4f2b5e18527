-- The SQLite dialect of postgres/0015_scopes_suspensions.down.sql.
ALTER TABLE player_tokens DROP COLUMN replaced_by;
ALTER TABLE players DROP COLUMN suspended_at;
ALTER TABLE api_keys DROP COLUMN scopes;
