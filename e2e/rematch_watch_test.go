package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/internal/watch"
	"github.com/hangarhq/hangar/server"
)

// followWatch is an open WatchMatch stream with follow_rematch, read to
// its end by a goroutine: its events, then the error that ended it (io.EOF
// for a clean end).
type followWatch struct {
	evs  chan *hangarv1.WatchMatchResponse
	done chan error
}

// watchFollowing opens c's WatchMatch of id after after with follow_rematch
// and waits until the stream is open (its headers came).
func watchFollowing(t *testing.T, c *client, id string, after int64) *followWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(c.ctx())
	t.Cleanup(cancel)
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: after, FollowRematch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatalf("WatchMatch: %v", err)
	}
	w := &followWatch{evs: make(chan *hangarv1.WatchMatchResponse, 4096), done: make(chan error, 1)}
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				close(w.evs)
				w.done <- err
				return
			}
			w.evs <- r
		}
	}()
	return w
}

// until reads w's events up to and including the first for which stop is
// true, failing t if the stream ends first or nothing comes within.
func (w *followWatch) until(t *testing.T, within time.Duration, stop func(*hangarv1.WatchMatchResponse) bool) []*hangarv1.WatchMatchResponse {
	t.Helper()
	var out []*hangarv1.WatchMatchResponse
	for {
		select {
		case r, ok := <-w.evs:
			if !ok {
				t.Fatalf("the watch ended after %d events: %v", len(out), <-w.done)
			}
			out = append(out, r)
			if stop(r) {
				return out
			}
		case <-time.After(within):
			t.Fatalf("no event within %v after %d events", within, len(out))
		}
	}
}

// rest reads w's remaining events and its end, failing t unless it ends
// cleanly within.
func (w *followWatch) rest(t *testing.T, within time.Duration) []*hangarv1.WatchMatchResponse {
	t.Helper()
	var out []*hangarv1.WatchMatchResponse
	timeout := time.After(within)
	for {
		select {
		case r, ok := <-w.evs:
			if !ok {
				if err := <-w.done; !errors.Is(err, io.EOF) {
					t.Fatalf("the watch ended with %v, want a clean end", err)
				}
				return out
			}
			out = append(out, r)
		case <-timeout:
			t.Fatalf("the watch did not end within %v (%d events more)", within, len(out))
		}
	}
}

// checkFollowed checks a following watch's events from seq 1: contiguous,
// one MatchEnded, and one RematchStarted (naming rematch) as the last.
func checkFollowed(t *testing.T, who string, evs []*hangarv1.WatchMatchResponse, rematch string) {
	t.Helper()
	ended, started := 0, 0
	for i, r := range evs {
		if r.GetEvent().GetSeq() != int64(i+1) {
			t.Fatalf("%s: event %d has seq %d: a gap or a repeat", who, i+1, r.GetEvent().GetSeq())
		}
		if r.GetEvent().GetMatchEnded() != nil {
			ended++
		}
		if rs := r.GetEvent().GetRematchStarted(); rs != nil {
			started++
			if rs.GetMatchId() != rematch || i != len(evs)-1 {
				t.Fatalf("%s: RematchStarted %v at %d of %d, want %s last", who, rs, i+1, len(evs), rematch)
			}
		}
	}
	if ended != 1 || started != 1 {
		t.Fatalf("%s: %d MatchEnded and %d RematchStarted, want one each", who, ended, started)
	}
}

// TestRematchSeenByWatchers: watchers that follow the rematch, a spectator
// on node A and a player on node B over gRPC and a REST NDJSON watcher on
// node B, each see the match's events, its end, the rematch offer and
// RematchStarted once, with no gap and no repeat, and their streams then
// end cleanly. A watch without follow_rematch still ends at MatchEnded.
func TestRematchSeenByWatchers(t *testing.T) {
	t.Parallel()
	eachBus(t, func(t *testing.T, cfg server.Config) {
		a, b := node(t, cfg), node(t, cfg)
		ada := newClient(t, a.Addr(), "Ada")
		bob := newClient(t, b.Addr(), "Bob")
		cy := newClient(t, a.Addr(), "Cy")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()}); err != nil {
			t.Fatal(err)
		}
		spectator := watchFollowing(t, cy, id, 0)
		player := watchFollowing(t, bob, id, 0)
		plain, err := cy.matches.WatchMatch(cy.ctx(), &hangarv1.WatchMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		type restResult struct {
			code int
			body []byte
		}
		restDone := make(chan restResult, 1)
		go func() {
			code, _, body := restDo(t, "GET", "http://"+b.Addr()+"/v1/matches/"+id+":watch?followRematch=true", bob.token, "", "")
			restDone <- restResult{code, body}
		}()

		// A draw, agreed across the nodes, ends the match; a rematch is
		// offered on node B and accepted on node A.
		made, err := ada.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bob.answer(id, made.GetOffer().GetOfferId(), true); err != nil {
			t.Fatal(err)
		}
		// Each following watch is still open after the end.
		isEnd := func(r *hangarv1.WatchMatchResponse) bool { return r.GetEvent().GetMatchEnded() != nil }
		seen := map[string][]*hangarv1.WatchMatchResponse{
			"spectator on node A": spectator.until(t, 20*time.Second, isEnd),
			"player on node B":    player.until(t, 20*time.Second, isEnd),
		}
		// The plain watch ends at MatchEnded, as it always has.
		var last *hangarv1.WatchMatchResponse
		for {
			r, err := plain.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("the plain watch: %v", err)
			}
			last = r
		}
		if last.GetEvent().GetMatchEnded() == nil {
			t.Fatalf("the plain watch ended after %v, want MatchEnded", last.GetEvent())
		}

		made, err = bob.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := ada.answer(id, made.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		rematch := ans.GetRematchMatchId()
		seen["spectator on node A"] = append(seen["spectator on node A"], spectator.rest(t, 20*time.Second)...)
		seen["player on node B"] = append(seen["player on node B"], player.rest(t, 20*time.Second)...)
		for who, evs := range seen {
			checkFollowed(t, who, evs, rematch)
		}

		var rr restResult
		select {
		case rr = <-restDone:
		case <-time.After(20 * time.Second):
			t.Fatal("the REST watch did not end")
		}
		if rr.code != 200 {
			t.Fatalf("the REST watch: %d %s", rr.code, rr.body)
		}
		var restEvs []*hangarv1.WatchMatchResponse
		sc := bufio.NewScanner(bytes.NewReader(rr.body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r hangarv1.WatchMatchResponse
			if err := protojson.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("REST line %q: %v", sc.Bytes(), err)
			}
			restEvs = append(restEvs, &r)
		}
		checkFollowed(t, "REST watcher on node B", restEvs, rematch)

		// Once the rematch has started, a following watch from the last
		// event ends at once: nothing more may come.
		w := watchFollowing(t, cy, id, int64(len(seen["player on node B"])))
		if evs := w.rest(t, 20*time.Second); len(evs) != 0 {
			t.Fatalf("a following watch after RematchStarted sent %v", evs)
		}
	})
}

// TestRematchWindowCloses: a following watch stays open after the end
// (opened before it or after it), sends the offers of the window, and ends
// cleanly, with no more events, once the rematch window has closed on the
// node's clock; a following watch opened after that ends at once, as a
// plain one does.
func TestRematchWindowCloses(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg.Service.Now = clock.Now
		n := node(t, cfg)
		m, seats := carcPeopleMatch(t, n.Addr())
		p, q := turnPair(m, seats)
		id := m.GetMatchId()
		early := watchFollowing(t, q, id, 0)
		made, err := p.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.answer(id, made.GetOffer().GetOfferId(), true); err != nil {
			t.Fatal(err)
		}
		evs := early.until(t, 20*time.Second, func(r *hangarv1.WatchMatchResponse) bool { return r.GetEvent().GetMatchEnded() != nil })
		end := evs[len(evs)-1].GetEvent().GetSeq()
		// Opened after the end, in the window: it waits too.
		late := watchFollowing(t, p, id, end)
		// Near the window's end both are open: a rematch offered and
		// declined reaches them.
		clock.Advance(watch.RematchWindow - time.Second)
		made, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		if err != nil {
			t.Fatal(err)
		}
		no, err := q.answer(id, made.GetOffer().GetOfferId(), false)
		if err != nil {
			t.Fatal(err)
		}
		at := func(r *hangarv1.WatchMatchResponse) bool { return r.GetVersion() == no.GetMatch().GetVersion() }
		early.until(t, 20*time.Second, at)
		late.until(t, 20*time.Second, at)
		clock.Advance(2 * time.Second)
		for who, w := range map[string]*followWatch{"the early watch": early, "the late watch": late} {
			if more := w.rest(t, 20*time.Second); len(more) != 0 {
				t.Fatalf("%s sent %v after the window closed", who, more)
			}
		}
		after := watchFollowing(t, q, id, no.GetMatch().GetVersion())
		if more := after.rest(t, 20*time.Second); len(more) != 0 {
			t.Fatalf("a following watch opened after the window sent %v", more)
		}
		// The window bounds the watch, not the offer.
		if _, err := p.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH); err != nil {
			t.Fatal(fmt.Errorf("a rematch offer after the window: %w", err))
		}
	})
}
