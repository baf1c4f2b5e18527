DROP TRIGGER ratings_count_buckets ON ratings;
DROP FUNCTION count_rating_buckets();
DROP TABLE rating_buckets;
