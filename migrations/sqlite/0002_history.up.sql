-- The SQLite dialect of postgres/0002_history.up.sql, with the differences of
-- 0001 (times are INTEGER microseconds, booleans INTEGER 0/1, double
-- precision is REAL); the tables whose primary key is their order are
-- WITHOUT ROWID.

CREATE TABLE match_results (
    match_id          TEXT    NOT NULL,
    player_id         TEXT    NOT NULL,
    game              TEXT    NOT NULL,
    ended_at          INTEGER NOT NULL,
    seat              INTEGER NOT NULL,
    place             INTEGER NOT NULL,
    seats             INTEGER NOT NULL,
    result            TEXT    NOT NULL,
    forfeited         INTEGER NOT NULL,
    captures_made     INTEGER NOT NULL,
    captures_suffered INTEGER NOT NULL,
    planes_finished   INTEGER NOT NULL,
    played_us         INTEGER NOT NULL,
    rated             INTEGER NOT NULL,
    PRIMARY KEY (match_id, player_id)
) WITHOUT ROWID;

CREATE INDEX match_results_player ON match_results (player_id, ended_at DESC, match_id DESC);
CREATE INDEX match_results_player_game ON match_results (player_id, game, ended_at DESC, match_id DESC);
CREATE INDEX match_results_player_result ON match_results (player_id, result, ended_at DESC, match_id DESC);

CREATE TABLE match_opponents (
    player_id   TEXT    NOT NULL,
    opponent_id TEXT    NOT NULL,
    ended_at    INTEGER NOT NULL,
    match_id    TEXT    NOT NULL,
    PRIMARY KEY (player_id, opponent_id, ended_at DESC, match_id DESC)
) WITHOUT ROWID;

CREATE TABLE player_stats (
    player_id          TEXT    NOT NULL,
    game               TEXT    NOT NULL,
    played             INTEGER NOT NULL,
    won                INTEGER NOT NULL,
    place_1            INTEGER NOT NULL,
    place_2            INTEGER NOT NULL,
    place_3            INTEGER NOT NULL,
    place_4            INTEGER NOT NULL,
    place_5            INTEGER NOT NULL,
    place_6            INTEGER NOT NULL,
    place_sum          INTEGER NOT NULL,
    forfeits           INTEGER NOT NULL,
    captures_made      INTEGER NOT NULL,
    captures_suffered  INTEGER NOT NULL,
    planes_finished    INTEGER NOT NULL,
    win_streak         INTEGER NOT NULL,
    longest_win_streak INTEGER NOT NULL,
    played_us          INTEGER NOT NULL,
    last_ended_at      INTEGER NOT NULL,
    PRIMARY KEY (player_id, game)
) WITHOUT ROWID;

CREATE TABLE ratings (
    game       TEXT    NOT NULL,
    player_id  TEXT    NOT NULL,
    mu         REAL    NOT NULL,
    sigma      REAL    NOT NULL,
    score      REAL    NOT NULL,
    matches    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (game, player_id)
) WITHOUT ROWID;

CREATE INDEX ratings_leaderboard ON ratings (game, score DESC, player_id DESC);

CREATE TABLE rating_history (
    player_id      TEXT    NOT NULL,
    game           TEXT    NOT NULL,
    ended_at       INTEGER NOT NULL,
    match_id       TEXT    NOT NULL,
    mu_before      REAL    NOT NULL,
    sigma_before   REAL    NOT NULL,
    score_before   REAL    NOT NULL,
    matches_before INTEGER NOT NULL,
    mu             REAL    NOT NULL,
    sigma          REAL    NOT NULL,
    score          REAL    NOT NULL,
    place          INTEGER NOT NULL,
    seats          INTEGER NOT NULL,
    PRIMARY KEY (player_id, game, ended_at DESC, match_id DESC)
) WITHOUT ROWID;
