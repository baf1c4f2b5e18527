package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/sqlite"
)

func (c *client) mm() hangarv1.MatchmakingServiceClient {
	return hangarv1.NewMatchmakingServiceClient(c.conn)
}

// enqueue enqueues c in the Aeroplane Chess queue of seats seats.
func (c *client) enqueue(t testing.TB, req *hangarv1.EnqueueRequest) *hangarv1.Ticket {
	t.Helper()
	if req.Game == "" {
		req.Game = "aeroplane"
	}
	r, err := c.mm().Enqueue(c.ctx(), req)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if r.GetTicket().GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED || r.GetTicket().GetPlayerId() != c.id {
		t.Fatalf("Enqueue = %v", r.GetTicket())
	}
	return r.GetTicket()
}

func (c *client) ticket(t testing.TB, id string) *hangarv1.Ticket {
	t.Helper()
	r, err := c.mm().GetTicket(c.ctx(), &hangarv1.GetTicketRequest{TicketId: id})
	if err != nil {
		t.Fatalf("GetTicket: %v", err)
	}
	return r.GetTicket()
}

// awaitTicket polls c's ticket until it has status st.
func (c *client) awaitTicket(t testing.TB, id string, st hangarv1.TicketStatus) *hangarv1.Ticket {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tk := c.ticket(t, id)
		if tk.GetStatus() == st {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("ticket %s is %v after 30s, want %v", id, tk.GetStatus(), st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ticketWatch collects a WatchTicket stream until it ends.
type ticketWatch struct {
	mu   sync.Mutex
	got  []*hangarv1.Ticket
	done chan error
}

func watchTicket(ctx context.Context, c *client, id string) *ticketWatch {
	w := &ticketWatch{done: make(chan error, 1)}
	stream, err := c.mm().WatchTicket(ctx, &hangarv1.WatchTicketRequest{TicketId: id})
	if err != nil {
		w.done <- err
		return w
	}
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				w.done <- err
				return
			}
			w.mu.Lock()
			w.got = append(w.got, r.GetTicket())
			w.mu.Unlock()
		}
	}()
	return w
}

// wait waits for the stream to end and checks what it carried: the ticket
// first as it stood, no response twice in a row, the wait never going
// back, statuses only moving on, and its end after the last status.
func (w *ticketWatch) wait(t testing.TB, last hangarv1.TicketStatus) []*hangarv1.Ticket {
	t.Helper()
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatalf("WatchTicket: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("WatchTicket did not end")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.got) == 0 {
		t.Fatalf("WatchTicket sent nothing")
	}
	for i, tk := range w.got {
		if i == 0 {
			continue
		}
		prev := w.got[i-1]
		if proto.Equal(tk, prev) {
			t.Fatalf("WatchTicket sent %v twice in a row", tk)
		}
		// The last state's wait is the stored one, from the enqueue to the
		// match (or the end): it may be a little less than the last queued
		// report, taken from the node's clock before it learnt of the end.
		queued := tk.GetStatus() == hangarv1.TicketStatus_TICKET_STATUS_QUEUED
		if (queued && tk.GetWait().AsDuration() <= prev.GetWait().AsDuration()) || tk.GetStatus() < prev.GetStatus() {
			t.Fatalf("WatchTicket went back from %v to %v", prev, tk)
		}
		if prev.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED {
			t.Fatalf("WatchTicket went on after %v", prev.GetStatus())
		}
	}
	if got := w.got[len(w.got)-1].GetStatus(); got != last {
		t.Fatalf("WatchTicket ended with %v, want %v", got, last)
	}
	return slices.Clone(w.got)
}

func errorMetadata(err error) map[string]string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetMetadata()
		}
	}
	return nil
}

// quickMatcher forms matches every 20 ms.
func quickMatcher(cfg server.Config) server.Config {
	cfg.Service.Matchmaking.Tick = 20 * time.Millisecond
	cfg.Service.Matchmaking.Progress = 50 * time.Millisecond
	return cfg
}

// TestMatchmaking forms a four-seat and a two-seat match from the queue,
// each player watching its ticket from the start; checks the matches are
// ordinary started matches with the players seated; and covers one open
// ticket per player, retried enqueues and cancelling.
func TestMatchmaking(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, quickMatcher(cfg))
		var four, two []*client
		var fourT, twoT []*hangarv1.Ticket
		var watches []*ticketWatch
		for i := range 4 {
			c := newClient(t, n.Addr(), fmt.Sprint("Four ", i))
			four = append(four, c)
			tk := c.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, Rated: true, KeepWaiting: true, RequestId: "e1"})
			fourT = append(fourT, tk)
			watches = append(watches, watchTicket(c.ctx(), c, tk.GetTicketId()))
		}
		for i := range 2 {
			c := newClient(t, n.Addr(), fmt.Sprint("Two ", i))
			two = append(two, c)
			tk := c.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
			twoT = append(twoT, tk)
			watches = append(watches, watchTicket(c.ctx(), c, tk.GetTicketId()))
		}
		// Another game's queue: its own seats, its chance drawn at the start.
		var cc []*client
		var ct []*hangarv1.Ticket
		for i := range 3 {
			c := newClient(t, n.Addr(), fmt.Sprint("Tiles ", i))
			cc = append(cc, c)
			tk := c.enqueue(t, &hangarv1.EnqueueRequest{Game: "carcassonne", SeatCount: 3, KeepWaiting: true, Rated: true})
			ct = append(ct, tk)
			watches = append(watches, watchTicket(c.ctx(), c, tk.GetTicketId()))
		}
		for i, w := range watches {
			got := w.wait(t, hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
			last := got[len(got)-1]
			if last.GetEndTime() == nil || last.GetWindow() != 0 || last.GetRating() != 25 || last.GetMatchId() == "" {
				t.Errorf("watch %d ended with %v", i, last)
			}
		}
		for _, pool := range []struct {
			clients []*client
			tickets []*hangarv1.Ticket
			seats   int
			rated   bool
		}{{four, fourT, 4, true}, {two, twoT, 2, false}, {cc, ct, 3, true}} {
			var matchID string
			seated := map[int32]string{}
			for i, c := range pool.clients {
				tk := c.ticket(t, pool.tickets[i].GetTicketId())
				if tk.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_MATCHED || (matchID != "" && tk.GetMatchId() != matchID) {
					t.Fatalf("ticket %v", tk)
				}
				matchID = tk.GetMatchId()
				if _, dup := seated[tk.GetSeat()]; dup {
					t.Fatalf("two tickets of seat %d", tk.GetSeat())
				}
				seated[tk.GetSeat()] = c.id
			}
			m := pool.clients[0].get(t, matchID)
			if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || len(m.GetSeats()) != pool.seats || m.GetCreatorId() != "" ||
				m.GetUnrated() == pool.rated {
				t.Fatalf("match %v", m)
			}
			for _, st := range m.GetSeats() {
				if st.GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_PLAYER || seated[st.GetSeat()] != st.GetPlayerId() {
					t.Fatalf("seat %v, tickets seat %v", st, seated)
				}
			}
		}

		// One open ticket a player; a retry returns the ticket it made.
		ada, bob := four[0], four[1]
		first := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 3, KeepWaiting: true, RequestId: "e2"})
		again := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 3, KeepWaiting: true, RequestId: "e2"})
		if again.GetTicketId() != first.GetTicketId() {
			t.Fatalf("a retried Enqueue made ticket %s, then %s", first.GetTicketId(), again.GetTicketId())
		}
		if old, err := ada.mm().Enqueue(ada.ctx(), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: 4, RequestId: "e1", KeepWaiting: true, Rated: true}); err != nil ||
			old.GetTicket().GetTicketId() != fourT[0].GetTicketId() || old.GetTicket().GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_MATCHED {
			t.Fatalf("Enqueue retried after the match = %v, %v", old.GetTicket(), err)
		}
		_, err := ada.mm().Enqueue(ada.ctx(), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: 2})
		wantErr(t, "a second open ticket", err, codes.AlreadyExists, "TICKET_OPEN")
		if id := errorMetadata(err)["ticket_id"]; id != first.GetTicketId() {
			t.Fatalf("TICKET_OPEN names ticket %q, want %s", id, first.GetTicketId())
		}
		_, err = ada.mm().Enqueue(ada.ctx(), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: 4, RequestId: "e2"})
		wantErr(t, "a request id reused", err, codes.AlreadyExists, "REQUEST_ID_REUSED")

		// Cancelling: only one's own ticket, only while it is queued; a
		// second cancel returns the ticket as it is.
		w := watchTicket(ada.ctx(), ada, first.GetTicketId())
		_, err = bob.mm().CancelTicket(bob.ctx(), &hangarv1.CancelTicketRequest{TicketId: first.GetTicketId()})
		wantErr(t, "cancelling another player's ticket", err, codes.PermissionDenied, "NOT_YOUR_TICKET")
		_, err = bob.mm().GetTicket(bob.ctx(), &hangarv1.GetTicketRequest{TicketId: first.GetTicketId()})
		wantErr(t, "reading another player's ticket", err, codes.PermissionDenied, "NOT_YOUR_TICKET")
		_, err = bob.mm().CancelTicket(bob.ctx(), &hangarv1.CancelTicketRequest{TicketId: fourT[1].GetTicketId()})
		wantErr(t, "cancelling a matched ticket", err, codes.FailedPrecondition, "TICKET_MATCHED")
		cr, err := ada.mm().CancelTicket(ada.ctx(), &hangarv1.CancelTicketRequest{TicketId: first.GetTicketId()})
		if err != nil || cr.GetTicket().GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_CANCELLED {
			t.Fatalf("CancelTicket = %v, %v", cr.GetTicket(), err)
		}
		w.wait(t, hangarv1.TicketStatus_TICKET_STATUS_CANCELLED)
		if cr2, err := ada.mm().CancelTicket(ada.ctx(), &hangarv1.CancelTicketRequest{TicketId: first.GetTicketId()}); err != nil || !proto.Equal(cr2.GetTicket(), cr.GetTicket()) {
			t.Fatalf("second CancelTicket = %v, %v; want %v", cr2.GetTicket(), err, cr.GetTicket())
		}
		// An ended ticket's watch sends its end and ends.
		if got := watchTicket(ada.ctx(), ada, first.GetTicketId()).wait(t, hangarv1.TicketStatus_TICKET_STATUS_CANCELLED); len(got) != 1 {
			t.Fatalf("a cancelled ticket's watch sent %v", got)
		}
		// Cancelled, the player may enqueue again.
		ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 3, KeepWaiting: true})
	})
}

// seedRating gives players ratings (mu) in Aeroplane Chess, as rated
// matches would have: each through an append to the store the node shares
// that ends a match of the player and a bot.
func seedRating(t *testing.T, cfg server.Config, mus map[string]float64) {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	var err error
	if cfg.DatabaseURL != "" {
		st, err = postgres.Open(ctx, cfg.DatabaseURL)
	} else {
		st, err = sqlite.Open(ctx, cfg.DataDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	game := registry().Get("aeroplane").Name()
	at := time.Now().UTC().Truncate(time.Microsecond)
	for p, mu := range mus {
		m := store.Match{ID: "m_seed_" + p, Game: game, Status: store.StatusFinished, Version: 1, Players: []string{p},
			Options: []byte{}, Summary: []byte{}, Created: at, Started: at, Ended: at}
		_, err := st.Append(ctx, store.Append{Match: m, Command: store.Command{Author: p, RequestID: "seed", Fingerprint: []byte("seed")},
			Events: []store.Event{{Type: "seed", Payload: []byte{}}}, Time: at,
			End: &store.MatchResult{
				Seats: []store.SeatResult{
					{Seat: 0, Player: p, Place: 1, Seats: 2, Outcome: store.OutcomeWon, Rated: true},
					{Seat: 2, Bot: true, Place: 2, Seats: 2, Outcome: store.OutcomeLost},
				},
				Rate: func(cur []store.Rating) ([]store.Rating, error) {
					return []store.Rating{{Player: p, Game: game, Mu: mu, Sigma: 2, Score: mu - 6}}, nil
				},
			}})
		if err != nil {
			t.Fatalf("seed the rating of %s: %v", p, err)
		}
	}
}

// TestMatchmakingRatings runs the queue on a fake clock: players of
// ratings 10, 19, 13 and 16 (enqueued in that order) wait while no two are
// within a window; as the windows widen the oldest is matched with the
// nearest, 10 with 13 (not with 19, the next oldest), then 19 with 16.
func TestMatchmakingRatings(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg = quickMatcher(cfg)
		cfg.Service.Now = clock.Now
		cfg.Service.Matchmaking.Window, cfg.Service.Matchmaking.Widen = 1, 0.5
		n := node(t, cfg)
		mus := []float64{10, 19, 13, 16}
		cs := make([]*client, len(mus))
		seeds := map[string]float64{}
		for i, mu := range mus {
			cs[i] = newClient(t, n.Addr(), fmt.Sprint("Rated ", mu))
			seeds[cs[i].id] = mu
		}
		seedRating(t, cfg, seeds)
		tks := make([]*hangarv1.Ticket, len(mus))
		for i, c := range cs {
			tks[i] = c.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, Rated: true, KeepWaiting: true})
			if tks[i].GetRating() != mus[i] || tks[i].GetWindow() != 1 {
				t.Fatalf("ticket %v, want rating %v and window 1", tks[i], mus[i])
			}
			clock.Advance(time.Millisecond)
		}
		// Two seconds on, the windows are 2 wide: nobody is within 3.
		clock.Advance(2 * time.Second)
		time.Sleep(200 * time.Millisecond) // some passes of the matcher
		for i, c := range cs {
			if tk := c.ticket(t, tks[i].GetTicketId()); tk.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED || tk.GetWindow() < 2 || tk.GetWindow() >= 2.1 {
				t.Fatalf("after 2s: %v", tk)
			}
		}
		clock.Advance(18 * time.Second)
		match := map[string]string{}
		for i, c := range cs {
			tk := c.awaitTicket(t, tks[i].GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
			match[c.id] = tk.GetMatchId()
			if tk.GetWait().AsDuration() < 20*time.Second {
				t.Errorf("matched after %v", tk.GetWait().AsDuration())
			}
		}
		if match[cs[0].id] != match[cs[2].id] || match[cs[1].id] != match[cs[3].id] || match[cs[0].id] == match[cs[1].id] {
			t.Fatalf("pairs %v: want 10 with 13 and 19 with 16", match)
		}
	})
}

// TestMatchmakingBots: a ticket that waited its bots_after is matched with
// bots in the seats no player took (on a fake clock); a ticket that keeps
// waiting is left out of that match, waits on, and expires after the TTL.
func TestMatchmakingBots(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg = quickMatcher(cfg)
		cfg.Service.Now = clock.Now
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		at := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, BotsAfter: durationpb.New(30 * time.Second)})
		clock.Advance(time.Second)
		bt := bob.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, KeepWaiting: true})
		if at.GetBotsAfter().AsDuration() != 30*time.Second || bt.GetBotsAfter() != nil || !bt.GetKeepWaiting() {
			t.Fatalf("tickets %v, %v", at, bt)
		}
		bw := watchTicket(bob.ctx(), bob, bt.GetTicketId())
		clock.Advance(28 * time.Second)
		time.Sleep(200 * time.Millisecond)
		if tk := ada.ticket(t, at.GetTicketId()); tk.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED {
			t.Fatalf("before its bots_after: %v", tk)
		}
		clock.Advance(2 * time.Second)
		tk := ada.awaitTicket(t, at.GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
		m := ada.get(t, tk.GetMatchId())
		bots := 0
		for _, st := range m.GetSeats() {
			switch {
			case st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_BOT:
				bots++
			case st.GetPlayerId() != ada.id || st.GetSeat() != tk.GetSeat():
				t.Fatalf("seat %v", st)
			}
		}
		if bots != 3 || m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("match %v: %d bots", m, bots)
		}
		// Bob waits on, with a window as wide as it gets, until the TTL.
		clock.Advance(30 * time.Minute)
		time.Sleep(200 * time.Millisecond)
		if tk := bob.ticket(t, bt.GetTicketId()); tk.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED || tk.GetWindow() != 50 {
			t.Fatalf("a ticket that keeps waiting: %v", tk)
		}
		clock.Advance(30 * time.Minute)
		bw.wait(t, hangarv1.TicketStatus_TICKET_STATUS_EXPIRED)
		_, err := bob.mm().CancelTicket(bob.ctx(), &hangarv1.CancelTicketRequest{TicketId: bt.GetTicketId()})
		wantErr(t, "cancelling an expired ticket", err, codes.FailedPrecondition, "TICKET_EXPIRED")
	})
}

// TestMatchmakingRestart: tickets queued on a node that stops are matched
// by the node that starts after it; and a group a node formed but died
// before making its match (left in the store as such a node leaves it) is
// made into that match, with the seats the group chose.
func TestMatchmakingRestart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg = quickMatcher(cfg)
		cfg.Service.Matchmaking.Lease = 200 * time.Millisecond
		a := node(t, cfg)
		var cs []*client
		var tks []*hangarv1.Ticket
		for i := range 3 {
			c := newClient(t, a.Addr(), fmt.Sprint("P", i))
			cs = append(cs, c)
			tks = append(tks, c.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, KeepWaiting: true}))
		}
		eve, fay := newClient(t, a.Addr(), "Eve"), newClient(t, a.Addr(), "Fay")
		a.Shutdown(context.Background())

		// What a node that died after forming a group leaves.
		ctx := context.Background()
		var st store.Store
		var err error
		if cfg.DatabaseURL != "" {
			st, err = postgres.Open(ctx, cfg.DatabaseURL)
		} else {
			st, err = sqlite.Open(ctx, cfg.DataDir)
		}
		if err != nil {
			t.Fatal(err)
		}
		g := registry().Get("aeroplane")
		opts, err := g.Options(nil, 2)
		if err != nil {
			t.Fatal(err)
		}
		ob, _ := game.EncodeOptions(g, opts)
		now := time.Now().UTC().Truncate(time.Microsecond)
		for i, c := range []*client{eve, fay} {
			if _, _, err := st.Enqueue(ctx, store.Ticket{ID: fmt.Sprint("t_crash", i), Player: c.id, PlayerName: []string{"Eve", "Fay"}[i], RequestID: "r", Fingerprint: []byte("f"),
				Game: g.Name(), Pool: "crash-pool", Options: ob, Seats: 2, Rated: true, KeepWaiting: true, Rating: 25, Created: now}); err != nil {
				t.Fatal(err)
			}
		}
		const crashed = "m_formedbyadeadnode"
		if _, err := st.FormMatches(ctx, now, now.Add(time.Second), 100, func(pool string, w []store.Ticket) (store.Formation, error) {
			if pool != "crash-pool" {
				return store.Formation{}, nil
			}
			return store.Formation{Groups: []store.Group{{Match: crashed, Tickets: []string{"t_crash0", "t_crash1"}, Seats: []int{2, 0}}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		st.Close()

		b := node(t, cfg)
		dan := newClient(t, b.Addr(), "Dan")
		dt := dan.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, KeepWaiting: true})
		m := dan.awaitTicket(t, dt.GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED).GetMatchId()
		for i, c := range cs {
			if tk := c.reconnect(t, b.Addr()).awaitTicket(t, tks[i].GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED); tk.GetMatchId() != m {
				t.Fatalf("ticket %v, want match %s", tk, m)
			}
		}
		for i, c := range []*client{eve, fay} {
			c = c.reconnect(t, b.Addr())
			tk := c.awaitTicket(t, fmt.Sprint("t_crash", i), hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
			if tk.GetMatchId() != crashed || tk.GetSeat() != int32(2-2*i) {
				t.Fatalf("ticket %v", tk)
			}
			mt := c.get(t, crashed)
			if mt.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || len(mt.GetSeats()) != 2 {
				t.Fatalf("match %v", mt)
			}
			for _, s := range mt.GetSeats() {
				if s.GetSeat() == tk.GetSeat() && s.GetPlayerId() != c.id {
					t.Fatalf("seat %d is %q's, want %s", s.GetSeat(), s.GetPlayerId(), c.id)
				}
			}
		}
	})
}

// TestMatchmakingTwoNodes enqueues hundreds of players at once, half on
// each of two nodes sharing a Postgres, each watching its ticket on the
// other node: every ticket is matched once, every match has its seat
// count of distinct players, no player is in two matches and no ticket is
// left waiting.
func TestMatchmakingTwoNodes(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	lim := service.DefaultLimits()
	lim.CreatePlayerBurst = 100000
	var nodes []*server.Server
	for range 2 {
		cfg := quickMatcher(server.Config{DatabaseURL: url, CrossNode: true})
		cfg.Service.Limits = &lim
		// 32 registrations at once from one address would outgrow its
		// share of the request memory (16 calls) on a loaded machine;
		// the edge's refusals have tests of their own.
		cfg.Conn.RequestMemory = -1
		nodes = append(nodes, node(t, cfg))
	}
	const fours, twos = 160, 80
	type entry struct {
		c     *client
		seats int
		tk    *hangarv1.Ticket
		w     *ticketWatch
	}
	entries := make([]*entry, fours+twos)
	var wg sync.WaitGroup
	errs := make(chan error, len(entries))
	sem := make(chan struct{}, 32)
	for i := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			e := &entry{seats: 4}
			if i >= fours {
				e.seats = 2
			}
			home, other := nodes[i%2], nodes[1-i%2]
			e.c = newClient(t, home.Addr(), fmt.Sprint("P", i))
			r, err := e.c.mm().Enqueue(e.c.ctx(), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: int32(e.seats),
				Rated: e.seats == 4, KeepWaiting: true})
			if err != nil {
				errs <- err
				return
			}
			e.tk = r.GetTicket()
			oc := e.c.reconnect(t, other.Addr())
			e.w = watchTicket(oc.ctx(), oc, e.tk.GetTicketId())
			entries[i] = e
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	members := map[string][]*entry{}
	for _, e := range entries {
		got := e.w.wait(t, hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
		last := got[len(got)-1]
		members[last.GetMatchId()] = append(members[last.GetMatchId()], e)
	}
	if len(members) != fours/4+twos/2 {
		t.Fatalf("%d matches, want %d", len(members), fours/4+twos/2)
	}
	players := map[string]string{}
	for id, es := range members {
		m := es[0].c.get(t, id)
		seated := map[string]bool{}
		for _, s := range m.GetSeats() {
			if s.GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
				t.Fatalf("match %s seat %v", id, s)
			}
			seated[s.GetPlayerId()] = true
		}
		if len(es) != es[0].seats || len(m.GetSeats()) != es[0].seats || len(seated) != es[0].seats {
			t.Fatalf("match %s: %d tickets, %d seats, %d players; want %d", id, len(es), len(m.GetSeats()), len(seated), es[0].seats)
		}
		for _, e := range es {
			if e.seats != es[0].seats || !seated[e.c.id] {
				t.Fatalf("match %s: ticket %v", id, e.tk)
			}
			if other, ok := players[e.c.id]; ok {
				t.Fatalf("player %s in matches %s and %s", e.c.id, other, id)
			}
			players[e.c.id] = id
		}
	}
	// Every player is in one match of the store's, the one its ticket names.
	for _, e := range entries {
		mine, err := e.c.matches.ListMatches(e.c.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
		if err != nil || len(mine.GetMatches()) != 1 || mine.GetMatches()[0].GetMatchId() != players[e.c.id] {
			t.Fatalf("%s's matches: %v, %v", e.c.id, mine.GetMatches(), err)
		}
	}
}

// ticketAutoRoll says whether an Aeroplane Chess ticket's options have the
// server roll.
func ticketAutoRoll(tk *hangarv1.Ticket) bool {
	return unpack[*aeroplanev1.Options](tk.GetOptions()).GetAutoRoll()
}

// TestMatchmakingAutoRoll: tickets asking for auto_roll are matched with
// each other only, and their match has the server roll: its two players
// play it to the end with Moves alone (autoRollSeat). The oldest two
// tickets, one with auto_roll and one without, would make a match were
// they in one pool.
func TestMatchmakingAutoRoll(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, quickMatcher(cfg))
		var cs []*client
		var ts []*hangarv1.Ticket
		var watches []*ticketWatch
		for i, auto := range []bool{true, false, true, false} {
			c := newClient(t, n.Addr(), fmt.Sprint("Player ", i))
			tk := c.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true, Options: aeroOptions(&aeroplanev1.Options{AutoRoll: auto})})
			if ticketAutoRoll(tk) != auto {
				t.Fatalf("Enqueue(auto_roll=%t) = %v", auto, tk)
			}
			cs, ts = append(cs, c), append(ts, tk)
			watches = append(watches, watchTicket(c.ctx(), c, tk.GetTicketId()))
		}
		matchOf := make([]string, len(cs))
		for i, w := range watches {
			got := w.wait(t, hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
			matchOf[i] = got[len(got)-1].GetMatchId()
		}
		if matchOf[0] != matchOf[2] || matchOf[1] != matchOf[3] || matchOf[0] == matchOf[1] {
			t.Fatalf("matches of the tickets (auto_roll, plain, auto_roll, plain): %v", matchOf)
		}
		for i, c := range cs {
			if tk := c.ticket(t, ts[i].GetTicketId()); ticketAutoRoll(tk) != ticketAutoRoll(ts[i]) {
				t.Fatalf("matched ticket %v", tk)
			}
		}
		if m := cs[1].get(t, matchOf[1]); matchAutoRoll(m) {
			t.Fatalf("the plain tickets' match has auto_roll: %v", m)
		}
		m := cs[0].get(t, matchOf[0])
		if !matchAutoRoll(m) || m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("the auto_roll tickets' match: %v", m)
		}
		seats := seatsOfMatch(m)
		errs := make(chan error, 2)
		for i, c := range []*client{cs[0], cs[2]} {
			go func() {
				_, _, err := autoRollSeat(c, m.GetMatchId(), seats[c.id], uint64(i+7), false)
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if end := cs[0].get(t, m.GetMatchId()); end.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("after both seats played it out the match is %v", end.GetStatus())
		}
	})
}

// TestMatchmakingBadInput: malformed requests are INVALID_ARGUMENT and
// change nothing (the player has no ticket after them); unknown tickets
// are NOT_FOUND.
func TestMatchmakingBadInput(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, quickMatcher(cfg))
		ada := newClient(t, n.Addr(), "Ada")
		aero := "aeroplane"
		badOpts := aeroOptions(&aeroplanev1.Options{ThirdSix: 99})
		for _, req := range []*hangarv1.EnqueueRequest{
			{SeatCount: 4},
			{Game: "chess", SeatCount: 4},
			{Game: aero, SeatCount: 1},
			{Game: aero, SeatCount: 7},
			{Game: aero, SeatCount: 4, Options: badOpts},
			{Game: aero, SeatCount: 4, BotsAfter: durationpb.New(-time.Second)},
			{Game: aero, SeatCount: 4, BotsAfter: durationpb.New(time.Millisecond)},
			{Game: aero, SeatCount: 4, BotsAfter: durationpb.New(2 * time.Hour)},
			{Game: aero, SeatCount: 4, BotsAfter: &durationpb.Duration{Seconds: 10, Nanos: -5}},
			{Game: aero, SeatCount: 4, BotsAfter: durationpb.New(time.Minute), KeepWaiting: true},
			{Game: aero, SeatCount: 4, RequestId: string(make([]byte, 129))},
			{Game: aero, SeatCount: 4, RequestId: "bad\x00id"},
			{Game: "carcassonne", SeatCount: 2, Options: autoRoll()}, // another game's options
			{Game: aero, SeatCount: 2, Options: &anypb.Any{TypeUrl: "type.googleapis.com/hangar.chess.v1.Options"}},
		} {
			_, err := ada.mm().Enqueue(ada.ctx(), req)
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("Enqueue(%v) = %v, want INVALID_ARGUMENT", req, err)
			}
		}
		for _, id := range []string{"", string(make([]byte, 65)), "t_\x01"} {
			_, err := ada.mm().GetTicket(ada.ctx(), &hangarv1.GetTicketRequest{TicketId: id})
			wantErr(t, "GetTicket", err, codes.InvalidArgument, "INVALID_ARGUMENT")
			_, err = ada.mm().CancelTicket(ada.ctx(), &hangarv1.CancelTicketRequest{TicketId: id})
			wantErr(t, "CancelTicket", err, codes.InvalidArgument, "INVALID_ARGUMENT")
			err = watchTicket(ada.ctx(), ada, id).wait2()
			wantErr(t, "WatchTicket", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		}
		_, err := ada.mm().GetTicket(ada.ctx(), &hangarv1.GetTicketRequest{TicketId: "t_nope"})
		wantErr(t, "GetTicket of no ticket", err, codes.NotFound, "NOT_FOUND")
		_, err = ada.mm().CancelTicket(ada.ctx(), &hangarv1.CancelTicketRequest{TicketId: "t_nope"})
		wantErr(t, "CancelTicket of no ticket", err, codes.NotFound, "NOT_FOUND")
		wantErr(t, "WatchTicket of no ticket", watchTicket(ada.ctx(), ada, "t_nope").wait2(), codes.NotFound, "NOT_FOUND")
		// Nothing was enqueued: Ada has no open ticket.
		ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, KeepWaiting: true})
	})
}

// wait2 waits for the stream's end and returns its error.
func (w *ticketWatch) wait2() error {
	select {
	case err := <-w.done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("the watch did not end")
	}
}

// TestMatchmakingLimits: the player's rate limit applies to the
// matchmaking calls, and ticket watches count against the watch cap.
func TestMatchmakingLimits(t *testing.T) {
	// Serial: its rate limit runs on the real clock (1 a second): slowed by
	// other tests, its calls earned new tokens (seen under -race).
	lim := service.DefaultLimits()
	lim.PlayerRate, lim.PlayerBurst, lim.Watches = 1, 6, 1
	cfg := quickMatcher(server.Config{DataDir: t.TempDir()})
	cfg.Service.Limits = &lim
	n := node(t, cfg)
	ada := newClient(t, n.Addr(), "Ada") // CreatePlayer is the address's, not the player's
	tk := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, KeepWaiting: true})
	w := watchTicket(ada.ctx(), ada, tk.GetTicketId())
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		k := len(w.got)
		w.mu.Unlock()
		if k > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first watch sent nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantErr(t, "a second watch", watchTicket(ada.ctx(), ada, tk.GetTicketId()).wait2(), codes.ResourceExhausted, "TOO_MANY_WATCHES")
	var err error
	for range 10 {
		if _, err = ada.mm().GetTicket(ada.ctx(), &hangarv1.GetTicketRequest{TicketId: tk.GetTicketId()}); err != nil {
			break
		}
	}
	wantErr(t, "GetTicket beyond the rate", err, codes.ResourceExhausted, "RATE_LIMITED")
	_, err = ada.mm().Enqueue(ada.ctx(), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: 2})
	wantErr(t, "Enqueue beyond the rate", err, codes.ResourceExhausted, "RATE_LIMITED")
}

// TestMatchmakingREST enqueues, reads, watches (newline-delimited JSON and
// server-sent events) and cancels a ticket over REST.
func TestMatchmakingREST(t *testing.T) {
	t.Parallel()
	n := node(t, quickMatcher(server.Config{DataDir: t.TempDir()}))
	ada := newClient(t, n.Addr(), "Ada")
	base := "http://" + n.Addr()
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ada.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, out
	}
	code, out := call("POST", "/v1/tickets", `{"game":"aeroplane","seatCount":4,"keepWaiting":true,"requestId":"rest-1"}`)
	tk, _ := out["ticket"].(map[string]any)
	id, _ := tk["ticketId"].(string)
	if code != 200 || id == "" || tk["status"] != "TICKET_STATUS_QUEUED" {
		t.Fatalf("POST /v1/tickets: %d %v", code, out)
	}
	if code, out := call("POST", "/v1/tickets", `{"game":"aeroplane","seatCount":2}`); code != 409 {
		t.Fatalf("a second ticket: %d %v", code, out)
	}
	if code, out := call("GET", "/v1/tickets/"+id, ""); code != 200 || out["ticket"].(map[string]any)["ticketId"] != id {
		t.Fatalf("GET /v1/tickets/%s: %d %v", id, code, out)
	}
	for _, sse := range []bool{false, true} {
		req, _ := http.NewRequest("GET", base+"/v1/tickets/"+id+":watch", nil)
		req.Header.Set("Authorization", "Bearer "+ada.token)
		if sse {
			req.Header.Set("Accept", "text/event-stream")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("watch: %d", resp.StatusCode)
		}
		lines := bufio.NewScanner(resp.Body)
		var got []string
		for lines.Scan() {
			line := lines.Text()
			if sse {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok || data == "{}" {
					continue
				}
				line = data
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("watch line %q: %v", line, err)
			}
			st, _ := r["ticket"].(map[string]any)["status"].(string)
			got = append(got, st)
			if len(got) == 1 && !sse {
				if code, out := call("POST", "/v1/tickets/"+id+":cancel", `{}`); code != 200 {
					t.Fatalf("cancel: %d %v", code, out)
				}
			}
		}
		if sse {
			if len(got) != 1 || got[0] != "TICKET_STATUS_CANCELLED" {
				t.Fatalf("SSE watch of a cancelled ticket: %v", got)
			}
			continue
		}
		if len(got) < 2 || got[0] != "TICKET_STATUS_QUEUED" || got[len(got)-1] != "TICKET_STATUS_CANCELLED" {
			t.Fatalf("watch sent %v", got)
		}
	}
	req, _ := http.NewRequest("GET", base+"/v1/tickets/t_nope:watch", nil)
	req.Header.Set("Authorization", "Bearer "+ada.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("watch of no ticket: %d", resp.StatusCode)
	}
}
