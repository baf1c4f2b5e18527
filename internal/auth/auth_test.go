package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/store"
)

// sessionStore answers session look-ups from a map and counts them; it
// has no other method but DeletedPlayers, which finds none.
type sessionStore struct {
	store.Store
	sessions map[string]store.Session
	singles  int
	batches  [][][]byte
	fail     error
}

func (f *sessionStore) DeletedPlayers(context.Context, time.Time) ([]string, error) { return nil, nil }

func (f *sessionStore) Session(_ context.Context, h []byte) (store.Session, error) {
	f.singles++
	ss, ok := f.sessions[string(h)]
	if !ok {
		return ss, store.ErrNotFound
	}
	return ss, nil
}

func (f *sessionStore) Sessions(_ context.Context, hs [][]byte) (map[string]store.Session, error) {
	f.batches = append(f.batches, hs)
	if f.fail != nil {
		return nil, f.fail
	}
	out := map[string]store.Session{}
	for _, h := range hs {
		if ss, ok := f.sessions[string(h)]; ok {
			out[string(h)] = ss
		}
	}
	return out, nil
}

// TestSweepReadsSessionsInOneCall: the re-check of a node's streams reads
// the sessions not read within recheck in one store call, however many
// (here 2,400 sessions, more than two store pages, behind 2,500 streams),
// and ends exactly the streams of sessions revoked, expired or gone, each
// with its reason; a session cached within recheck is not read again, yet
// its stream ends if it expired since.
func TestSweepReadsSessionsInOneCall(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const recheck = 5 * time.Second
	st := &sessionStore{sessions: map[string]store.Session{}}
	a := newAuthenticator(st, clock, recheck)
	const n = 2400
	want := map[string]error{} // hash -> the stream's end (nil: goes on)
	for i := range n {
		h := fmt.Sprintf("h%04d", i)
		ss := store.Session{Player: store.Player{ID: fmt.Sprint("p", i%50)}, Created: now.Add(-time.Hour), Expires: now.Add(time.Hour)}
		switch i % 8 {
		case 1:
			ss.Revoked = now.Add(-time.Second)
			want[h] = ErrTokenRevoked
		case 2:
			ss.Expires = now
			want[h] = ErrTokenExpired
		case 3:
			want[h] = fault.ErrUnauthenticated // deleted: not in the store
			continue
		default:
			want[h] = nil
		}
		st.sessions[h] = ss
	}
	// Two sessions were read a moment ago: one is still valid, the other
	// has expired since.
	a.cache["h0000"] = cachedSession{st.sessions["h0000"], now.Add(-time.Second)}
	expired := st.sessions["h0008"]
	expired.Expires = now.Add(-time.Millisecond)
	a.cache["h0008"] = cachedSession{expired, now.Add(-time.Second)}
	want["h0008"] = ErrTokenExpired
	streams := map[*authedStream]string{}
	for i := range n + 100 {
		h := fmt.Sprintf("h%04d", i%n) // the first 100 sessions have two streams
		ctx, cancel := context.WithCancelCause(context.Background())
		s := &authedStream{ctx: ctx, hash: h, cancel: cancel}
		a.streams[s] = struct{}{}
		streams[s] = h
	}

	a.sweep(context.Background())
	if len(st.batches) != 1 || len(st.batches[0]) != n-2 || st.singles != 0 {
		t.Fatalf("the sweep read %d batches (the first of %d hashes) and %d single sessions; want one batch of %d",
			len(st.batches), len(st.batches[0]), st.singles, n-2)
	}
	for s, h := range streams {
		got := context.Cause(s.ctx)
		if w := want[h]; (w == nil && got != nil) || (w != nil && !errors.Is(got, w)) {
			t.Errorf("stream of %s ended with %v, want %v", h, got, w)
		}
	}
	// The ended streams return (streamAuth unregisters them). What was
	// read is cached: a sweep within recheck reads nothing.
	for s := range a.streams {
		if context.Cause(s.ctx) != nil {
			delete(a.streams, s)
		}
	}
	a.sweep(context.Background())
	if len(st.batches) != 1 {
		t.Fatalf("a second sweep within recheck read the store again (%d batches)", len(st.batches))
	}
	// A store that fails ends no stream; the next sweep tries again.
	now = now.Add(recheck)
	st.fail = store.ErrUnavailable
	a.sweep(context.Background())
	for s := range a.streams {
		if err := context.Cause(s.ctx); err != nil {
			t.Fatalf("stream of %s ended with %v while the store failed", s.hash, err)
		}
	}
	if len(st.batches) != 2 || len(st.batches[1]) == 0 {
		t.Fatalf("the sweep after recheck read %d batches", len(st.batches))
	}
}
