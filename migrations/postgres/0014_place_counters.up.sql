-- The place counts become counters, so that a game may have any number of
-- places: place_n of player_stats moves into player_counters as the counter
-- "place:n" (store.PlaceCounter), figure for figure (zeros are no rows).
-- The colon keeps these names apart from a game's own, which are
-- lower_snake_case. place_sum stays a column: no number of places caps it,
-- and the average place (place_sum / played) reads it without summing the
-- counters.

INSERT INTO player_counters (player_id, game, counter, value)
SELECT player_id, game, 'place:1', place_1 FROM player_stats WHERE place_1 <> 0
UNION ALL
SELECT player_id, game, 'place:2', place_2 FROM player_stats WHERE place_2 <> 0
UNION ALL
SELECT player_id, game, 'place:3', place_3 FROM player_stats WHERE place_3 <> 0
UNION ALL
SELECT player_id, game, 'place:4', place_4 FROM player_stats WHERE place_4 <> 0
UNION ALL
SELECT player_id, game, 'place:5', place_5 FROM player_stats WHERE place_5 <> 0
UNION ALL
SELECT player_id, game, 'place:6', place_6 FROM player_stats WHERE place_6 <> 0;

ALTER TABLE player_stats
    DROP COLUMN place_1,
    DROP COLUMN place_2,
    DROP COLUMN place_3,
    DROP COLUMN place_4,
    DROP COLUMN place_5,
    DROP COLUMN place_6;
