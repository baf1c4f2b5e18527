DROP INDEX IF EXISTS matches_active_game;
