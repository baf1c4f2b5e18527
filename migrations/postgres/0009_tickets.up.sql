-- The matchmaking queue (store/tickets.go). A ticket is one player's
-- request for a match; tickets of one pool (the service's key of a game,
-- its options, the seat count and the rated flag) may share a match. A
-- node forming matches locks the pool's row (FOR UPDATE SKIP LOCKED), so
-- that it sees every waiting ticket of the pool while no other node forms
-- the same pool, and other nodes move on to other pools.
CREATE TABLE ticket_pools (
    pool text PRIMARY KEY
);

CREATE TABLE tickets (
    id            text             PRIMARY KEY,
    player_id     text             NOT NULL REFERENCES players (id),
    -- The player's display name when enqueued, for the match's seat.
    player_name   text             NOT NULL,
    request_id    text             NOT NULL,
    fingerprint   bytea            NOT NULL,
    game          text             NOT NULL,
    pool          text             NOT NULL REFERENCES ticket_pools (pool),
    options       bytea            NOT NULL,
    seats         integer          NOT NULL,
    rated         boolean          NOT NULL,
    bots_after_ms bigint           NOT NULL,
    keep_waiting  boolean          NOT NULL,
    rating        double precision NOT NULL,
    status        text             NOT NULL,
    version       bigint           NOT NULL,
    created_at    timestamptz      NOT NULL,
    updated_at    timestamptz      NOT NULL,
    -- The match of a formed or matched ticket, and its seat there.
    match_id      text,
    seat          integer,
    UNIQUE (player_id, request_id)
);

-- A player has at most one ticket in the queue.
CREATE UNIQUE INDEX tickets_open ON tickets (player_id) WHERE status IN ('waiting', 'formed');
-- A pool's waiting tickets, oldest first.
CREATE INDEX tickets_waiting ON tickets (pool, created_at, id) WHERE status = 'waiting';
CREATE INDEX tickets_match ON tickets (match_id) WHERE match_id IS NOT NULL;

-- The groups formed whose match is not made yet: the forming node holds a
-- group until lease_until; after it another node claims the group and
-- makes its match (the same id: making it is idempotent).
CREATE TABLE ticket_groups (
    match_id    text        PRIMARY KEY,
    lease_until timestamptz NOT NULL
);
CREATE INDEX ticket_groups_lease ON ticket_groups (lease_until);
