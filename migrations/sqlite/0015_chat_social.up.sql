-- The SQLite dialect of postgres/0015_chat_social.up.sql (times in
-- microseconds). The one writer numbers the messages, so chat_heads is
-- only where the numbering stands, not a lock.
CREATE TABLE chat_messages (
    match_id   TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    author_id  TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    request_id TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (match_id, channel, seq)
) WITHOUT ROWID;

CREATE UNIQUE INDEX chat_messages_request ON chat_messages (match_id, author_id, request_id)
    WHERE request_id <> '';

CREATE TABLE chat_heads (
    match_id TEXT    NOT NULL,
    channel  TEXT    NOT NULL,
    seq      INTEGER NOT NULL,
    PRIMARY KEY (match_id, channel)
) WITHOUT ROWID;

CREATE TABLE chat_mutes (
    match_id  TEXT NOT NULL,
    player_id TEXT NOT NULL,
    muted_id  TEXT NOT NULL,
    PRIMARY KEY (match_id, player_id, muted_id)
) WITHOUT ROWID;

CREATE TABLE chat_reports (
    match_id    TEXT    NOT NULL,
    channel     TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    reporter_id TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (match_id, channel, seq, reporter_id)
) WITHOUT ROWID;

CREATE TABLE friend_requests (
    from_id    TEXT    NOT NULL,
    to_id      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;

CREATE INDEX friend_requests_to ON friend_requests (to_id, from_id);

CREATE TABLE friends (
    player_id  TEXT    NOT NULL,
    friend_id  TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (player_id, friend_id)
) WITHOUT ROWID;

CREATE TABLE blocks (
    player_id  TEXT    NOT NULL,
    blocked_id TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (player_id, blocked_id)
) WITHOUT ROWID;

CREATE INDEX blocks_blocked ON blocks (blocked_id, player_id);

CREATE TABLE player_presence (
    player_id TEXT    NOT NULL PRIMARY KEY,
    seen_at   INTEGER NOT NULL
) WITHOUT ROWID;
