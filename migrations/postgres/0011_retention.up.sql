-- Retention (store.Retention): an archived match keeps its matches row, as
-- a tombstone marked with the time it was archived, and its results
-- (history, statistics and ratings read those); its events and command
-- records are deleted from the hot tables.
ALTER TABLE matches ADD COLUMN archived_at timestamptz;

-- The ended matches not archived yet, oldest ended first: what an archive
-- run lists, from its cutoff down, without reading the archived ones or
-- the matches in play. (The query names the statuses as literals, so that
-- every plan can use it.)
CREATE INDEX matches_to_archive ON matches (ended_at, id)
    WHERE archived_at IS NULL AND status IN ('finished', 'abandoned');
