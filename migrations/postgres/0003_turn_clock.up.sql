-- The turn clock: when it passes, some node claims the match (SKIP LOCKED)
-- and plays the turn for the seat.
ALTER TABLE matches ADD COLUMN deadline timestamptz;
CREATE INDEX matches_deadline ON matches (deadline) WHERE status = 'active' AND deadline IS NOT NULL;
