-- The SQLite dialect of postgres/0012_ticket_auto_roll.up.sql.
ALTER TABLE tickets ADD COLUMN auto_roll INTEGER NOT NULL DEFAULT 0;
