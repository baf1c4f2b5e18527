// Package store is the contract between Hangar's services and its event
// stores: the types a store keeps, the small interfaces it implements and
// the sentinel errors it returns. Implementations live in store/postgres
// (production) and store/sqlite (the embedded default); store/storetest is
// the conformance suite every implementation passes.
//
// A match is one append-only stream of events numbered 1, 2, 3 … (its
// version). Every append names the version it expects the match to have;
// the store appends the events, advances the match's summary row and records
// the command's request id in one transaction, or does nothing at all.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors a store returns. Callers match them with errors.Is.
var (
	// ErrNotFound: no match, player, session or API key with that id (or
	// hash).
	ErrNotFound = errors.New("store: not found")
	// ErrVersionConflict: the match's version is not the expected one.
	ErrVersionConflict = errors.New("store: version conflict")
	// ErrExists: a player or match with that id already exists.
	ErrExists = errors.New("store: already exists")
	// ErrSuspended: the player is suspended (Operators.SuspendPlayer): it
	// gets no new token.
	ErrSuspended = errors.New("store: player suspended")
	// ErrDeleted: the player is deleted (Deletions.DeletePlayer): it gets
	// no new token.
	ErrDeleted = errors.New("store: player deleted")
	// ErrRequestMismatch: the request id was already used by this author on
	// this match for a different command.
	ErrRequestMismatch = errors.New("store: request id reused for a different command")
	// ErrQuota: an append's Quota is reached; nothing was written.
	ErrQuota = errors.New("store: quota reached")
)

// Status is a match's life-cycle state.
type Status string

// Match statuses.
const (
	StatusOpen      Status = "open"
	StatusActive    Status = "active"
	StatusFinished  Status = "finished"
	StatusAbandoned Status = "abandoned"
)

// Match is a match's summary row: what lists and schedulers read without
// folding events. The service owns Options and Summary (opaque bytes); the
// store indexes the other fields.
type Match struct {
	ID      string
	Game    string
	Status  Status
	Version int64
	Creator string
	// Players are the player ids holding a seat (for "my matches").
	Players []string
	// FreeSeats is the number of empty seats (open lobbies list only > 0).
	FreeSeats int
	// BotTurn is true while a server-side bot must act next.
	BotTurn bool
	// Deadline is when the match's turn clock fires (zero: no clock). Some
	// node claims it with Due once it has passed.
	Deadline time.Time
	// Reminder is when the next reminder of the turn is due (zero: none).
	// Some node claims it with DueReminders once it has passed. Append
	// writes it; it is not read back.
	Reminder time.Time
	// Private keeps the match from readers other than its creator, its
	// Players and its Invited players (Query.Viewer, HistoryQuery.Viewer).
	// It is written when the match is created and never changes.
	Private bool
	// Invited are the players invited to a private match.
	Invited []string
	Options []byte
	Summary []byte
	Created time.Time
	Started time.Time // zero until started
	Ended   time.Time // zero until ended
}

// Event is one stored event of a match.
type Event struct {
	Seq     int64
	Type    string
	Payload []byte
	Author  string
	Time    time.Time
}

// Command identifies the client command that produced an append, so that a
// retry is recognised: (match, Author, RequestID) is unique, and Fingerprint
// tells a true retry from a different command reusing the id.
type Command struct {
	Author      string
	RequestID   string
	Fingerprint []byte
}

// Append is one atomic write: the events of one command and the match row
// as it stands after them.
type Append struct {
	// Match is the summary row after the append; Match.Version must equal
	// Expected + len(Events).
	Match Match
	// Expected is the version the match must have; 0 creates the match.
	Expected int64
	Command  Command
	// Events are numbered Expected+1 … by the store; their Seq, Author and
	// Time fields are ignored.
	Events []Event
	// Time stamps the events.
	Time time.Time
	// End, set on the append that ends a started match, is its result: the
	// store writes it, the players' statistics and ratings (history.go) in
	// the same transaction as the events.
	End *MatchResult
	// Quota, when set, is checked in the append's transaction, so that it
	// holds for every node sharing the store: the append fails with
	// ErrQuota, writing nothing, when the player already has Quota.Limit
	// or more of the matches the quota counts. Concurrent quota appends of
	// one player are serialised, so exactly as many succeed as the quota
	// leaves room for. A retried command is answered (a Duplicate result,
	// or ErrRequestMismatch) whatever the count.
	Quota *Quota
	// Notices are written to their players' notice logs (notices.go) in
	// the append's transaction, numbered after each player's latest.
	Notices []Notice
}

// Quota bounds the matches of one kind that a player has created: those
// created by Player that are in status Status and, with BotOnly, have no
// player holding a seat (Match.Players is empty). The count is taken
// before the append, so the match an append moves into Status is not in
// it yet.
type Quota struct {
	Player  string
	Status  Status
	BotOnly bool
	Limit   int
}

// Result says where an append's events are.
type Result struct {
	First, Last int64
	// Duplicate is true when the command had already been applied: nothing
	// was written and First..Last are the original command's events.
	Duplicate bool
}

// Query selects matches, newest first.
type Query struct {
	Status Status // "" = any
	Game   string // "" = any
	// Player keeps matches where the player holds a seat or is the creator.
	Player string
	// OpenSeats keeps matches with at least one free seat.
	OpenSeats bool
	// BotTurn keeps matches where a bot must act.
	BotTurn bool
	// Viewer, when set, leaves out the private matches that player may not
	// see: those it neither created, nor holds a seat in, nor was invited
	// to.
	Viewer string
	// After is the cursor: only matches strictly older than it.
	After *Cursor
	Limit int
}

// Cursor is a position in the newest-first order of matches.
type Cursor struct {
	Created time.Time
	ID      string
}

// Player is a registered player.
type Player struct {
	ID          string
	DisplayName string
	Created     time.Time
}

// Log is the event log of matches.
type Log interface {
	// Append writes a.Events and the new match row atomically. It returns
	// ErrVersionConflict when the match is not at a.Expected (or, when
	// creating, ErrExists when the id is taken by another command),
	// ErrNotFound for an unknown match, ErrRequestMismatch when the request
	// id was used for another command, ErrQuota when a.Quota is reached,
	// and a Duplicate result for a retry.
	Append(ctx context.Context, a Append) (Result, error)
	// Command returns where the events of an already applied command are
	// (a Duplicate result), ErrRequestMismatch when the request id was used
	// for another command, or ErrNotFound when it was never applied.
	Command(ctx context.Context, matchID string, c Command) (Result, error)
	// Events returns up to limit events with seq > after, in order.
	Events(ctx context.Context, matchID string, after int64, limit int) ([]Event, error)
	// Match returns a match's summary row, or ErrNotFound.
	Match(ctx context.Context, id string) (Match, error)
	// Matches lists the matches q selects, newest first.
	Matches(ctx context.Context, q Query) ([]Match, error)
}

// Clocks hands out the turn clocks that have fired.
type Clocks interface {
	// Due claims up to limit active matches whose deadline is at or before
	// now: it moves their deadline to lease (a time after now), so no other
	// node claims them meanwhile, and returns them. Concurrent callers never
	// claim the same match. A claimant that dies loses the claim when the
	// lease passes.
	Due(ctx context.Context, now, lease time.Time, limit int) ([]Due, error)
}

// Reminders hands out the turns' reminders that are due (Match.Reminder)
// and records each one's sending.
type Reminders interface {
	// DueReminders claims up to limit active matches whose reminder is
	// due at or before now: it moves their reminder time to lease (a time
	// after now, to the microsecond), so no other node claims them
	// meanwhile, and returns them. Concurrent callers never claim the same
	// match. A claimant that dies loses the claim when the lease passes.
	DueReminders(ctx context.Context, now, lease time.Time, limit int) ([]Due, error)
	// Remind records a claimed reminder as handled, in one transaction:
	// it moves the match's reminder time to r.Next and writes r.Notice,
	// if any, to its player's notice log (and the outbox, with Deliver),
	// as Append writes notices. It returns ErrVersionConflict, writing
	// nothing, when the match is no longer at r.Version or the claim is no
	// longer r.Claim (it lapsed and another caller claimed the reminder).
	Remind(ctx context.Context, r Reminder) error
}

// Reminder is the handling of a claimed reminder (Reminders.Remind).
type Reminder struct {
	Match   string
	Version int64
	// Claim is the lease the reminder was claimed with.
	Claim time.Time
	// Next is when the turn's next reminder is due (zero: none).
	Next time.Time
	// Notice is the reminder's notice (nil: none is sent).
	Notice *Notice
	// Time stamps the notice.
	Time time.Time
}

// Due is a claimed match: its id and version when claimed.
type Due struct {
	ID      string
	Version int64
}

// Change says that a match reached a version or, with Player set, that a
// player's notice log reached seq Version (Match is then empty).
type Change struct {
	Match   string
	Player  string `json:",omitempty"`
	Version int64
	// Origin names the node that made the change, so that it can ignore
	// its own changes coming back.
	Origin string
}

// Feed carries changes between the nodes sharing a store. Delivery is best
// effort: a node must re-read the store after a gap.
type Feed interface {
	// Publish announces changes to every node (this one included).
	Publish(ctx context.Context, changes []Change) error
	// Listen calls onChange for each change published by any node, and
	// onGap after (re)connecting, when changes may have been missed. It
	// returns when ctx ends.
	Listen(ctx context.Context, onChange func(Change), onGap func()) error
}

// Players keeps players and hashes of their tokens.
type Players interface {
	// CreatePlayer stores p and its first token; ErrExists if the id or the
	// token hash is taken.
	CreatePlayer(ctx context.Context, p Player, t Token) error
	// Player returns a player by id, or ErrNotFound.
	Player(ctx context.Context, id string) (Player, error)
	// Session returns a token hash's session: its player and its expiry and
	// revocation times (expired and revoked sessions are returned too, for
	// the caller to tell them apart). ErrNotFound for an unknown hash.
	Session(ctx context.Context, tokenHash []byte) (Session, error)
	// Sessions returns the sessions of many token hashes at once, keyed by
	// string(hash), as Session would one by one; unknown hashes are left
	// out. It reads at most SessionPage hashes per statement.
	Sessions(ctx context.Context, tokenHashes [][]byte) (map[string]Session, error)
	// AddToken gives an existing player another token; ErrNotFound if there
	// is no such player, ErrExists if the hash is taken.
	AddToken(ctx context.Context, playerID string, t Token) error
}

// SessionPage is the most token hashes Players.Sessions looks up in one
// statement: a longer list is read a page at a time.
const SessionPage = 1000

// Sessions refreshes and revokes player tokens.
type Sessions interface {
	// RefreshToken replaces the session oldHash with t, in one transaction:
	// it stores t for the same player, cuts the old session's expiry to at
	// most graceEnd and records t as its successor (Session.ReplacedBy).
	// It returns the player's id; ErrNotFound when oldHash is not a live
	// session at t.Created (unknown, revoked or expired), ErrExists if t's
	// hash is taken.
	RefreshToken(ctx context.Context, oldHash []byte, t Token, graceEnd time.Time) (string, error)
	// RevokeToken revokes one session at time at and returns its player's
	// id; ErrNotFound when the hash is unknown or already revoked.
	RevokeToken(ctx context.Context, tokenHash []byte, at time.Time) (string, error)
	// RevokePlayerTokens revokes every session of a player not revoked yet
	// and returns how many it revoked (0 for an unknown player).
	RevokePlayerTokens(ctx context.Context, playerID string, at time.Time) (int, error)
	// DeleteEndedSessions deletes up to limit sessions that ended (expired,
	// or were revoked) before cutoff, and returns how many it deleted. One
	// call is one short transaction: a caller deleting many repeats it while
	// it deletes limit. A deleted session's token is then unknown
	// (ErrNotFound) rather than expired or revoked.
	DeleteEndedSessions(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// Token is a new bearer token as the store keeps it: a hash, never the
// token itself.
type Token struct {
	Hash    []byte
	Created time.Time
	Expires time.Time
}

// Session is a stored token: its player and validity.
type Session struct {
	Player  Player
	Created time.Time
	Expires time.Time
	Revoked time.Time // zero: not revoked
	// Suspended is when the player was suspended (zero: it is not).
	Suspended time.Time
	// ReplacedBy is the hash of the token a refresh replaced this one
	// with (nil: not refreshed): an open stream follows it.
	ReplacedBy []byte
}

// Valid reports whether the session may authenticate at now.
func (s Session) Valid(now time.Time) bool { return s.Revoked.IsZero() && now.Before(s.Expires) }

// APIKey is a server-to-server credential of a developer's backend. Keys of
// one Name are one backend: its external players (ExternalPlayer) are
// shared by the keys of that name, so a key can be rotated.
type APIKey struct {
	ID      string
	Name    string
	Created time.Time
	Revoked time.Time // zero: live
	// Scopes are what the key may do besides signing its backend's
	// players in (ScopeServer, ScopeAdmin).
	Scopes []string
}

// APIKeys keeps API keys (only their hashes) and the players their
// backends create.
type APIKeys interface {
	// CreateAPIKey stores k and the hash of its key; ErrExists if the id or
	// hash is taken.
	CreateAPIKey(ctx context.Context, k APIKey, keyHash []byte) error
	// APIKeys lists every key, revoked ones included, oldest first.
	APIKeys(ctx context.Context) ([]APIKey, error)
	// APIKeyByHash returns the key with that hash, revoked or not, or
	// ErrNotFound.
	APIKeyByHash(ctx context.Context, keyHash []byte) (APIKey, error)
	// RevokeAPIKey revokes a key at time at; ErrNotFound when there is no
	// such live key.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) error
	// ExternalPlayer finds the player of external user externalID of key
	// k's backend (its Name), creating it as p (recorded as made by k) when
	// there is none, and gives it the token t, in one transaction:
	// concurrent calls for one external id make one player. It returns the
	// player and whether it was created; ErrExists if p's id or t's hash is
	// taken, ErrSuspended if the player is suspended (no token is given).
	ExternalPlayer(ctx context.Context, k APIKey, externalID string, p Player, t Token) (Player, bool, error)
}

// Identities keeps the players of the users of trusted identity providers
// (OpenID Connect issuers), who call with the provider's tokens.
type Identities interface {
	// IdentityPlayer finds the player of the user subject of issuer,
	// creating it as p when there is none, in one transaction: concurrent
	// calls for one user make one player. It returns the player and
	// whether it was created; ErrExists if p's id is taken, ErrSuspended
	// or ErrDeleted if the user's player is suspended or deleted.
	IdentityPlayer(ctx context.Context, issuer, subject string, p Player) (Player, bool, error)
}

// Revocation says that sessions were revoked: one token's (TokenHash set)
// or every one of Player's.
type Revocation struct {
	Player    string
	TokenHash []byte
}

// RevocationFeed carries revocations between the nodes sharing a store,
// so that none keeps accepting a revoked token it has cached. Delivery is
// best effort: after a gap a node must forget what it cached.
type RevocationFeed interface {
	// PublishRevocation announces r to every node (this one included).
	PublishRevocation(ctx context.Context, r Revocation) error
	// ListenRevocations calls onRevoke for each revocation published by any
	// node, and onGap after (re)connecting, when some may have been missed.
	// It returns when ctx ends.
	ListenRevocations(ctx context.Context, onRevoke func(Revocation), onGap func()) error
}

// Store is everything the service needs from one database.
type Store interface {
	Log
	Players
	Sessions
	APIKeys
	Identities
	Operators
	Deletions
	Clocks
	Reminders
	History
	Retention
	Queue
	Matchmaker
	Notices
	Outbox
	Chat
	Social
	Calendars
	Close() error
}
