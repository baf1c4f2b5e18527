-- The SQLite dialect of postgres/0004_counters.down.sql: the three counters
-- of Aeroplane Chess fill their columns again (zero where a row had none);
-- any other counter is lost with the tables. SQLite adds a NOT NULL column
-- only with a default, so the columns keep DEFAULT 0.

ALTER TABLE match_results ADD COLUMN captures_made INTEGER NOT NULL DEFAULT 0;
ALTER TABLE match_results ADD COLUMN captures_suffered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE match_results ADD COLUMN planes_finished INTEGER NOT NULL DEFAULT 0;

UPDATE match_results SET
    captures_made = coalesce((SELECT value FROM match_result_counters c WHERE c.match_id = match_results.match_id
        AND c.player_id = match_results.player_id AND c.counter = 'captures_made'), 0),
    captures_suffered = coalesce((SELECT value FROM match_result_counters c WHERE c.match_id = match_results.match_id
        AND c.player_id = match_results.player_id AND c.counter = 'captures_suffered'), 0),
    planes_finished = coalesce((SELECT value FROM match_result_counters c WHERE c.match_id = match_results.match_id
        AND c.player_id = match_results.player_id AND c.counter = 'planes_finished'), 0);

ALTER TABLE player_stats ADD COLUMN captures_made INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN captures_suffered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN planes_finished INTEGER NOT NULL DEFAULT 0;

UPDATE player_stats SET
    captures_made = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'captures_made'), 0),
    captures_suffered = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'captures_suffered'), 0),
    planes_finished = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'planes_finished'), 0);

DROP TABLE player_counters;
DROP TABLE match_result_counters;
