package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is the contract of the matchmaking queue. A ticket is one
// player's request for a match; it moves
//
//	waiting -> formed -> matched
//	waiting -> cancelled | expired
//
// Forming is two steps, so that a node that dies half-way neither loses
// players nor puts one in two matches. FormMatches records, in one
// transaction, which waiting tickets make a group and the id of the match
// they will play (status formed, with a lease held by the forming node).
// The node then creates that match through the ordinary write path
// (idempotently: a retry of the create finds the match made) and calls
// MatchTickets, which moves the group's tickets to matched. A group whose
// lease passes before that (its node died) is claimed by another node with
// ClaimFormed, which creates the same match, with the same id, and marks
// the tickets. A ticket belongs to one group, and a formed ticket is never
// formed again, so a player enqueued once is seated in one match.

// TicketStatus is where a ticket stands.
type TicketStatus string

// Ticket statuses.
const (
	TicketWaiting   TicketStatus = "waiting"
	TicketFormed    TicketStatus = "formed"
	TicketMatched   TicketStatus = "matched"
	TicketCancelled TicketStatus = "cancelled"
	TicketExpired   TicketStatus = "expired"
)

// Open reports whether a ticket with status st is still in the queue
// (waiting, or formed into a group whose match is being made).
func (st TicketStatus) Open() bool { return st == TicketWaiting || st == TicketFormed }

// ErrNotWaiting: the ticket has left the waiting queue (formed, matched,
// cancelled or expired), so it cannot be cancelled.
var ErrNotWaiting = errors.New("store: the ticket is not waiting")

// Ticket is one player's place in the matchmaking queue. The service owns
// Pool, Options and Fingerprint (opaque to the store); the store indexes
// the rest.
type Ticket struct {
	ID     string
	Player string
	// PlayerName is the player's display name when enqueued: the name its
	// seat gets.
	PlayerName string
	// RequestID and Fingerprint recognise a retried Enqueue: (Player,
	// RequestID) is unique.
	RequestID   string
	Fingerprint []byte
	Game        string
	// Pool names the tickets that may share a match (the service's key of
	// the game, its options, the seat count and the rated flag).
	Pool    string
	Options []byte
	Seats   int
	Rated   bool
	// AutoRoll is the retired platform auto_roll of a ticket stored before
	// it was a game's option (issue 51): the service folds it into the
	// ticket's options when it reads one. The service never sets it now.
	AutoRoll bool
	// BotsAfter is how long the ticket waits before bots fill the seats no
	// player took; KeepWaiting tickets never get bots.
	BotsAfter   time.Duration
	KeepWaiting bool
	// Clock is the match's clock and bot settings the ticket chose, as the
	// service encodes them (nil: none chosen; the server's defaults apply).
	Clock []byte
	// Rating is what the ticket is matched by.
	Rating float64
	Status TicketStatus
	// Version counts the ticket's changes: 1 when enqueued.
	Version int64
	Created time.Time
	// Updated is the time of the latest change (when the ticket left the
	// queue, for an ended one).
	Updated time.Time
	// Match and Seat are the match of a formed or matched ticket and the
	// seat it takes there.
	Match string
	Seat  int
}

// Group is a match formed from waiting tickets: their ids and the seat each
// takes (Seats[i] is Tickets[i]'s). Seats no ticket takes are bots'.
type Group struct {
	Match   string
	Tickets []string
	Seats   []int
}

// Formation is what a pass of the matchmaker decides about one pool's
// waiting tickets: the groups it forms and the tickets that expire.
type Formation struct {
	Groups  []Group
	Expired []string
}

// FormFunc decides on the waiting tickets of one pool, oldest first.
type FormFunc func(pool string, waiting []Ticket) (Formation, error)

// Queue keeps the players' tickets.
type Queue interface {
	// Enqueue stores t as a waiting ticket (version 1) and returns it with
	// created true. When (t.Player, t.RequestID) names a ticket already, it
	// returns that ticket, whatever its status, with created false, or
	// ErrRequestMismatch when the fingerprints differ. When the player has
	// an open ticket (Status.Open), it returns that ticket and ErrExists
	// (also ErrExists, with a zero Ticket, when t.ID is taken).
	Enqueue(ctx context.Context, t Ticket) (Ticket, bool, error)
	// Ticket returns a ticket, or ErrNotFound.
	Ticket(ctx context.Context, id string) (Ticket, error)
	// Tickets returns the tickets with these ids that exist, in no order.
	Tickets(ctx context.Context, ids []string) ([]Ticket, error)
	// CancelTicket moves a waiting ticket to cancelled at time at and
	// returns it. A ticket cancelled already is returned as it is;
	// ErrNotWaiting when it is formed, matched or expired (with the
	// ticket), ErrNotFound when there is none.
	CancelTicket(ctx context.Context, id string, at time.Time) (Ticket, error)
}

// Matchmaker forms matches from the queue. Every node may call it at once.
type Matchmaker interface {
	// FormMatches calls form once for each pool with waiting tickets that
	// no concurrent caller is forming (it skips those), with up to limit of
	// its waiting tickets, oldest first, and records its decision in the
	// same transaction: each group's tickets become formed, with the
	// group's match and their seats and a lease until lease; expired ones
	// expire. A ticket is cancelled or formed, never both: a decision on a
	// ticket cancelled while form ran is dropped and the pool decided
	// again (form may be called more than once for a pool). It returns
	// every ticket it changed. An error of form, or a group naming a ticket
	// that was not among the waiting or twice, rolls back that pool's
	// decision.
	FormMatches(ctx context.Context, now, lease time.Time, limit int, form FormFunc) ([]Ticket, error)
	// ClaimFormed claims up to limit groups whose lease is at or before
	// now, moving their lease to lease, and returns their tickets ordered
	// by match and seat. Concurrent callers never claim the same group.
	ClaimFormed(ctx context.Context, now, lease time.Time, limit int) ([]Ticket, error)
	// MatchTickets moves the formed tickets of match to matched at time at
	// and ends the group's lease. It returns the tickets it moved: none
	// when they were moved already.
	MatchTickets(ctx context.Context, match string, at time.Time) ([]Ticket, error)
}

// CheckFormation checks f against the waiting tickets it was decided on
// and lays its groups out as columns: ticket ids, their matches and seats,
// and the groups' match ids. It refuses an empty group, a group without a
// match id or with a seat per ticket missing, and a ticket that is not
// among waiting or appears twice (in groups or expired), so that stores
// write nothing of such a decision.
func CheckFormation(f Formation, waiting []Ticket) (ids, matches []string, seats []int32, groups []string, err error) {
	known := make(map[string]bool, len(waiting))
	for _, t := range waiting {
		known[t.ID] = true
	}
	used := make(map[string]bool)
	use := func(id string) error {
		if !known[id] {
			return fmt.Errorf("store: formation: ticket %q is not waiting in the pool", id)
		}
		if used[id] {
			return fmt.Errorf("store: formation: ticket %q is decided on twice", id)
		}
		used[id] = true
		return nil
	}
	seen := make(map[string]bool)
	for _, g := range f.Groups {
		if g.Match == "" || len(g.Tickets) == 0 || len(g.Tickets) != len(g.Seats) || seen[g.Match] {
			return nil, nil, nil, nil, fmt.Errorf("store: formation: a bad group (match %q, %d tickets, %d seats)", g.Match, len(g.Tickets), len(g.Seats))
		}
		seen[g.Match] = true
		groups = append(groups, g.Match)
		for i, id := range g.Tickets {
			if err := use(id); err != nil {
				return nil, nil, nil, nil, err
			}
			ids, matches, seats = append(ids, id), append(matches, g.Match), append(seats, int32(g.Seats[i]))
		}
	}
	for _, id := range f.Expired {
		if err := use(id); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return ids, matches, seats, groups, nil
}
