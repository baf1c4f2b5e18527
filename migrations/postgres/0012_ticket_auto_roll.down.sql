ALTER TABLE tickets DROP COLUMN auto_roll;
