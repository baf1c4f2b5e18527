package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

func chatMsg(channel, author, req, body string) store.ChatMessage {
	return store.ChatMessage{Match: "m1", Channel: channel, Author: author, RequestID: req, Body: body, Time: t0}
}

// testChat: each channel numbers its messages from 1, a page ends at its
// limit and the next resumes after it, a retried post returns the stored
// message, and the cap refuses a post without writing it.
func testChat(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 5 {
		m, fresh, err := s.PostChat(ctx, chatMsg(store.ChatPlayers, "p1", fmt.Sprint("r", i), fmt.Sprint("hello ", i)), 5)
		if err != nil || !fresh || m.Seq != int64(i+1) || !m.Time.Equal(t0) {
			t.Fatalf("post %d = %+v, %v, %v", i, m, fresh, err)
		}
	}
	if m, _, err := s.PostChat(ctx, chatMsg(store.ChatSpectators, "p9", "r0", "other channel"), 5); err != nil || m.Seq != 1 {
		t.Fatalf("spectators' first post = %+v, %v; want seq 1", m, err)
	}
	// A retry returns the stored message; a request id reused for another
	// body is refused.
	if m, fresh, err := s.PostChat(ctx, chatMsg(store.ChatPlayers, "p1", "r2", "hello 2"), 5); err != nil || fresh || m.Seq != 3 {
		t.Fatalf("retry = %+v, %v, %v; want seq 3, not fresh", m, fresh, err)
	}
	if _, _, err := s.PostChat(ctx, chatMsg(store.ChatPlayers, "p1", "r2", "changed"), 5); !errors.Is(err, store.ErrRequestMismatch) {
		t.Fatalf("reused request id = %v; want ErrRequestMismatch", err)
	}
	// The channel is full at 5: the sixth post writes nothing.
	if _, _, err := s.PostChat(ctx, chatMsg(store.ChatPlayers, "p2", "x", "one too many"), 5); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("post beyond the cap = %v; want ErrQuota", err)
	}
	if latest, err := s.LatestChat(ctx, "m1", store.ChatPlayers); err != nil || latest != 5 {
		t.Fatalf("latest = %d, %v; want 5", latest, err)
	}
	// Pages of 2: 1-2, 3-4, 5, then none.
	var seen []int64
	for after := int64(0); ; {
		page, err := s.ChatMessages(ctx, "m1", store.ChatPlayers, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			seen = append(seen, m.Seq)
			after = m.Seq
		}
	}
	if fmt.Sprint(seen) != "[1 2 3 4 5]" {
		t.Fatalf("paged seqs = %v", seen)
	}
	if latest, err := s.LatestChat(ctx, "m2", store.ChatPlayers); err != nil || latest != 0 {
		t.Fatalf("latest of an empty channel = %d, %v", latest, err)
	}
}

// testChatConcurrent: concurrent posts to one channel get distinct seqs
// 1..n with no gap.
func testChatConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := s.PostChat(ctx, chatMsg(store.ChatPlayers, fmt.Sprint("p", i), "r", "hi"), 1000)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ms, err := s.ChatMessages(ctx, "m1", store.ChatPlayers, 0, 100)
	if err != nil || len(ms) != n {
		t.Fatalf("messages = %d, %v; want %d", len(ms), err, n)
	}
	for i, m := range ms {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
	}
}

func testChatMutesReports(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, p := range []string{"p2", "p3", "p2"} {
		if err := s.MuteChat(ctx, "m1", "p1", p, true, 2); err != nil {
			t.Fatalf("mute %s: %v", p, err)
		}
	}
	if err := s.MuteChat(ctx, "m1", "p1", "p4", true, 2); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("third mute = %v; want ErrQuota", err)
	}
	if ms, err := s.ChatMutes(ctx, "m1", "p1"); err != nil || fmt.Sprint(ms) != "[p2 p3]" {
		t.Fatalf("mutes = %v, %v", ms, err)
	}
	if err := s.MuteChat(ctx, "m1", "p1", "p2", false, 2); err != nil {
		t.Fatal(err)
	}
	if ms, err := s.ChatMutes(ctx, "m1", "p1"); err != nil || fmt.Sprint(ms) != "[p3]" {
		t.Fatalf("mutes after unmute = %v, %v", ms, err)
	}
	if ms, err := s.ChatMutes(ctx, "m2", "p1"); err != nil || len(ms) != 0 {
		t.Fatalf("another match's mutes = %v, %v", ms, err)
	}
	r := store.ChatReport{Match: "m1", Channel: store.ChatPlayers, Seq: 1, Reporter: "p1", Reason: "rude", Time: t0}
	if fresh, err := s.ReportChat(ctx, r); err != nil || !fresh {
		t.Fatalf("report = %v, %v", fresh, err)
	}
	if fresh, err := s.ReportChat(ctx, r); err != nil || fresh {
		t.Fatalf("second report = %v, %v; want not fresh", fresh, err)
	}
	if rs, err := s.ChatReports(ctx, "m1", 10); err != nil || len(rs) != 1 || rs[0] != r {
		t.Fatalf("reports = %+v, %v", rs, err)
	}
}

func testFriends(t *testing.T, s store.Store) {
	ctx := context.Background()
	if both, err := s.RequestFriend(ctx, "a", "b", t0, 10, store.FriendNotices{}); err != nil || both {
		t.Fatalf("request = %v, %v", both, err)
	}
	if _, err := s.RequestFriend(ctx, "a", "b", t0, 10, store.FriendNotices{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second request = %v; want ErrExists", err)
	}
	if rs, err := s.FriendRequests(ctx, "b", true, "", 10); err != nil || len(rs) != 1 || rs[0] != (store.FriendRequest{From: "a", To: "b", Time: t0}) {
		t.Fatalf("b's incoming = %+v, %v", rs, err)
	}
	if err := s.AnswerFriend(ctx, "a", "b", true, t0, 10, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerFriend(ctx, "a", "b", true, t0, 10, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second accept = %v; want ErrNotFound", err)
	}
	if _, err := s.RequestFriend(ctx, "b", "a", t0, 10, store.FriendNotices{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("request between friends = %v; want ErrExists", err)
	}
	// Crossing requests make friends at once.
	if _, err := s.RequestFriend(ctx, "c", "a", t0, 10, store.FriendNotices{}); err != nil {
		t.Fatal(err)
	}
	if both, err := s.RequestFriend(ctx, "a", "c", t0, 10, store.FriendNotices{}); err != nil || !both {
		t.Fatalf("crossing request = %v, %v; want friends", both, err)
	}
	// Declined and cancelled requests leave nothing.
	if _, err := s.RequestFriend(ctx, "d", "a", t0, 10, store.FriendNotices{}); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerFriend(ctx, "d", "a", false, t0, 10, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestFriend(ctx, "a", "e", t0, 10, store.FriendNotices{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CancelFriend(ctx, "a", "e"); err != nil {
		t.Fatal(err)
	}
	if err := s.CancelFriend(ctx, "a", "e"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second cancel = %v", err)
	}
	// a's friends b and c, in pages of one.
	var got []string
	for after := ""; ; {
		fs, err := s.Friends(ctx, "a", after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) == 0 {
			break
		}
		got = append(got, fs[0].Player)
		after = fs[0].Player
	}
	if fmt.Sprint(got) != "[b c]" {
		t.Fatalf("a's friends = %v", got)
	}
	if fs, err := s.Friends(ctx, "b", "", 10); err != nil || len(fs) != 1 || fs[0].Player != "a" {
		t.Fatalf("b's friends = %+v, %v", fs, err)
	}
	if err := s.Unfriend(ctx, "b", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Unfriend(ctx, "b", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second unfriend = %v", err)
	}
	if fs, err := s.Friends(ctx, "a", "", 10); err != nil || len(fs) != 1 || fs[0].Player != "c" {
		t.Fatalf("a's friends after unfriend = %+v, %v", fs, err)
	}
}

// testFriendCaps: a player holds at most max pending requests; a refused
// request writes nothing.
func testFriendCaps(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, to := range []string{"b", "c"} {
		if _, err := s.RequestFriend(ctx, "a", to, t0, 2, store.FriendNotices{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RequestFriend(ctx, "a", "d", t0, 2, store.FriendNotices{}); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("third sent = %v; want ErrQuota", err)
	}
	for _, from := range []string{"x", "y"} {
		if _, err := s.RequestFriend(ctx, from, "z", t0, 2, store.FriendNotices{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RequestFriend(ctx, "w", "z", t0, 2, store.FriendNotices{}); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("third received = %v; want ErrQuota", err)
	}
	if rs, err := s.FriendRequests(ctx, "d", true, "", 10); err != nil || len(rs) != 0 {
		t.Fatalf("a refused request was written: %+v, %v", rs, err)
	}
	if rs, err := s.FriendRequests(ctx, "a", false, "b", 10); err != nil || len(rs) != 1 || rs[0].To != "c" {
		t.Fatalf("a's sent after b = %+v, %v", rs, err)
	}
}

func testBlocks(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.RequestFriend(ctx, "a", "b", t0, 10, store.FriendNotices{}); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerFriend(ctx, "a", "b", true, t0, 10, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestFriend(ctx, "c", "a", t0, 10, store.FriendNotices{}); err != nil {
		t.Fatal(err)
	}
	// Blocking ends the friendship and the pending request.
	for _, p := range []string{"b", "c", "b"} {
		if err := s.Block(ctx, "a", p, t0, 2); err != nil {
			t.Fatalf("block %s: %v", p, err)
		}
	}
	if err := s.Block(ctx, "a", "d", t0, 2); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("third block = %v; want ErrQuota", err)
	}
	if fs, err := s.Friends(ctx, "b", "", 10); err != nil || len(fs) != 0 {
		t.Fatalf("b's friends after the block = %+v, %v", fs, err)
	}
	if rs, err := s.FriendRequests(ctx, "a", true, "", 10); err != nil || len(rs) != 0 {
		t.Fatalf("a's requests after the block = %+v, %v", rs, err)
	}
	if err := s.Block(ctx, "e", "a", t0, 2); err != nil {
		t.Fatal(err)
	}
	pairs, err := s.BlockedPairs(ctx, []string{"a", "b", "e", "z"})
	if err != nil || fmt.Sprint(pairs) != "[[a b] [e a]]" {
		t.Fatalf("blocked pairs = %v, %v", pairs, err)
	}
	if bs, err := s.Blocks(ctx, "a", "b", 10); err != nil || len(bs) != 1 || bs[0].Player != "c" {
		t.Fatalf("a's blocks after b = %+v, %v", bs, err)
	}
	if err := s.Unblock(ctx, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Unblock(ctx, "a", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second unblock = %v", err)
	}
}

// testPresence: a later touch wins, an earlier one changes nothing, and
// players never seen are left out; the same of watched times.
func testPresence(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.TouchPlayers(ctx, []string{"a", "b", "a"}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchPlayers(ctx, []string{"a"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchPlayers(ctx, []string{"b"}, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	seen, err := s.SeenPlayers(ctx, []string{"a", "b", "c"})
	if err != nil || len(seen) != 2 || !seen["a"].Equal(t0.Add(time.Minute)) || !seen["b"].Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("seen = %v, %v", seen, err)
	}

	// Watchers: a later time wins, a watcher is seen too, Unwatched
	// clears the watched time and leaves the seen one.
	for _, at := range []time.Time{t0.Add(3 * time.Minute), t0.Add(time.Minute)} {
		if err := s.TouchWatchers(ctx, []string{"a", "c", "c"}, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a", "c"} {
		if at, err := s.WatchedAt(ctx, p); err != nil || !at.Equal(t0.Add(3*time.Minute)) {
			t.Fatalf("%s watched at %v, %v", p, at, err)
		}
	}
	if at, err := s.WatchedAt(ctx, "b"); err != nil || !at.IsZero() {
		t.Fatalf("b (never watched) watched at %v, %v", at, err)
	}
	if at, err := s.WatchedAt(ctx, "z"); err != nil || !at.IsZero() {
		t.Fatalf("z (never seen) watched at %v, %v", at, err)
	}
	if err := s.Unwatched(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if at, err := s.WatchedAt(ctx, "a"); err != nil || !at.IsZero() {
		t.Fatalf("a unwatched: watched at %v, %v", at, err)
	}
	seen, err = s.SeenPlayers(ctx, []string{"a", "c"})
	if err != nil || !seen["a"].Equal(t0.Add(3*time.Minute)) || !seen["c"].Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("seen after watching = %v, %v", seen, err)
	}
	if err := s.TouchWatchers(ctx, []string{"a"}, t0.Add(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if at, err := s.WatchedAt(ctx, "a"); err != nil || !at.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("a watched again at %v, %v", at, err)
	}
}

// testFriendNotices: a request writes its Requested notice to the
// receiver's log after the notices it had (from an append), numbered on;
// crossing requests write Accepted instead; an accept writes its notice to
// the requester's log and queues it for delivery; a decline, a refused
// request and a second accept write none.
func testFriendNotices(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 1), Command: cmd("create-m1"), Events: events(1, "c"), Time: t0,
		Notices: []store.Notice{notice("b", "m1", "turn", false)}}); err != nil {
		t.Fatal(err)
	}
	notes := func(to, tag string) store.FriendNotices {
		req, acc := notice(to, "", "req-"+tag, false), notice(to, "", "acc-"+tag, false)
		return store.FriendNotices{Requested: &req, Accepted: &acc}
	}
	if _, err := s.RequestFriend(ctx, "a", "b", t0, 10, notes("b", "ab")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestFriend(ctx, "a", "b", t0, 10, notes("b", "again")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second request = %v; want ErrExists", err)
	}
	acc := notice("a", "", "accepted-by-b", true)
	if err := s.AnswerFriend(ctx, "a", "b", true, t0, 10, &acc); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerFriend(ctx, "a", "b", true, t0, 10, &acc); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second accept = %v; want ErrNotFound", err)
	}
	// Crossing requests: c asks a, a asks c; c hears that a accepted.
	if _, err := s.RequestFriend(ctx, "c", "a", t0, 10, notes("a", "ca")); err != nil {
		t.Fatal(err)
	}
	if both, err := s.RequestFriend(ctx, "a", "c", t0, 10, notes("c", "ac")); err != nil || !both {
		t.Fatalf("crossing request = %v, %v", both, err)
	}
	// A declined request: d's request notice only.
	if _, err := s.RequestFriend(ctx, "d", "a", t0, 10, notes("a", "da")); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerFriend(ctx, "d", "a", false, t0, 10, &acc); err != nil {
		t.Fatal(err)
	}
	if got := noticeTags(t, s, "b"); !slices.Equal(got, []string{"turn", "req-ab"}) {
		t.Errorf("b's notices %v", got)
	}
	if got := noticeTags(t, s, "a"); !slices.Equal(got, []string{"accepted-by-b", "req-ca", "req-da"}) {
		t.Errorf("a's notices %v", got)
	}
	if got := noticeTags(t, s, "c"); !slices.Equal(got, []string{"acc-ac"}) {
		t.Errorf("c's notices %v", got)
	}
	if ns, err := s.Notices(ctx, "b", 1, 10); err != nil || len(ns) != 1 || ns[0].Match != "" || !ns[0].Time.Equal(t0) {
		t.Errorf("b's friend notice: %+v, %v", ns, err)
	}
	ds, err := s.ClaimDeliveries(ctx, t0, t0.Add(time.Minute), 10)
	if err != nil || len(ds) != 1 || ds[0].Notice.Player != "a" || string(ds[0].Notice.Payload) != "accepted-by-b" {
		t.Errorf("deliveries = %+v, %v; want a's accepted notice", ds, err)
	}
}
