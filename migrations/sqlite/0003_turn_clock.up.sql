-- The turn clock (unix microseconds): when it passes, the node claims the
-- match and plays the turn for the seat.
ALTER TABLE matches ADD COLUMN deadline INTEGER;
CREATE INDEX matches_deadline ON matches (deadline) WHERE status = 'active' AND deadline IS NOT NULL;
