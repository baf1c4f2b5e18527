package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

func (c *client) chat() hangarv1.ChatServiceClient { return hangarv1.NewChatServiceClient(c.conn) }
func (c *client) friends() hangarv1.FriendServiceClient {
	return hangarv1.NewFriendServiceClient(c.conn)
}

const (
	playersChannel    = hangarv1.ChatChannel_CHAT_CHANNEL_PLAYERS
	spectatorsChannel = hangarv1.ChatChannel_CHAT_CHANNEL_SPECTATORS
)

// say posts text to a channel of match as c and returns the message.
func (c *client) say(t *testing.T, match string, ch hangarv1.ChatChannel, text string) *hangarv1.ChatMessage {
	t.Helper()
	r, err := c.chat().PostChatMessage(c.ctx(), &hangarv1.PostChatMessageRequest{MatchId: match, Channel: ch, Text: text, RequestId: reqID()})
	if err != nil {
		t.Fatalf("PostChatMessage by %s: %v", c.id, err)
	}
	return r.GetMessage()
}

// heard lists every message of a channel of match that c hears, as
// "seq:text", paging with size.
func (c *client) heard(t *testing.T, match string, ch hangarv1.ChatChannel, size int32) []string {
	t.Helper()
	var out []string
	tok := ""
	for {
		r, err := c.chat().ListChatMessages(c.ctx(), &hangarv1.ListChatMessagesRequest{MatchId: match, Channel: ch, PageSize: size, PageToken: tok})
		if err != nil {
			t.Fatalf("ListChatMessages by %s: %v", c.id, err)
		}
		for _, m := range r.GetMessages() {
			out = append(out, fmt.Sprintf("%d:%s", m.GetSeq(), m.GetText()))
		}
		if tok = r.GetNextPageToken(); tok == "" {
			return out
		}
	}
}

// TestChatChannels: the players' channel is the seated players', the
// spectators' everyone else's; a retry posts once; bad input is refused
// and writes nothing; pages end at their boundary; mutes, blocks and
// reports.
func TestChatChannels(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		id := m.GetMatchId()
		cy := newClient(t, n.Addr(), "Cy")

		// The caller's own channel by default.
		if msg := ada.say(t, id, hangarv1.ChatChannel_CHAT_CHANNEL_UNSPECIFIED, "good luck"); msg.GetSeq() != 1 || msg.GetChannel() != playersChannel || msg.GetAuthorId() != ada.id {
			t.Fatalf("Ada's first message: %v", msg)
		}
		if msg := cy.say(t, id, hangarv1.ChatChannel_CHAT_CHANNEL_UNSPECIFIED, "go Ada"); msg.GetSeq() != 1 || msg.GetChannel() != spectatorsChannel {
			t.Fatalf("Cy's first message: %v", msg)
		}
		// A spectator neither reads nor writes the players' channel; a
		// player does not write to the spectators' during play, but reads it.
		_, err := cy.chat().ListChatMessages(cy.ctx(), &hangarv1.ListChatMessagesRequest{MatchId: id, Channel: playersChannel})
		wantCode(t, "a spectator lists the players' channel", err, codes.PermissionDenied, "CHAT_CHANNEL_CLOSED")
		_, err = cy.chat().PostChatMessage(cy.ctx(), &hangarv1.PostChatMessageRequest{MatchId: id, Channel: playersChannel, Text: "psst"})
		wantCode(t, "a spectator posts to the players' channel", err, codes.PermissionDenied, "CHAT_CHANNEL_CLOSED")
		_, err = ada.chat().PostChatMessage(ada.ctx(), &hangarv1.PostChatMessageRequest{MatchId: id, Channel: spectatorsChannel, Text: "hi all"})
		wantCode(t, "a player posts to the spectators' channel in play", err, codes.PermissionDenied, "CHAT_CHANNEL_CLOSED")
		if got := ada.heard(t, id, spectatorsChannel, 0); fmt.Sprint(got) != "[1:go Ada]" {
			t.Fatalf("Ada reads the spectators' channel as %v", got)
		}

		// A retry is answered with the stored message.
		req := &hangarv1.PostChatMessageRequest{MatchId: id, Text: "thanks", RequestId: reqID()}
		first, err := bob.chat().PostChatMessage(bob.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := bob.chat().PostChatMessage(bob.ctx(), req)
		if err != nil || again.GetMessage().GetSeq() != first.GetMessage().GetSeq() {
			t.Fatalf("retry = %v, %v; want seq %d", again, err, first.GetMessage().GetSeq())
		}
		req.Text = "something else"
		_, err = bob.chat().PostChatMessage(bob.ctx(), req)
		wantCode(t, "a request id reused", err, codes.AlreadyExists, "REQUEST_ID_REUSED")
		for _, text := range []string{"", strings.Repeat("x", 501), "a\x00b"} {
			_, err := bob.chat().PostChatMessage(bob.ctx(), &hangarv1.PostChatMessageRequest{MatchId: id, Text: text})
			wantCode(t, fmt.Sprintf("a text of %d bytes", len(text)), err, codes.InvalidArgument, "INVALID_ARGUMENT")
		}
		_, err = bob.chat().PostChatMessage(bob.ctx(), &hangarv1.PostChatMessageRequest{MatchId: id, Text: "hi", Channel: 7})
		wantCode(t, "an unknown channel", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		want := "[1:good luck 2:thanks]"
		if got := bob.heard(t, id, playersChannel, 0); fmt.Sprint(got) != want {
			t.Fatalf("after the refusals the players' channel is %v, want %v", got, want)
		}

		// Page boundaries: 4 messages in pages of 2 give two pages, the
		// second without a token; in pages of 3, a full page then one.
		ada.say(t, id, 0, "three")
		bob.say(t, id, 0, "four")
		r, err := ada.chat().ListChatMessages(ada.ctx(), &hangarv1.ListChatMessagesRequest{MatchId: id, PageSize: 2})
		if err != nil || len(r.GetMessages()) != 2 || r.GetNextPageToken() == "" {
			t.Fatalf("first page of 2: %v, %v", r, err)
		}
		r, err = ada.chat().ListChatMessages(ada.ctx(), &hangarv1.ListChatMessagesRequest{MatchId: id, PageSize: 2, PageToken: r.GetNextPageToken()})
		if err != nil || len(r.GetMessages()) != 2 || r.GetMessages()[1].GetSeq() != 4 || r.GetNextPageToken() != "" {
			t.Fatalf("second page of 2, at the end: %v, %v", r, err)
		}
		if got := ada.heard(t, id, 0, 3); fmt.Sprint(got) != "[1:good luck 2:thanks 3:three 4:four]" {
			t.Fatalf("pages of 3: %v", got)
		}
		_, err = ada.chat().ListChatMessages(ada.ctx(), &hangarv1.ListChatMessagesRequest{MatchId: id, PageToken: "nonsense"})
		wantCode(t, "a bad page token", err, codes.InvalidArgument, "INVALID_ARGUMENT")

		// Bob mutes Ada: he no longer hears her; she still hears all.
		if _, err := bob.chat().MuteChatPlayer(bob.ctx(), &hangarv1.MuteChatPlayerRequest{MatchId: id, PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		if got := bob.heard(t, id, 0, 0); fmt.Sprint(got) != "[2:thanks 4:four]" {
			t.Fatalf("Bob, having muted Ada, hears %v", got)
		}
		if got := ada.heard(t, id, 0, 0); len(got) != 4 {
			t.Fatalf("Ada hears %v", got)
		}
		if _, err := bob.chat().MuteChatPlayer(bob.ctx(), &hangarv1.MuteChatPlayerRequest{MatchId: id, PlayerId: ada.id, Unmute: true}); err != nil {
			t.Fatal(err)
		}
		if got := bob.heard(t, id, 0, 0); len(got) != 4 {
			t.Fatalf("Bob, having unmuted Ada, hears %v", got)
		}
		// A block silences her too, in every match.
		if _, err := bob.friends().BlockPlayer(bob.ctx(), &hangarv1.BlockPlayerRequest{PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		if got := bob.heard(t, id, 0, 0); fmt.Sprint(got) != "[2:thanks 4:four]" {
			t.Fatalf("Bob, having blocked Ada, hears %v", got)
		}

		// Reports: of a message the reporter may read, once.
		for range 2 {
			if _, err := bob.chat().ReportChatMessage(bob.ctx(), &hangarv1.ReportChatMessageRequest{MatchId: id, Seq: 1, Reason: "rude"}); err != nil {
				t.Fatal(err)
			}
		}
		_, err = bob.chat().ReportChatMessage(bob.ctx(), &hangarv1.ReportChatMessageRequest{MatchId: id, Seq: 99})
		wantCode(t, "a report of no message", err, codes.NotFound, "NOT_FOUND")
		_, err = cy.chat().ReportChatMessage(cy.ctx(), &hangarv1.ReportChatMessageRequest{MatchId: id, Channel: playersChannel, Seq: 1})
		wantCode(t, "a spectator reports a player's message", err, codes.PermissionDenied, "CHAT_CHANNEL_CLOSED")

		// An unknown match.
		_, err = ada.chat().PostChatMessage(ada.ctx(), &hangarv1.PostChatMessageRequest{MatchId: "m_nope", Text: "hello"})
		wantCode(t, "a post to an unknown match", err, codes.NotFound, "NOT_FOUND")
	})
}

// TestChatRateLimit: a player's posts beyond the chat bucket are refused
// with RATE_LIMITED and write nothing.
func TestChatRateLimit(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		lim := service.DefaultLimits()
		lim.ChatRate, lim.ChatBurst = 0.001, 3
		cfg.Service.Limits = &lim
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		for i := range 3 {
			ada.say(t, m.GetMatchId(), 0, fmt.Sprint("m", i))
		}
		_, err := ada.chat().PostChatMessage(ada.ctx(), &hangarv1.PostChatMessageRequest{MatchId: m.GetMatchId(), Text: "one too many"})
		wantCode(t, "a post beyond the burst", err, codes.ResourceExhausted, "RATE_LIMITED")
		// Bob has a bucket of his own.
		bob.say(t, m.GetMatchId(), 0, "mine")
		if got := bob.heard(t, m.GetMatchId(), 0, 0); len(got) != 4 {
			t.Fatalf("channel = %v; want 4 messages", got)
		}
	})
}

// chatWatch is an open WatchChat stream read by a goroutine.
type chatWatch struct {
	ch     chan *hangarv1.ChatMessage
	done   chan error
	cancel context.CancelFunc
}

func watchChat(t *testing.T, c *client, match string, after int64) *chatWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(c.ctx())
	t.Cleanup(cancel)
	stream, err := c.chat().WatchChat(ctx, &hangarv1.WatchChatRequest{MatchId: match, AfterSeq: after})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatalf("WatchChat: %v", err)
	}
	w := &chatWatch{ch: make(chan *hangarv1.ChatMessage, 1024), done: make(chan error, 1), cancel: cancel}
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				w.done <- err
				return
			}
			w.ch <- resp.GetMessage()
		}
	}()
	return w
}

func (w *chatWatch) next(t *testing.T) *hangarv1.ChatMessage {
	t.Helper()
	select {
	case m := <-w.ch:
		return m
	case err := <-w.done:
		t.Fatalf("WatchChat ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no chat message within 10s")
	}
	return nil
}

// expect reads the watch's next messages and fails unless their seqs are
// want, in order.
func (w *chatWatch) expect(t *testing.T, want ...int64) {
	t.Helper()
	for _, s := range want {
		if m := w.next(t); m.GetSeq() != s {
			t.Fatalf("watch sent seq %d (%q), want %d", m.GetSeq(), m.GetText(), s)
		}
	}
}

// TestWatchChatResumes: a watch gets the stored messages and then live
// ones; dropped and resumed after the last seq seen, it gets exactly the
// ones after it (no gap, no repeat) and keeps going; a muted author's
// messages are skipped; after_seq beyond the latest is OUT_OF_RANGE.
func TestWatchChatResumes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		id := m.GetMatchId()
		ada.say(t, id, 0, "one")
		ada.say(t, id, 0, "two")
		w := watchChat(t, bob, id, 0)
		w.expect(t, 1, 2)
		ada.say(t, id, 0, "three")
		w.expect(t, 3)
		w.cancel()
		// Posted while Bob is away.
		ada.say(t, id, 0, "four")
		bob.say(t, id, 0, "five")
		w = watchChat(t, bob, id, 3)
		w.expect(t, 4, 5)
		ada.say(t, id, 0, "six")
		w.expect(t, 6)
		// Muted, Ada's seventh is skipped; Bob's eighth comes next.
		if _, err := bob.chat().MuteChatPlayer(bob.ctx(), &hangarv1.MuteChatPlayerRequest{MatchId: id, PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		ada.say(t, id, 0, "seven")
		bob.say(t, id, 0, "eight")
		w.expect(t, 8)
		select {
		case m := <-w.ch:
			t.Fatalf("an extra message after the last: %v", m)
		default:
		}
		stream, err := bob.chat().WatchChat(bob.ctx(), &hangarv1.WatchChatRequest{MatchId: id, AfterSeq: 9})
		if err == nil {
			_, err = stream.Recv()
		}
		wantCode(t, "after_seq beyond the latest", err, codes.OutOfRange, "OUT_OF_RANGE")
	})
}

// TestWatchChatAcrossNodes: Bob watches the chat on node b; Ada posts on
// node a: each message reaches him, through each bus.
func TestWatchChatAcrossNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, func(t *testing.T, cfg server.Config) {
		a, b := node(t, cfg), node(t, cfg)
		m, ada, bob := startedMatch(t, a.Addr())
		id := m.GetMatchId()
		w := watchChat(t, bob.reconnect(t, b.Addr()), id, 0)
		for i := range 3 {
			ada.say(t, id, 0, fmt.Sprint("from a ", i))
			w.expect(t, int64(i+1))
		}
	})
}

// TestChatOfAPrivateMatch: Dan, invited, reads and writes the spectators'
// channel of the private match; Eve, a stranger, is answered as on a
// match that does not exist (TestStrangerLearnsNothingOfPrivateMatches
// checks every RPC so).
func TestChatOfAPrivateMatch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		f := newPrivateFixture(t, cfg)
		f.ada.say(t, f.live, 0, "gl")
		if msg := f.dan.say(t, f.live, 0, "watching"); msg.GetChannel() != spectatorsChannel {
			t.Fatalf("Dan's message: %v", msg)
		}
		_, err := f.eve.chat().ListChatMessages(f.eve.ctx(), &hangarv1.ListChatMessagesRequest{MatchId: f.live})
		wantCode(t, "a stranger lists the chat of a private match", err, codes.NotFound, "NOT_FOUND")
		_, err = f.eve.chat().PostChatMessage(f.eve.ctx(), &hangarv1.PostChatMessageRequest{MatchId: f.live, Text: "hi"})
		wantCode(t, "a stranger posts to a private match", err, codes.NotFound, "NOT_FOUND")
		if got := f.ada.heard(t, f.live, spectatorsChannel, 0); fmt.Sprint(got) != "[1:watching]" {
			t.Fatalf("spectators' channel: %v", got)
		}
	})
}

// TestChatWatchesAreCapped: chat watches count with a player's other
// watch streams: one past Limits.Watches is RESOURCE_EXHAUSTED
// (TOO_MANY_WATCHES), and closing one makes room.
func TestChatWatchesAreCapped(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		lim := service.DefaultLimits()
		lim.Watches = 2
		cfg.Service.Limits = &lim
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		ada.say(t, m.GetMatchId(), 0, "hello")
		// open opens a watch and reads its first message: the stored one,
		// or the refusal.
		open := func() error {
			ctx, cancel := context.WithCancel(bob.ctx())
			defer cancel()
			s, err := bob.chat().WatchChat(ctx, &hangarv1.WatchChatRequest{MatchId: m.GetMatchId()})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		}
		first := watchChat(t, bob, m.GetMatchId(), 0)
		watchChat(t, bob, m.GetMatchId(), 0)
		wantCode(t, "a third watch", open(), codes.ResourceExhausted, "TOO_MANY_WATCHES")
		first.cancel()
		<-first.done
		// The server releases the watch when its handler returns, a moment
		// after the client's cancel: retry until it has.
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := open()
			if err == nil {
				break
			}
			if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
				t.Fatalf("no room after closing a watch: %v", err)
			}
		}
	})
}
