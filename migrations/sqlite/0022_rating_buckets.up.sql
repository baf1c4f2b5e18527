-- rating_buckets counts each game's ratings by score, a tenth of a point a
-- bucket (floor(score * 10)), so that a rank is the sum of the buckets
-- above a score plus a count within its own bucket, not a count of every
-- rating above it (store/sqlite/history.go). Triggers keep it exact,
-- whoever writes ratings.
CREATE TABLE rating_buckets (
    game    TEXT    NOT NULL,
    bucket  INTEGER NOT NULL,
    players INTEGER NOT NULL,
    PRIMARY KEY (game, bucket)
) WITHOUT ROWID;

INSERT INTO rating_buckets (game, bucket, players)
SELECT game, CAST(floor(score * 10) AS INTEGER), count(*) FROM ratings GROUP BY 1, 2;

CREATE TRIGGER ratings_count_insert AFTER INSERT ON ratings BEGIN
    INSERT INTO rating_buckets (game, bucket, players)
    VALUES (NEW.game, CAST(floor(NEW.score * 10) AS INTEGER), 1)
    ON CONFLICT (game, bucket) DO UPDATE SET players = players + 1;
END;

CREATE TRIGGER ratings_count_delete AFTER DELETE ON ratings BEGIN
    UPDATE rating_buckets SET players = players - 1
    WHERE game = OLD.game AND bucket = CAST(floor(OLD.score * 10) AS INTEGER);
END;

CREATE TRIGGER ratings_count_update AFTER UPDATE OF game, score ON ratings BEGIN
    UPDATE rating_buckets SET players = players - 1
    WHERE game = OLD.game AND bucket = CAST(floor(OLD.score * 10) AS INTEGER);
    INSERT INTO rating_buckets (game, bucket, players)
    VALUES (NEW.game, CAST(floor(NEW.score * 10) AS INTEGER), 1)
    ON CONFLICT (game, bucket) DO UPDATE SET players = players + 1;
END;
