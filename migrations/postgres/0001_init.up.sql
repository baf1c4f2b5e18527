-- Players and the hashes of their bearer tokens (a token itself is never stored).
CREATE TABLE players (
    id           text        PRIMARY KEY,
    display_name text        NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE TABLE player_tokens (
    token_hash bytea       PRIMARY KEY,
    player_id  text        NOT NULL REFERENCES players (id),
    created_at timestamptz NOT NULL
);

-- One row per match: the summary every append advances in the same
-- statement that appends its events. version is the seq of the last event.
CREATE TABLE matches (
    id          text        PRIMARY KEY,
    game        text        NOT NULL,
    status      text        NOT NULL,
    version     bigint      NOT NULL,
    creator_id  text        NOT NULL,
    player_ids  text[]      NOT NULL DEFAULT '{}',
    free_seats  integer     NOT NULL DEFAULT 0,
    bot_turn    boolean     NOT NULL DEFAULT false,
    options     bytea,
    summary     bytea,
    created_at  timestamptz NOT NULL,
    started_at  timestamptz,
    ended_at    timestamptz
);

CREATE INDEX matches_newest ON matches (created_at DESC, id DESC);
CREATE INDEX matches_open ON matches (created_at DESC, id DESC) WHERE status = 'open' AND free_seats > 0;
CREATE INDEX matches_player_ids ON matches USING gin (player_ids);
CREATE INDEX matches_creator ON matches (creator_id, created_at DESC, id DESC);
CREATE INDEX matches_bot_turn ON matches (id) WHERE status = 'active' AND bot_turn;

-- The event log: never updated, never deleted. Keyed by match so that it can
-- be partitioned by match_id later without rewriting queries.
CREATE TABLE match_events (
    match_id   text        NOT NULL,
    seq        bigint      NOT NULL,
    type       text        NOT NULL,
    payload    bytea       NOT NULL,
    author_id  text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (match_id, seq)
);

-- Client commands already applied, for idempotent retries.
CREATE TABLE match_commands (
    match_id    text   NOT NULL,
    author_id   text   NOT NULL,
    request_id  text   NOT NULL,
    fingerprint bytea  NOT NULL,
    first_seq   bigint NOT NULL,
    last_seq    bigint NOT NULL,
    PRIMARY KEY (match_id, author_id, request_id)
);
