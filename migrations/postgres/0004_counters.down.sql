-- Back to a column per statistic: the three counters of Aeroplane Chess
-- fill the columns again (zero where a row had none); any other counter is
-- lost with the tables. The columns come back at the end of their tables,
-- which every statement names explicitly.

ALTER TABLE match_results
    ADD COLUMN captures_made     integer NOT NULL DEFAULT 0,
    ADD COLUMN captures_suffered integer NOT NULL DEFAULT 0,
    ADD COLUMN planes_finished   integer NOT NULL DEFAULT 0;

UPDATE match_results r SET
    captures_made = c.captures_made,
    captures_suffered = c.captures_suffered,
    planes_finished = c.planes_finished
FROM (SELECT match_id, player_id,
        coalesce(sum(value) FILTER (WHERE counter = 'captures_made'), 0) AS captures_made,
        coalesce(sum(value) FILTER (WHERE counter = 'captures_suffered'), 0) AS captures_suffered,
        coalesce(sum(value) FILTER (WHERE counter = 'planes_finished'), 0) AS planes_finished
    FROM match_result_counters GROUP BY match_id, player_id) c
WHERE r.match_id = c.match_id AND r.player_id = c.player_id;

ALTER TABLE match_results
    ALTER COLUMN captures_made DROP DEFAULT,
    ALTER COLUMN captures_suffered DROP DEFAULT,
    ALTER COLUMN planes_finished DROP DEFAULT;

ALTER TABLE player_stats
    ADD COLUMN captures_made     integer NOT NULL DEFAULT 0,
    ADD COLUMN captures_suffered integer NOT NULL DEFAULT 0,
    ADD COLUMN planes_finished   integer NOT NULL DEFAULT 0;

UPDATE player_stats s SET
    captures_made = c.captures_made,
    captures_suffered = c.captures_suffered,
    planes_finished = c.planes_finished
FROM (SELECT player_id, game,
        coalesce(sum(value) FILTER (WHERE counter = 'captures_made'), 0) AS captures_made,
        coalesce(sum(value) FILTER (WHERE counter = 'captures_suffered'), 0) AS captures_suffered,
        coalesce(sum(value) FILTER (WHERE counter = 'planes_finished'), 0) AS planes_finished
    FROM player_counters GROUP BY player_id, game) c
WHERE s.player_id = c.player_id AND s.game = c.game;

ALTER TABLE player_stats
    ALTER COLUMN captures_made DROP DEFAULT,
    ALTER COLUMN captures_suffered DROP DEFAULT,
    ALTER COLUMN planes_finished DROP DEFAULT;

DROP TABLE player_counters;
DROP TABLE match_result_counters;
