DROP INDEX matches_to_archive;
ALTER TABLE matches DROP COLUMN archived_at;
