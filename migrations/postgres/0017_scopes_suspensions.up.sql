-- Operators' and backends' controls: an API key's scopes (space-separated:
-- "server" acts for its backend's players, "admin" for every player; empty,
-- a key that only signs players in), a player's suspension (its tokens are
-- revoked and it cannot sign in again until reinstated), and the successor
-- of a refreshed token, which an open stream follows.
ALTER TABLE api_keys ADD COLUMN scopes text NOT NULL DEFAULT '';
ALTER TABLE players ADD COLUMN suspended_at timestamptz;
ALTER TABLE player_tokens ADD COLUMN replaced_by bytea;
