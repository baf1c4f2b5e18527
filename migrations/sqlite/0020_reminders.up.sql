-- A turn's next reminder (unix microseconds): when it is due, the node
-- claims the match and writes the reminder's notice.
ALTER TABLE matches ADD COLUMN reminder_at INTEGER;
CREATE INDEX matches_reminder_at ON matches (reminder_at) WHERE status = 'active' AND reminder_at IS NOT NULL;
