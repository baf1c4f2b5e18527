-- A deleted player (store.Deletions): its row stays as a tombstone, so that
-- the matches it sat in keep their seats and replay; its name is replaced
-- (store.DeletedName) and what was its own is erased. The partial index
-- lists the deleted players, which every node loads to show their names as
-- store.DeletedName.
ALTER TABLE players ADD COLUMN deleted_at timestamptz;
CREATE INDEX players_deleted ON players (id) WHERE deleted_at IS NOT NULL;
