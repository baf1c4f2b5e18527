CREATE TABLE match_events (
    match_id   text        NOT NULL,
    seq        bigint      NOT NULL,
    type       text        NOT NULL,
    payload    bytea       NOT NULL,
    author_id  text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (match_id, seq)
);

INSERT INTO match_events (match_id, seq, type, payload, author_id, created_at)
SELECT r.match_id, r.first_seq + e.i - 1, e.t, e.p, r.author_id, r.created_at
FROM match_event_runs AS r, unnest(r.types, r.payloads) WITH ORDINALITY AS e(t, p, i);

DROP TABLE match_event_runs;
