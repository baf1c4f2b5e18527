-- The matches in play by game (the hangar_matches_in_play gauge, read at
-- every scrape): an index-only scan of the active matches.
CREATE INDEX matches_active_game ON matches (game) WHERE status = 'active';
