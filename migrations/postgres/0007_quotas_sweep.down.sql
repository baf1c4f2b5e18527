DROP INDEX player_tokens_ended;
DROP INDEX matches_creator_bots;
DROP INDEX matches_creator_open;
