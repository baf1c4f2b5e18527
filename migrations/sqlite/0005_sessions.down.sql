DROP TABLE external_players;
DROP TABLE api_keys;
DROP INDEX player_tokens_player;
ALTER TABLE player_tokens DROP COLUMN revoked_at;
ALTER TABLE player_tokens DROP COLUMN expires_at;
