-- A ticket may choose its match's clock and bot settings (EnqueueRequest:
-- turn_time, timeouts_before_bot, bot_level, time_control), or take the
-- server's defaults when it is matched. clock holds the settings as the
-- service encodes them; NULL: none chosen (and every ticket enqueued before).
ALTER TABLE tickets ADD COLUMN clock bytea;
