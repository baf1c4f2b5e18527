DROP TABLE rating_buckets;
