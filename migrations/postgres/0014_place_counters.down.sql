-- Back to a column per place: the counters "place:1" to "place:6" fill
-- place_1 to place_6 again (zero where a player had none), and every place
-- counter leaves player_counters. The counts of places above 6 are lost:
-- no column holds them. place_sum still counts those places, so the average
-- place stays right, but place_1 to place_6 then sum to less than played.
-- The columns come back at the end of the table, which every statement
-- names explicitly.

ALTER TABLE player_stats
    ADD COLUMN place_1 integer NOT NULL DEFAULT 0,
    ADD COLUMN place_2 integer NOT NULL DEFAULT 0,
    ADD COLUMN place_3 integer NOT NULL DEFAULT 0,
    ADD COLUMN place_4 integer NOT NULL DEFAULT 0,
    ADD COLUMN place_5 integer NOT NULL DEFAULT 0,
    ADD COLUMN place_6 integer NOT NULL DEFAULT 0;

UPDATE player_stats s SET
    place_1 = c.place_1,
    place_2 = c.place_2,
    place_3 = c.place_3,
    place_4 = c.place_4,
    place_5 = c.place_5,
    place_6 = c.place_6
FROM (SELECT player_id, game,
        coalesce(sum(value) FILTER (WHERE counter = 'place:1'), 0) AS place_1,
        coalesce(sum(value) FILTER (WHERE counter = 'place:2'), 0) AS place_2,
        coalesce(sum(value) FILTER (WHERE counter = 'place:3'), 0) AS place_3,
        coalesce(sum(value) FILTER (WHERE counter = 'place:4'), 0) AS place_4,
        coalesce(sum(value) FILTER (WHERE counter = 'place:5'), 0) AS place_5,
        coalesce(sum(value) FILTER (WHERE counter = 'place:6'), 0) AS place_6
    FROM player_counters WHERE counter LIKE 'place:%' GROUP BY player_id, game) c
WHERE s.player_id = c.player_id AND s.game = c.game;

ALTER TABLE player_stats
    ALTER COLUMN place_1 DROP DEFAULT,
    ALTER COLUMN place_2 DROP DEFAULT,
    ALTER COLUMN place_3 DROP DEFAULT,
    ALTER COLUMN place_4 DROP DEFAULT,
    ALTER COLUMN place_5 DROP DEFAULT,
    ALTER COLUMN place_6 DROP DEFAULT;

DELETE FROM player_counters WHERE counter LIKE 'place:%';
