-- The SQLite dialect of postgres/0001_init.up.sql: the same tables and
-- columns, with these differences:
--   * times are INTEGER microseconds since the Unix epoch (UTC): they sort
--     as times do and hold exactly what Postgres's timestamptz holds;
--   * player_ids is a JSON array (text), and match_members, kept by the
--     triggers below, indexes who takes part in a match (the seat holders and
--     the creator) in place of the GIN and creator indexes;
--   * booleans are INTEGER 0/1, bytea is BLOB.

-- Players and the hashes of their bearer tokens (a token itself is never stored).
CREATE TABLE players (
    id           TEXT    NOT NULL PRIMARY KEY,
    display_name TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);

CREATE TABLE player_tokens (
    token_hash BLOB    NOT NULL PRIMARY KEY,
    player_id  TEXT    NOT NULL REFERENCES players (id),
    created_at INTEGER NOT NULL
);

-- One row per match: the summary every append advances in the same
-- transaction that appends its events. version is the seq of the last event.
CREATE TABLE matches (
    id          TEXT    NOT NULL PRIMARY KEY,
    game        TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    creator_id  TEXT    NOT NULL,
    player_ids  TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(player_ids) = 'array'),
    free_seats  INTEGER NOT NULL DEFAULT 0,
    bot_turn    INTEGER NOT NULL DEFAULT 0,
    options     BLOB,
    summary     BLOB,
    created_at  INTEGER NOT NULL,
    started_at  INTEGER,
    ended_at    INTEGER
);

CREATE INDEX matches_newest ON matches (created_at DESC, id DESC);
CREATE INDEX matches_open ON matches (created_at DESC, id DESC) WHERE status = 'open' AND free_seats > 0;
CREATE INDEX matches_bot_turn ON matches (created_at DESC, id DESC) WHERE status = 'active' AND bot_turn;

-- Who takes part in a match, for "my matches" newest first: one row per
-- distinct seat holder or creator. created_at is the match's (it never
-- changes), so that the primary key yields a player's matches in order.
CREATE TABLE match_members (
    player_id  TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    match_id   TEXT    NOT NULL REFERENCES matches (id),
    PRIMARY KEY (player_id, created_at DESC, match_id DESC)
) WITHOUT ROWID;

CREATE INDEX match_members_match ON match_members (match_id);

CREATE TRIGGER matches_members_insert AFTER INSERT ON matches
BEGIN
    INSERT OR IGNORE INTO match_members (player_id, created_at, match_id)
    SELECT p, NEW.created_at, NEW.id
    FROM (SELECT value AS p FROM json_each(NEW.player_ids) UNION SELECT NEW.creator_id)
    WHERE p <> '';
END;

CREATE TRIGGER matches_members_update AFTER UPDATE OF player_ids, creator_id ON matches
WHEN OLD.player_ids IS NOT NEW.player_ids OR OLD.creator_id IS NOT NEW.creator_id
BEGIN
    DELETE FROM match_members WHERE match_id = NEW.id;
    INSERT OR IGNORE INTO match_members (player_id, created_at, match_id)
    SELECT p, NEW.created_at, NEW.id
    FROM (SELECT value AS p FROM json_each(NEW.player_ids) UNION SELECT NEW.creator_id)
    WHERE p <> '';
END;

-- The event log: never updated, never deleted. Keyed by match, as in Postgres.
CREATE TABLE match_events (
    match_id   TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    payload    BLOB    NOT NULL,
    author_id  TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (match_id, seq)
) WITHOUT ROWID;

-- Client commands already applied, for idempotent retries.
CREATE TABLE match_commands (
    match_id    TEXT    NOT NULL,
    author_id   TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    fingerprint BLOB    NOT NULL,
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    PRIMARY KEY (match_id, author_id, request_id)
) WITHOUT ROWID;
