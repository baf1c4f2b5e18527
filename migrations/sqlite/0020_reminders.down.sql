DROP INDEX IF EXISTS matches_reminder_at;
ALTER TABLE matches DROP COLUMN reminder_at;
