DROP TABLE match_commands;
DROP TABLE match_events;
DROP TRIGGER matches_members_update;
DROP TRIGGER matches_members_insert;
DROP TABLE match_members;
DROP TABLE matches;
DROP TABLE player_tokens;
DROP TABLE players;
