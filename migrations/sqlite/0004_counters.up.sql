-- The SQLite dialect of postgres/0004_counters.up.sql: statistics become
-- the games' own named counters, a row per counter; a counter with no row is
-- zero.

CREATE TABLE match_result_counters (
    match_id  TEXT    NOT NULL,
    player_id TEXT    NOT NULL,
    counter   TEXT    NOT NULL,
    value     INTEGER NOT NULL,
    PRIMARY KEY (match_id, player_id, counter)
) WITHOUT ROWID;

CREATE TABLE player_counters (
    player_id TEXT    NOT NULL,
    game      TEXT    NOT NULL,
    counter   TEXT    NOT NULL,
    value     INTEGER NOT NULL,
    PRIMARY KEY (player_id, game, counter)
) WITHOUT ROWID;

-- Aeroplane Chess's three statistics, the only ones kept so far, move into
-- counters of the same names, figure for figure (zeros are no rows).
INSERT INTO match_result_counters (match_id, player_id, counter, value)
SELECT match_id, player_id, 'captures_made', captures_made FROM match_results WHERE captures_made <> 0
UNION ALL
SELECT match_id, player_id, 'captures_suffered', captures_suffered FROM match_results WHERE captures_suffered <> 0
UNION ALL
SELECT match_id, player_id, 'planes_finished', planes_finished FROM match_results WHERE planes_finished <> 0;

INSERT INTO player_counters (player_id, game, counter, value)
SELECT player_id, game, 'captures_made', captures_made FROM player_stats WHERE captures_made <> 0
UNION ALL
SELECT player_id, game, 'captures_suffered', captures_suffered FROM player_stats WHERE captures_suffered <> 0
UNION ALL
SELECT player_id, game, 'planes_finished', planes_finished FROM player_stats WHERE planes_finished <> 0;

ALTER TABLE match_results DROP COLUMN captures_made;
ALTER TABLE match_results DROP COLUMN captures_suffered;
ALTER TABLE match_results DROP COLUMN planes_finished;

ALTER TABLE player_stats DROP COLUMN captures_made;
ALTER TABLE player_stats DROP COLUMN captures_suffered;
ALTER TABLE player_stats DROP COLUMN planes_finished;
