-- Private matches. private is chosen when a match is created and never
-- changes; invited_ids are the players a private match invited, grown by the
-- append of each invitation's event (the events are the record: these
-- columns let list and history queries leave out what a reader may not
-- see without folding a match).
ALTER TABLE matches ADD COLUMN private boolean NOT NULL DEFAULT false;
ALTER TABLE matches ADD COLUMN invited_ids text[] NOT NULL DEFAULT '{}';
