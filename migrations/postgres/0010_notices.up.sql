-- Each player's notice log (store/notices.go): what concerns the player
-- across its matches, numbered 1, 2, 3 … per player (seq), written in the
-- transaction of the match append that caused it. Never updated.
CREATE TABLE player_notices (
    player_id  text        NOT NULL,
    seq        bigint      NOT NULL,
    kind       text        NOT NULL,
    match_id   text        NOT NULL DEFAULT '',
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (player_id, seq)
);

-- The seq of each player's latest notice. An append that writes a player's
-- notices advances the player's row here, holding its lock to the commit
-- (the order of those locks: store/postgres/notices.go): appends numbering
-- one player's notices commit one after the other, so a reader never sees
-- notice n+1 before n.
CREATE TABLE notice_heads (
    player_id text   NOT NULL PRIMARY KEY,
    seq       bigint NOT NULL
);

-- The webhook outbox: one row per notice written for delivery and not yet
-- delivered, deleted on delivery. due_at is when it may be claimed (a
-- claim moves it to the end of its lease, a failure to the next retry).
CREATE TABLE notice_outbox (
    player_id  text        NOT NULL,
    seq        bigint      NOT NULL,
    due_at     timestamptz NOT NULL,
    attempts   integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (player_id, seq)
);

CREATE INDEX notice_outbox_due ON notice_outbox (due_at);
