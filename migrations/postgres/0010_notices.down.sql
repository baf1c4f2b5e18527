DROP TABLE notice_outbox;
DROP TABLE notice_heads;
DROP TABLE player_notices;
