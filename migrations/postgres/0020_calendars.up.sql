-- Players' calendars (store/calendar.go): a player's time zone, and its
-- vacations, one row each, keyed by their start.
CREATE TABLE player_calendars (
    player_id text NOT NULL PRIMARY KEY,
    time_zone text NOT NULL
);

CREATE TABLE vacations (
    player_id  text        NOT NULL,
    start_at   timestamptz NOT NULL,
    end_at     timestamptz NOT NULL,
    days       integer     NOT NULL,
    request_id text        NOT NULL DEFAULT '',
    PRIMARY KEY (player_id, start_at)
);
