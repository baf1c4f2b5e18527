-- Match history, player statistics and ratings: summary tables written by the
-- append that ends a started match, in its transaction. Queries read these
-- (and matches for a match's summary row), never the event log.

-- One row per player (never a bot) per ended match, newest ended first per
-- player. seats is how many seats were in play; played_us the player's time
-- in the game in microseconds.
CREATE TABLE match_results (
    match_id          text        NOT NULL,
    player_id         text        NOT NULL,
    game              text        NOT NULL,
    ended_at          timestamptz NOT NULL,
    seat              integer     NOT NULL,
    place             integer     NOT NULL,
    seats             integer     NOT NULL,
    result            text        NOT NULL,
    forfeited         boolean     NOT NULL,
    captures_made     integer     NOT NULL,
    captures_suffered integer     NOT NULL,
    planes_finished   integer     NOT NULL,
    played_us         bigint      NOT NULL,
    rated             boolean     NOT NULL,
    PRIMARY KEY (match_id, player_id)
);

-- A player's history, and the same narrowed to a game or a result.
CREATE INDEX match_results_player ON match_results (player_id, ended_at DESC, match_id DESC);
CREATE INDEX match_results_player_game ON match_results (player_id, game, ended_at DESC, match_id DESC);
CREATE INDEX match_results_player_result ON match_results (player_id, result, ended_at DESC, match_id DESC);

-- Head to head: one row per ordered pair of players of an ended match.
CREATE TABLE match_opponents (
    player_id   text        NOT NULL,
    opponent_id text        NOT NULL,
    ended_at    timestamptz NOT NULL,
    match_id    text        NOT NULL,
    PRIMARY KEY (player_id, opponent_id, ended_at, match_id)
);

-- A player's statistics per game, advanced by each match the player ends.
-- place_n counts the matches ended in place n.
CREATE TABLE player_stats (
    player_id          text        NOT NULL,
    game               text        NOT NULL,
    played             integer     NOT NULL,
    won                integer     NOT NULL,
    place_1            integer     NOT NULL,
    place_2            integer     NOT NULL,
    place_3            integer     NOT NULL,
    place_4            integer     NOT NULL,
    place_5            integer     NOT NULL,
    place_6            integer     NOT NULL,
    place_sum          integer     NOT NULL,
    forfeits           integer     NOT NULL,
    captures_made      integer     NOT NULL,
    captures_suffered  integer     NOT NULL,
    planes_finished    integer     NOT NULL,
    win_streak         integer     NOT NULL,
    longest_win_streak integer     NOT NULL,
    played_us          bigint      NOT NULL,
    last_ended_at      timestamptz NOT NULL,
    PRIMARY KEY (player_id, game)
);

-- A player's current rating per game (Weng-Lin Plackett-Luce; score is the
-- leaderboard's order, mu - 3 sigma). The leaderboard index is in the order
-- of the leaderboard, so a page is a range of it and a rank is a count of it.
CREATE TABLE ratings (
    game       text             NOT NULL,
    player_id  text             NOT NULL,
    mu         double precision NOT NULL,
    sigma      double precision NOT NULL,
    score      double precision NOT NULL,
    matches    integer          NOT NULL,
    updated_at timestamptz      NOT NULL,
    PRIMARY KEY (game, player_id)
);

CREATE INDEX ratings_leaderboard ON ratings (game, score DESC, player_id DESC);

-- Every rated match's change to a player's rating, newest first.
CREATE TABLE rating_history (
    player_id      text             NOT NULL,
    game           text             NOT NULL,
    ended_at       timestamptz      NOT NULL,
    match_id       text             NOT NULL,
    mu_before      double precision NOT NULL,
    sigma_before   double precision NOT NULL,
    score_before   double precision NOT NULL,
    matches_before integer          NOT NULL,
    mu             double precision NOT NULL,
    sigma          double precision NOT NULL,
    score          double precision NOT NULL,
    place          integer          NOT NULL,
    seats          integer          NOT NULL,
    PRIMARY KEY (player_id, game, ended_at, match_id)
);
