-- A ticket may ask for an auto_roll match (EnqueueRequest.auto_roll): the
-- server rolls its seats' dice. Tickets enqueued before it did not.
ALTER TABLE tickets ADD COLUMN auto_roll boolean NOT NULL DEFAULT false;
