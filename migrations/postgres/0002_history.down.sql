DROP TABLE rating_history;
DROP TABLE ratings;
DROP TABLE player_stats;
DROP TABLE match_opponents;
DROP TABLE match_results;
