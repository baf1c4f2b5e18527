-- The SQLite dialect of postgres/0015_matches_active_game.up.sql.
CREATE INDEX matches_active_game ON matches (game) WHERE status = 'active';
