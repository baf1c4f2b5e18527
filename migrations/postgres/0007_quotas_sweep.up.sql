-- The match quotas are counted in the append's transaction
-- (store.Append.Quota): a player's open lobbies, and its bot-only matches
-- in play (no player in a seat). These partial indexes hold exactly the
-- rows counted, so a count reads about a quota's worth of entries however
-- many matches the player created before. (The queries name the status
-- and the empty seat list as literals, so that every plan, generic ones
-- included, can use them.)
CREATE INDEX matches_creator_open ON matches (creator_id) WHERE status = 'open';
CREATE INDEX matches_creator_bots ON matches (creator_id) WHERE status = 'active' AND player_ids = '{}';

-- The token sweep deletes the sessions that ended (expired, or were
-- revoked) before a cutoff, in batches: this index finds them without
-- reading the live ones. LEAST ignores a NULL revoked_at.
CREATE INDEX player_tokens_ended ON player_tokens (LEAST(expires_at, revoked_at));
