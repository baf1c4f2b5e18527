-- rating_buckets counts each game's ratings by score, a tenth of a point a
-- bucket (floor(score * 10)), so that a rank is the sum of the buckets
-- above a score plus a count within its own bucket, not a count of every
-- rating above it (store/postgres/history.go).
--
-- A trigger keeps it exact, whoever writes ratings: this release's nodes,
-- an older release's during a rolling upgrade, a bulk load, an operator.
-- It takes a lock per game before it changes a game's buckets, so that two
-- ends moving players between the same buckets in opposite orders wait for
-- each other instead of deadlocking; the rated ends of one game queue there
-- from their ratings write to their commit.
--
-- Writes to ratings wait while the buckets are counted, so that none is
-- missed between the count and the trigger.
LOCK TABLE ratings IN SHARE MODE;

CREATE TABLE rating_buckets (
    game    text    NOT NULL,
    bucket  integer NOT NULL,
    players bigint  NOT NULL,
    PRIMARY KEY (game, bucket)
);

INSERT INTO rating_buckets (game, bucket, players)
SELECT game, floor(score * 10)::integer, count(*) FROM ratings GROUP BY 1, 2;

CREATE FUNCTION count_rating_buckets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.game = NEW.game
        AND floor(OLD.score * 10)::integer = floor(NEW.score * 10)::integer THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('rating_buckets:' || OLD.game, 0));
        UPDATE rating_buckets SET players = players - 1
        WHERE game = OLD.game AND bucket = floor(OLD.score * 10)::integer;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('rating_buckets:' || NEW.game, 0));
        INSERT INTO rating_buckets AS b (game, bucket, players)
        VALUES (NEW.game, floor(NEW.score * 10)::integer, 1)
        ON CONFLICT (game, bucket) DO UPDATE SET players = b.players + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER ratings_count_buckets AFTER INSERT OR UPDATE OR DELETE ON ratings
FOR EACH ROW EXECUTE FUNCTION count_rating_buckets();
