-- The SQLite dialect of postgres/0011_retention.up.sql: archived_at is
-- INTEGER microseconds, NULL while the match is not archived.
ALTER TABLE matches ADD COLUMN archived_at INTEGER;

CREATE INDEX matches_to_archive ON matches (ended_at, id)
    WHERE archived_at IS NULL AND status IN ('finished', 'abandoned');
