-- The SQLite dialect of postgres/0014_place_counters.down.sql: the counters
-- "place:1" to "place:6" fill their columns again (zero where a player had
-- none), and every place counter leaves player_counters. The counts of
-- places above 6 are lost: no column holds them (place_sum still counts
-- those places). SQLite adds a NOT NULL column only with a default, so the
-- columns keep DEFAULT 0.

ALTER TABLE player_stats ADD COLUMN place_1 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN place_2 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN place_3 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN place_4 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN place_5 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE player_stats ADD COLUMN place_6 INTEGER NOT NULL DEFAULT 0;

UPDATE player_stats SET
    place_1 = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'place:1'), 0),
    place_2 = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'place:2'), 0),
    place_3 = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'place:3'), 0),
    place_4 = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'place:4'), 0),
    place_5 = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'place:5'), 0),
    place_6 = coalesce((SELECT value FROM player_counters c WHERE c.player_id = player_stats.player_id
        AND c.game = player_stats.game AND c.counter = 'place:6'), 0);

DELETE FROM player_counters WHERE counter GLOB 'place:*';
