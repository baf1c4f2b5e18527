-- The SQLite dialect of postgres/0005_sessions.up.sql. Tokens issued before
-- this migration expire 30 days (the default --token-ttl) after it runs.
ALTER TABLE player_tokens ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_tokens ADD COLUMN revoked_at INTEGER;
UPDATE player_tokens SET expires_at = (CAST(strftime('%s', 'now') AS INTEGER) + 30 * 86400) * 1000000;

CREATE INDEX player_tokens_player ON player_tokens (player_id);

CREATE TABLE api_keys (
    id         TEXT    NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    key_hash   BLOB    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE TABLE external_players (
    backend     TEXT    NOT NULL,
    external_id TEXT    NOT NULL,
    player_id   TEXT    NOT NULL UNIQUE REFERENCES players (id),
    api_key_id  TEXT    NOT NULL REFERENCES api_keys (id),
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (backend, external_id)
);
