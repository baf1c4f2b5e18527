package service

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
)

// heldAppend is a store whose appends, once armed, commit and then wait for
// a release before they return: the moment between a command's commit and
// the node's cache taking its match.
type heldAppend struct {
	store.Store
	armed     chan struct{} // receives once: the next append is held
	committed chan struct{} // closed when the held append has committed
	release   chan struct{}
}

func (h *heldAppend) Append(ctx context.Context, a store.Append) (store.Result, error) {
	r, err := h.Store.Append(ctx, a)
	select {
	case <-h.armed:
		close(h.committed)
		<-h.release
	default:
	}
	return r, err
}

// TestEventsAheadOfTheCache: a client that reads a match's events while a
// command that wrote the latest one has committed but not yet reached the
// node's cache gets the match at that event's version from GetMatch (and at
// that version by at_version), on the embedded store, whose node trusts its
// cache.
func TestEventsAheadOfTheCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := sqlite.Migrate(dir); err != nil {
		t.Fatal(err)
	}
	sq, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &heldAppend{Store: sq, armed: make(chan struct{}, 1), committed: make(chan struct{}), release: make(chan struct{})}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := New(st, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Games: benchGames, Rand: rand.New(rand.NewPCG(1, 2)),
		Now: func() time.Time { return t0 }, SingleNode: true})
	defer s.Close()
	var ctxs [2]context.Context
	for i, id := range []string{"p_ada", "p_bob"} {
		p := store.Player{ID: id, DisplayName: id, Created: t0}
		if err := sq.CreatePlayer(ctx, p, store.Token{Hash: []byte(id), Created: t0, Expires: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		ctxs[i] = auth.WithCaller(ctx, p)
	}
	ms := &matchServer{Service: s}
	cr, err := ms.CreateMatch(ctxs[0], &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: "create"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	jr, err := ms.JoinMatch(ctxs[1], &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "join"})
	if err != nil {
		t.Fatal(err)
	}
	before := jr.GetMatch()
	turn := ctxs[0]
	if before.GetSeats()[before.GetTurnSeat()].GetPlayerId() == "p_bob" {
		turn = ctxs[1]
	}
	roll, err := benchGames.Pack(&aeroplanev1.Roll{})
	if err != nil {
		t.Fatal(err)
	}
	st.armed <- struct{}{}
	acted := make(chan error, 1)
	go func() {
		_, err := (&moveServer{Service: s}).Act(turn, &hangarv1.ActRequest{MatchId: id, ExpectedVersion: before.GetVersion(),
			RequestId: "roll", Action: roll})
		acted <- err
	}()
	<-st.committed
	evs, err := ms.ListMatchEvents(ctxs[0], &hangarv1.ListMatchEventsRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	last := evs.GetEvents()[len(evs.GetEvents())-1].GetSeq()
	if last <= before.GetVersion() {
		t.Fatalf("the events end at %d, before the held command (version %d)", last, before.GetVersion())
	}
	got, err := ms.GetMatch(ctxs[0], &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetMatch().GetVersion() != last {
		t.Errorf("GetMatch says version %d after the events were read up to %d", got.GetMatch().GetVersion(), last)
	}
	if _, err := ms.GetMatch(ctxs[0], &hangarv1.GetMatchRequest{MatchId: id, AtVersion: last}); err != nil {
		t.Errorf("GetMatch at version %d, the last event read: %v", last, err)
	}
	close(st.release)
	if err := <-acted; err != nil {
		t.Fatal(err)
	}
	if got, err := ms.GetMatch(ctxs[0], &hangarv1.GetMatchRequest{MatchId: id}); err != nil || got.GetMatch().GetVersion() != last {
		t.Fatalf("after the command returned: version %d, %v; want %d", got.GetMatch().GetVersion(), err, last)
	}
}
