-- A deleted player (store.Deletions): its row stays as a tombstone, so that
-- the matches it sat in keep their seats and replay; its name is replaced
-- (store.DeletedName) and what was its own is erased. The partial index
-- lists the deleted players by time of deletion: every node loads them
-- when it starts, and the latest at each re-check of its sessions, to
-- show their names as store.DeletedName.
ALTER TABLE players ADD COLUMN deleted_at timestamptz;
CREATE INDEX players_deleted ON players (deleted_at) WHERE deleted_at IS NOT NULL;
