-- The SQLite dialect of postgres/0007_quotas_sweep.up.sql. player_ids is a
-- JSON array, '[]' when no player holds a seat. min() of several arguments
-- is NULL if any is, hence the coalesce; the sweep's query names the same
-- expression, so that SQLite uses the index.
CREATE INDEX matches_creator_open ON matches (creator_id) WHERE status = 'open';
CREATE INDEX matches_creator_bots ON matches (creator_id) WHERE status = 'active' AND player_ids = '[]';

CREATE INDEX player_tokens_ended ON player_tokens (min(expires_at, coalesce(revoked_at, expires_at)));
