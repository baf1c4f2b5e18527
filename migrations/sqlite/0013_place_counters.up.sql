-- The SQLite dialect of postgres/0014_place_counters.up.sql: place_n of
-- player_stats moves into player_counters as the counter "place:n", so that
-- a game may have any number of places; place_sum stays.

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

ALTER TABLE player_stats DROP COLUMN place_1;
ALTER TABLE player_stats DROP COLUMN place_2;
ALTER TABLE player_stats DROP COLUMN place_3;
ALTER TABLE player_stats DROP COLUMN place_4;
ALTER TABLE player_stats DROP COLUMN place_5;
ALTER TABLE player_stats DROP COLUMN place_6;
