-- rating_buckets counts each game's ratings by score, a tenth of a point a
-- bucket (floor(score * 10)), so that a rank is the sum of the buckets
-- above a score plus a count within its own bucket, not a count of every
-- rating above it. Every write of ratings keeps it exact in the same
-- transaction (store/postgres/history.go).
CREATE TABLE rating_buckets (
    game    text    NOT NULL,
    bucket  integer NOT NULL,
    players bigint  NOT NULL,
    PRIMARY KEY (game, bucket)
);

INSERT INTO rating_buckets (game, bucket, players)
SELECT game, floor(score * 10)::integer, count(*) FROM ratings GROUP BY 1, 2;
