-- The SQLite dialect of postgres/0020_calendars.up.sql (times in
-- microseconds).
CREATE TABLE player_calendars (
    player_id TEXT NOT NULL PRIMARY KEY,
    time_zone TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE vacations (
    player_id  TEXT    NOT NULL,
    start_at   INTEGER NOT NULL,
    end_at     INTEGER NOT NULL,
    days       INTEGER NOT NULL,
    request_id TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (player_id, start_at)
) WITHOUT ROWID;
