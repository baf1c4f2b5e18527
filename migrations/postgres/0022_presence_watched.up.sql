-- watched_at: when a node last reported that the player holds a live
-- stream on it (NULL: no stream since the last one closed). The webhook
-- workers read it to skip a your-turn notice of a player whose app is open
-- on any node (--webhook-skip-present).
ALTER TABLE player_presence ADD COLUMN watched_at timestamptz;
