package postgres

// EndedQuery builds an archive run's listing, for the plan test.
var EndedQuery = endedQuery
