-- A command's events in one row: an append writes one row (one heap tuple,
-- one index entry, one WAL record) for all its events rather than one per
-- event, which was about 5 µs of Postgres a row (BENCHMARKS.md). The row
-- holds events first_seq … last_seq, types[i] and payloads[i] being event
-- first_seq + i - 1's; every event of a run has the run's author and time.
-- Runs of a match neither overlap nor leave gaps, so the runs holding the
-- events after seq n are those with last_seq > n, a range of the key. The
-- store writes both arrays from the append's events, of their length; a
-- CHECK saying so cost Postgres about 7 µs an append in batches of four
-- (its expression is read back from the catalog for every statement).
CREATE TABLE match_event_runs (
    match_id   text        NOT NULL,
    last_seq   bigint      NOT NULL,
    first_seq  bigint      NOT NULL,
    types      text[]      NOT NULL,
    payloads   bytea[]     NOT NULL,
    author_id  text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (match_id, last_seq)
);

-- The events written before: a run of one each.
INSERT INTO match_event_runs (match_id, last_seq, first_seq, types, payloads, author_id, created_at)
SELECT match_id, seq, seq, ARRAY[type], ARRAY[payload], author_id, created_at FROM match_events;

DROP TABLE match_events;
