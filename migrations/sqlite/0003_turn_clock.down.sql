DROP INDEX matches_deadline;
ALTER TABLE matches DROP COLUMN deadline;
