package store

// EndedMatch is one finished match for a store's bulk load (LoadEnded in
// store/postgres and store/sqlite, which fill benchmark fixtures): the rows
// that the appends which played it, and the one that ended it, would have
// written.
type EndedMatch struct {
	// Match is the row after the last event.
	Match Match
	// Events are numbered from 1 in order (Seq is ignored); each keeps its
	// own Author and Time, which an append would have stamped.
	Events []Event
	// Result is the match's result; its Rate is not called, because
	// Ratings hold what it would have computed.
	Result MatchResult
	// Ratings are the changes of the rated seats; Before.Player names the
	// player.
	Ratings []RatingChange
}
