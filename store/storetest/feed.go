package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// FeedNode is one node's end of a notification bus: its feeds of match
// changes and of revocations.
type FeedNode interface {
	store.Feed
	store.RevocationFeed
}

// RunFeed runs the conformance suite of the notification buses (Postgres's
// LISTEN/NOTIFY, NATS JetStream). open returns two nodes' ends of one
// fresh bus for each subtest (the caller closes them, with t.Cleanup).
// cut, when not nil, breaks the connections of every listener of the bus,
// which must come back by themselves; without it the reconnect case skips.
func RunFeed(t *testing.T, open func(t *testing.T) (a, b FeedNode), cut func(t *testing.T)) {
	t.Run("ReachesEveryNode", func(t *testing.T) { testFeedReachesEveryNode(t, open) })
	t.Run("Revocations", func(t *testing.T) { testFeedRevocations(t, open) })
	t.Run("Reconnect", func(t *testing.T) {
		if cut == nil {
			t.Skip("no way to cut this bus's connections")
		}
		testFeedReconnect(t, open, cut)
	})
	t.Run("ListenEndsWithContext", func(t *testing.T) { testFeedListenEnds(t, open) })
}

// feedWait bounds every wait of the suite.
const feedWait = 10 * time.Second

// listener records what one node's Listen and ListenRevocations hear.
type listener struct {
	changes chan store.Change
	revs    chan store.Revocation
	gaps    chan struct{} // a value per onGap of changes
	revGaps chan struct{} // a value per onGap of revocations
	done    chan error
}

// listen starts n's listeners until ctx ends and waits for both to report
// their first gap: they listen from then on.
func listen(ctx context.Context, t *testing.T, n FeedNode) *listener {
	t.Helper()
	l := &listener{changes: make(chan store.Change, 10000), revs: make(chan store.Revocation, 100),
		gaps: make(chan struct{}, 100), revGaps: make(chan struct{}, 100), done: make(chan error, 2)}
	go func() {
		l.done <- n.Listen(ctx, func(c store.Change) { l.changes <- c }, func() { l.gaps <- struct{}{} })
	}()
	go func() {
		l.done <- n.ListenRevocations(ctx, func(r store.Revocation) { l.revs <- r }, func() { l.revGaps <- struct{}{} })
	}()
	waitSignal(t, l.gaps, "the first gap of Listen (it listens from then on)")
	waitSignal(t, l.revGaps, "the first gap of ListenRevocations (it listens from then on)")
	return l
}

func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(feedWait):
		t.Fatalf("no %s within %v", what, feedWait)
	}
}

// expectChanges checks that l hears want, in order, and nothing else.
func expectChanges(t *testing.T, who string, l *listener, want []store.Change) {
	t.Helper()
	for i, w := range want {
		select {
		case c := <-l.changes:
			if c != w {
				t.Fatalf("%s: change %d = %+v, want %+v", who, i, c, w)
			}
		case <-time.After(feedWait):
			t.Fatalf("%s: only %d of %d changes arrived", who, i, len(want))
		}
	}
	select {
	case c := <-l.changes:
		t.Fatalf("%s: an extra change %+v", who, c)
	case <-time.After(50 * time.Millisecond):
	}
}

func changes(origin string, n int) []store.Change {
	out := make([]store.Change, n)
	for i := range out {
		out[i] = store.Change{Match: fmt.Sprintf("m_%026d", i), Version: int64(i + 1), Origin: origin}
	}
	return out
}

// testFeedReachesEveryNode: a publish reaches every listening node, the
// publisher's own included, in order and with its origin; batches too
// large for one notification are split without loss.
func testFeedReachesEveryNode(t *testing.T, open func(t *testing.T) (a, b FeedNode)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := open(t)
	la, lb := listen(ctx, t, a), listen(ctx, t, b)
	big := changes("n_a", 3000) // several notifications, whatever the bus
	if err := a.Publish(ctx, big); err != nil {
		t.Fatal(err)
	}
	expectChanges(t, "node a (its own)", la, big)
	expectChanges(t, "node b", lb, big)
	one := []store.Change{{Match: "m_one", Version: 7, Origin: "n_b"}}
	if err := b.Publish(ctx, one); err != nil {
		t.Fatal(err)
	}
	expectChanges(t, "node a", la, one)
	expectChanges(t, "node b (its own)", lb, one)
	if err := a.Publish(ctx, nil); err != nil {
		t.Fatalf("publishing nothing: %v", err)
	}
}

// testFeedRevocations: a revocation, of one token or of every session of
// a player, reaches every node intact.
func testFeedRevocations(t *testing.T, open func(t *testing.T) (a, b FeedNode)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := open(t)
	la, lb := listen(ctx, t, a), listen(ctx, t, b)
	sent := []store.Revocation{{Player: "p_ada", TokenHash: []byte{0, 1, 2, 0xfe, 0xff}}, {Player: "p_bob"}}
	for _, r := range sent {
		if err := b.PublishRevocation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for who, l := range map[string]*listener{"node a": la, "node b (its own)": lb} {
		for i, want := range sent {
			select {
			case r := <-l.revs:
				if r.Player != want.Player || !bytes.Equal(r.TokenHash, want.TokenHash) || (r.TokenHash == nil) != (want.TokenHash == nil) {
					t.Fatalf("%s: revocation %d = %+v, want %+v", who, i, r, want)
				}
			case <-time.After(feedWait):
				t.Fatalf("%s: revocation %d did not arrive", who, i)
			}
		}
	}
	select {
	case c := <-la.changes:
		t.Fatalf("a revocation arrived as a change: %+v", c)
	default:
	}
}

// testFeedReconnect: when the listeners' connections break, each comes
// back by itself; a change published meanwhile is either delivered or
// covered by a gap reported after the break (the node then re-reads the
// store), and delivery goes on.
func testFeedReconnect(t *testing.T, open func(t *testing.T) (a, b FeedNode), cut func(t *testing.T)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := open(t)
	la, lb := listen(ctx, t, a), listen(ctx, t, b)
	before := changes("n_a", 3)
	if err := a.Publish(ctx, before); err != nil {
		t.Fatal(err)
	}
	expectChanges(t, "node b", lb, before)
	expectChanges(t, "node a", la, before)
	cut(t)
	// publish retries while the publisher's own connection comes back.
	publish := func(c store.Change) {
		t.Helper()
		deadline := time.Now().Add(feedWait)
		for {
			err := b.Publish(ctx, []store.Change{c})
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("publish after the cut: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	during := store.Change{Match: "m_during", Version: 2, Origin: "n_b"}
	publish(during)
	for who, l := range map[string]*listener{"node a": la, "node b": lb} {
		select {
		case c := <-l.changes:
			if c != during {
				t.Fatalf("%s: after the cut %+v, want %+v", who, c, during)
			}
		case <-l.gaps:
		case <-time.After(feedWait):
			t.Fatalf("%s: neither the change published after the cut nor a gap", who)
		}
	}
	// Delivery goes on: changes published from now on reach both (those
	// published before a listener is back may be lost to a gap).
	got := map[string]bool{}
	for v := int64(10); len(got) < 2; v++ {
		if v > 10+int64(feedWait/(100*time.Millisecond)) {
			t.Fatalf("changes published after the cut reached only %v", got)
		}
		publish(store.Change{Match: "m_after", Version: v, Origin: "n_b"})
		time.Sleep(100 * time.Millisecond)
		for who, l := range map[string]*listener{"node a": la, "node b": lb} {
			for len(l.changes) > 0 {
				if c := <-l.changes; c.Match == "m_after" {
					got[who] = true
				}
			}
		}
	}
	got = map[string]bool{}
	for i := 0; len(got) < 2; i++ {
		if i > int(feedWait/(100*time.Millisecond)) {
			t.Fatalf("revocations published after the cut reached only %v", got)
		}
		if err := b.PublishRevocation(ctx, store.Revocation{Player: "p_after"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		for who, l := range map[string]*listener{"node a": la, "node b": lb} {
			for len(l.revs) > 0 {
				if r := <-l.revs; r.Player == "p_after" {
					got[who] = true
				}
			}
		}
	}
}

// testFeedListenEnds: Listen and ListenRevocations return when their
// context ends.
func testFeedListenEnds(t *testing.T, open func(t *testing.T) (a, b FeedNode)) {
	ctx, cancel := context.WithCancel(context.Background())
	a, _ := open(t)
	l := listen(ctx, t, a)
	cancel()
	for range 2 {
		select {
		case <-l.done:
		case <-time.After(feedWait):
			t.Fatal("a listener went on after its context ended")
		}
	}
}
