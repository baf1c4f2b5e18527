DROP TRIGGER ratings_count_update;
DROP TRIGGER ratings_count_delete;
DROP TRIGGER ratings_count_insert;
DROP TABLE rating_buckets;
