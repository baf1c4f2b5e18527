-- Sessions: a token expires and can be revoked. Tokens issued before this
-- migration expire 30 days (the default --token-ttl) after it runs, so
-- that no token lives forever; a client refreshes its token to keep going.
ALTER TABLE player_tokens
    ADD COLUMN expires_at timestamptz NOT NULL DEFAULT (now() + interval '30 days'),
    ADD COLUMN revoked_at timestamptz;
ALTER TABLE player_tokens ALTER COLUMN expires_at DROP DEFAULT;

-- "Sign out everywhere" revokes every token of a player.
CREATE INDEX player_tokens_player ON player_tokens (player_id);

-- API keys of developers' backends (a key itself is never stored). Keys of
-- one name are one backend, so a key can be rotated: create a new one with
-- the same name, then revoke the old.
CREATE TABLE api_keys (
    id         text        PRIMARY KEY,
    name       text        NOT NULL,
    key_hash   bytea       NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

-- The players a backend created for its users: one per external id.
CREATE TABLE external_players (
    backend     text        NOT NULL,
    external_id text        NOT NULL,
    player_id   text        NOT NULL UNIQUE REFERENCES players (id),
    api_key_id  text        NOT NULL REFERENCES api_keys (id),
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (backend, external_id)
);
