-- Players who sign in with a token of a trusted OpenID Connect provider
-- (hangar serve --oidc-issuer): one player per (issuer, subject), made on
-- the first call with such a token. The provider's tokens are never stored.
CREATE TABLE identity_players (
    issuer     text        NOT NULL,
    subject    text        NOT NULL,
    player_id  text        NOT NULL UNIQUE REFERENCES players (id),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, subject)
);
