DROP TABLE player_presence;
DROP TABLE blocks;
DROP TABLE friends;
DROP TABLE friend_requests;
DROP TABLE chat_reports;
DROP TABLE chat_mutes;
DROP TABLE chat_heads;
DROP TABLE chat_messages;
