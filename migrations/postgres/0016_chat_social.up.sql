-- Match chat (store/chat.go): each match has two channels, numbered 1, 2,
-- 3 … each (seq). A post advances its channel's row in chat_heads, holding
-- its lock to the commit, so a channel's messages commit in seq order and
-- a reader that has seen n never later finds a new message below n.
CREATE TABLE chat_messages (
    match_id   text        NOT NULL,
    channel    text        NOT NULL,
    seq        bigint      NOT NULL,
    author_id  text        NOT NULL,
    body       text        NOT NULL,
    request_id text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (match_id, channel, seq)
);

-- A retried post (same author, same request id, same match) is found here.
CREATE UNIQUE INDEX chat_messages_request ON chat_messages (match_id, author_id, request_id)
    WHERE request_id <> '';

CREATE TABLE chat_heads (
    match_id text   NOT NULL,
    channel  text   NOT NULL,
    seq      bigint NOT NULL,
    PRIMARY KEY (match_id, channel)
);

-- A player's mutes in one match: muted_id's messages are not sent to
-- player_id.
CREATE TABLE chat_mutes (
    match_id  text NOT NULL,
    player_id text NOT NULL,
    muted_id  text NOT NULL,
    PRIMARY KEY (match_id, player_id, muted_id)
);

-- Reports of chat messages, for operators; one per reporter and message.
CREATE TABLE chat_reports (
    match_id    text        NOT NULL,
    channel     text        NOT NULL,
    seq         bigint      NOT NULL,
    reporter_id text        NOT NULL,
    reason      text        NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (match_id, channel, seq, reporter_id)
);

-- Friends and blocks (store/social.go). A pending request is one row; a
-- friendship is two, one per direction, so each player's list is one
-- index range.
CREATE TABLE friend_requests (
    from_id    text        NOT NULL,
    to_id      text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (from_id, to_id)
);

CREATE INDEX friend_requests_to ON friend_requests (to_id, from_id);

CREATE TABLE friends (
    player_id  text        NOT NULL,
    friend_id  text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (player_id, friend_id)
);

CREATE TABLE blocks (
    player_id  text        NOT NULL,
    blocked_id text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (player_id, blocked_id)
);

CREATE INDEX blocks_blocked ON blocks (blocked_id, player_id);

-- When each player was last seen by a node (a call, or a watch stream
-- held open): friends lists say who is online.
CREATE TABLE player_presence (
    player_id text        NOT NULL PRIMARY KEY,
    seen_at   timestamptz NOT NULL
);
