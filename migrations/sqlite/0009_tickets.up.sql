-- The SQLite dialect of postgres/0009_tickets.up.sql. The one writer forms
-- matches alone: ticket_pools is kept for the same foreign key, not for
-- locking.
CREATE TABLE ticket_pools (
    pool TEXT NOT NULL PRIMARY KEY
);

CREATE TABLE tickets (
    id            TEXT    NOT NULL PRIMARY KEY,
    player_id     TEXT    NOT NULL REFERENCES players (id),
    player_name   TEXT    NOT NULL,
    request_id    TEXT    NOT NULL,
    fingerprint   BLOB    NOT NULL,
    game          TEXT    NOT NULL,
    pool          TEXT    NOT NULL REFERENCES ticket_pools (pool),
    options       BLOB    NOT NULL,
    seats         INTEGER NOT NULL,
    rated         INTEGER NOT NULL,
    bots_after_ms INTEGER NOT NULL,
    keep_waiting  INTEGER NOT NULL,
    rating        REAL    NOT NULL,
    status        TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    match_id      TEXT,
    seat          INTEGER,
    UNIQUE (player_id, request_id)
);

CREATE UNIQUE INDEX tickets_open ON tickets (player_id) WHERE status IN ('waiting', 'formed');
CREATE INDEX tickets_waiting ON tickets (pool, created_at, id) WHERE status = 'waiting';
CREATE INDEX tickets_match ON tickets (match_id) WHERE match_id IS NOT NULL;

CREATE TABLE ticket_groups (
    match_id    TEXT    NOT NULL PRIMARY KEY,
    lease_until INTEGER NOT NULL
);
CREATE INDEX ticket_groups_lease ON ticket_groups (lease_until);
