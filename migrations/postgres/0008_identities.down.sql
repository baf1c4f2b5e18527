DROP TABLE identity_players;
