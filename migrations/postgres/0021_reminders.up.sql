-- A turn's next reminder: when it is due, some node claims the match
-- (SKIP LOCKED) and writes the reminder's notice.
ALTER TABLE matches ADD COLUMN reminder_at timestamptz;
CREATE INDEX matches_reminder_at ON matches (reminder_at) WHERE status = 'active' AND reminder_at IS NOT NULL;
