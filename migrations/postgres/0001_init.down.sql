DROP TABLE match_commands;
DROP TABLE match_events;
DROP TABLE matches;
DROP TABLE player_tokens;
DROP TABLE players;
