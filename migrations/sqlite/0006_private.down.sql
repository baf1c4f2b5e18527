ALTER TABLE matches DROP COLUMN invited_ids;
ALTER TABLE matches DROP COLUMN private;
