-- The SQLite dialect of postgres/0015_ticket_clock.up.sql.
ALTER TABLE tickets ADD COLUMN clock BLOB;
