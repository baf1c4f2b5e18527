-- Statistics become the games' own named counters: one row per counter
-- instead of a column per statistic, so that the schema names no game.
-- A counter with no row is zero; the ending transaction writes no zero.

-- The counters of a player's seat in an ended match (beside its
-- match_results row, same key and more).
CREATE TABLE match_result_counters (
    match_id  text   NOT NULL,
    player_id text   NOT NULL,
    counter   text   NOT NULL,
    value     bigint NOT NULL,
    PRIMARY KEY (match_id, player_id, counter)
);

-- The sums of a player's counters per game (beside its player_stats row),
-- advanced by each match the player ends.
CREATE TABLE player_counters (
    player_id text   NOT NULL,
    game      text   NOT NULL,
    counter   text   NOT NULL,
    value     bigint NOT NULL,
    PRIMARY KEY (player_id, game, counter)
);

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

ALTER TABLE match_results
    DROP COLUMN captures_made,
    DROP COLUMN captures_suffered,
    DROP COLUMN planes_finished;

ALTER TABLE player_stats
    DROP COLUMN captures_made,
    DROP COLUMN captures_suffered,
    DROP COLUMN planes_finished;
