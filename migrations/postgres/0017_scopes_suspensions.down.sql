-- Keys lose their scopes (they sign players in again, nothing more), and
-- suspended players can sign in again.
ALTER TABLE player_tokens DROP COLUMN replaced_by;
ALTER TABLE players DROP COLUMN suspended_at;
ALTER TABLE api_keys DROP COLUMN scopes;
