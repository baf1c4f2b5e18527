DROP INDEX IF EXISTS matches_reminder_at;
ALTER TABLE matches DROP COLUMN IF EXISTS reminder_at;
