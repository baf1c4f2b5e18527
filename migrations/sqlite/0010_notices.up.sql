-- The SQLite dialect of postgres/0010_notices.up.sql (times in
-- microseconds, bytea as BLOB). The one writer numbers the notices, so
-- notice_heads is only where the numbering stands, not a lock.
CREATE TABLE player_notices (
    player_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    match_id   TEXT    NOT NULL DEFAULT '',
    payload    BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (player_id, seq)
) WITHOUT ROWID;

CREATE TABLE notice_heads (
    player_id TEXT    NOT NULL PRIMARY KEY,
    seq       INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE notice_outbox (
    player_id TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    due_at    INTEGER NOT NULL,
    attempts  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (player_id, seq)
) WITHOUT ROWID;

CREATE INDEX notice_outbox_due ON notice_outbox (due_at);
