-- The SQLite dialect of postgres/0008_identities.up.sql.
CREATE TABLE identity_players (
    issuer     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    player_id  TEXT    NOT NULL UNIQUE REFERENCES players (id),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
);
