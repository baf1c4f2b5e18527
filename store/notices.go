package store

import (
	"context"
	"time"
)

// This file is the contract of the players' notice logs and of the outbox
// of their webhook deliveries.
//
// A notice tells one player of something that concerns them in a match
// (their turn, a start, an end, an invitation). It is written by the append
// whose events caused it (Append.Notices), in the same transaction, so a
// notice exists exactly when its events do. Each player's notices are
// numbered 1, 2, 3 … (Notice.Seq) in commit order: an append that writes a
// player's notices serialises with every other append writing that
// player's, so a reader that has seen notice n never later finds a new
// notice below n. A reader resuming after n (Notices) thus neither skips
// nor repeats one.
//
// A notice written with Deliver is also queued in the outbox, until a
// delivery worker reports it delivered: the outbox is at-least-once, its
// rows claimed by one worker at a time (on Postgres, several nodes share
// it with FOR UPDATE SKIP LOCKED).

// Notice is one entry of a player's notice log.
type Notice struct {
	Player string
	// Seq is the notice's number in the player's log, set by the store
	// (ignored in Append.Notices).
	Seq int64
	// Kind names the notice's kind, for the service (opaque to the store).
	Kind string
	// Match is the match the notice is about.
	Match   string
	Payload []byte
	// Time is the time of the append that wrote it (ignored in
	// Append.Notices: Append.Time is used).
	Time time.Time
	// Deliver queues the notice in the outbox of webhook deliveries
	// (Append.Notices only; not read back).
	Deliver bool
}

// NoticePage is the most notices Notices returns at once.
const NoticePage = 1000

// Notices reads the players' notice logs.
type Notices interface {
	// Notices returns up to limit (at most NoticePage) notices of player
	// with seq > after, in seq order.
	Notices(ctx context.Context, player string, after int64, limit int) ([]Notice, error)
	// LatestNotice returns the seq of player's latest notice, 0 when it
	// has none.
	LatestNotice(ctx context.Context, player string) (int64, error)
}

// NoticeKey names one notice.
type NoticeKey struct {
	Player string
	Seq    int64
}

// Delivery is a notice claimed from the outbox.
type Delivery struct {
	Notice Notice
	// Attempts counts the claims of the notice, this one included.
	Attempts int
}

// Outbox queues the notices to deliver to a webhook (Notice.Deliver).
type Outbox interface {
	// ClaimDeliveries claims up to limit queued notices due at or before
	// now, oldest due first: it moves their due time to lease (a time
	// after now), so that no other caller claims them meanwhile, counts an
	// attempt and returns them. Concurrent callers never claim the same
	// notice. A claimant that dies loses the claim when the lease passes.
	ClaimDeliveries(ctx context.Context, now, lease time.Time, limit int) ([]Delivery, error)
	// Delivered takes delivered notices out of the outbox; keys no longer
	// queued are ignored.
	Delivered(ctx context.Context, keys []NoticeKey) error
	// RetryDelivery makes a queued notice due again at due (a delivery
	// failed); a key no longer queued is ignored.
	RetryDelivery(ctx context.Context, key NoticeKey, due time.Time) error
}
