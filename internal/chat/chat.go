// Package chat owns the matches' chat: who may read and write which
// channel of a match, posting (length, rate and size limits), reading a
// page of a channel, watching it by seq, mutes and reports, and the
// filter that keeps from a reader the messages of the players it muted or
// blocked.
//
// A match has two channels, as on lichess: the players' (read and written
// by the players seated in the match) and the spectators' (read and
// written by everyone else who may see the match; a seated player may read
// it, and write to it once the match has ended, when the players' and the
// spectators' talk may meet). A private match's chat is as hidden as the
// match: a caller who may not see the match gets match.Hidden, the answer
// an unknown id gets, from every call.
//
// chat may import fault, limit, match, notice, page, store and api; only
// package service imports it.
package chat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/notice"
	"github.com/hangarhq/hangar/internal/page"
	"github.com/hangarhq/hangar/store"
)

// Limits of the chat.
const (
	// MaxText is the most characters of a message or a report's reason.
	MaxText = 500
	// MaxMessages is the most messages a channel holds.
	MaxMessages = 10_000
	// MaxMutes is the most players one player mutes in one match.
	MaxMutes = 100
	// maxRequestID bounds a post's request id.
	maxRequestID = 128
)

// Errors of the chat (each wraps a fault umbrella).
var (
	ErrChannelClosed = fmt.Errorf("%w: you may not use this chat channel of the match", fault.ErrPermission)
	ErrFull          = fmt.Errorf("%w: the chat channel is full", fault.ErrExhausted)
	ErrTooManyMutes  = fmt.Errorf("%w: too many players muted in this match", fault.ErrExhausted)
)

// Chat reads and writes the matches' chat.
type Chat struct {
	Writer *match.Writer
	Store  store.Store
	// Hub wakes a node's chat watchers by Key(match).
	Hub    *notice.Hub
	Limits *limit.Limiter
	Now    func() time.Time
	// Posted is told of each new message after its commit (it wakes the
	// match's watchers here and on other nodes).
	Posted func(match string)
	// Closing is closed when the node drains: watches end.
	Closing <-chan struct{}
}

// Key is the wake-up key of match's chat: a key no player id takes, so
// that the notices' hub and feed carry it beside players' (see
// service.New).
func Key(matchID string) string { return "chat:" + matchID }

// MatchOf is the match of a Key, or "" for a player's key.
func MatchOf(key string) string {
	if len(key) > 5 && key[:5] == "chat:" {
		return key[5:]
	}
	return ""
}

// channel is ch's stored name, for a caller seated (or not) in a match.
func channel(ch hangarv1.ChatChannel, seated bool) (string, error) {
	switch ch {
	case hangarv1.ChatChannel_CHAT_CHANNEL_PLAYERS:
		return store.ChatPlayers, nil
	case hangarv1.ChatChannel_CHAT_CHANNEL_SPECTATORS:
		return store.ChatSpectators, nil
	case hangarv1.ChatChannel_CHAT_CHANNEL_UNSPECIFIED:
		if seated {
			return store.ChatPlayers, nil
		}
		return store.ChatSpectators, nil
	}
	return "", fmt.Errorf("%w: unknown channel", fault.ErrInvalid)
}

func apiChannel(ch string) hangarv1.ChatChannel {
	if ch == store.ChatPlayers {
		return hangarv1.ChatChannel_CHAT_CHANNEL_PLAYERS
	}
	return hangarv1.ChatChannel_CHAT_CHANNEL_SPECTATORS
}

// open finds the match me may see and the channel ch names for it; write
// says whether me would post to it. Errors: match.Hidden (no such match,
// or one me may not see), fault.ErrInvalid, ErrChannelClosed.
func (c *Chat) open(ctx context.Context, me, matchID string, ch hangarv1.ChatChannel, write bool) (*match.Match, string, error) {
	m, err := c.Writer.Load(ctx, matchID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", match.Hidden(matchID)
	}
	if err != nil {
		return nil, "", err
	}
	if m, err = c.Writer.VisibleTo(ctx, m, me, nil); err != nil {
		return nil, "", err
	}
	seated := m.SeatOf(me) >= 0
	if !seated && ch != hangarv1.ChatChannel_CHAT_CHANNEL_SPECTATORS && !match.Ended(m.Status) {
		// This node's copy may not have the seat yet: catch up before
		// taking the caller for a spectator.
		if m, err = c.Writer.Fold(ctx, m, 0); err != nil {
			return nil, "", err
		}
		seated = m.SeatOf(me) >= 0
	}
	name, err := channel(ch, seated)
	if err != nil {
		return nil, "", err
	}
	switch {
	case name == store.ChatPlayers && !seated:
		return nil, "", ErrChannelClosed
	case name == store.ChatSpectators && seated && write && !match.Ended(m.Status):
		return nil, "", ErrChannelClosed
	}
	return m, name, nil
}

// Post posts text to a channel of a match as me. Errors: those of open,
// fault.ErrInvalid (the text), the limit's (rate), ErrFull,
// store.ErrRequestMismatch, the store's.
func (c *Chat) Post(ctx context.Context, me string, req *hangarv1.PostChatMessageRequest) (*hangarv1.ChatMessage, error) {
	text := req.GetText()
	n := utf8.RuneCountInString(text)
	switch {
	case n == 0 || n > MaxText || !printable(text):
		return nil, fmt.Errorf("%w: text must be 1 to %d printable characters", fault.ErrInvalid, MaxText)
	case len(req.GetRequestId()) > maxRequestID:
		return nil, fmt.Errorf("%w: request_id is too long", fault.ErrInvalid)
	}
	_, ch, err := c.open(ctx, me, req.GetMatchId(), req.GetChannel(), true)
	if err != nil {
		return nil, err
	}
	if err := c.Limits.Chat(me); err != nil {
		return nil, err
	}
	m, fresh, err := c.Store.PostChat(ctx, store.ChatMessage{Match: req.GetMatchId(), Channel: ch, Author: me, Body: text,
		RequestID: req.GetRequestId(), Time: c.Now()}, MaxMessages)
	if errors.Is(err, store.ErrQuota) {
		return nil, ErrFull
	}
	if err != nil {
		return nil, err
	}
	if fresh && c.Posted != nil {
		c.Posted(m.Match)
	}
	return toAPI(m), nil
}

// printable reports whether s is valid UTF-8 whose only control
// characters are line feeds and tabs (a database's text holds no NUL).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

func toAPI(m store.ChatMessage) *hangarv1.ChatMessage {
	return &hangarv1.ChatMessage{MatchId: m.Match, Channel: apiChannel(m.Channel), Seq: m.Seq, AuthorId: m.Author,
		Text: m.Body, Time: timestamppb.New(m.Time)}
}

// deaf returns the authors among ms whose messages me does not hear: those
// it muted in the match or blocked.
func (c *Chat) deaf(ctx context.Context, me, matchID string, ms []store.ChatMessage) (map[string]bool, error) {
	authors := []string{me}
	for _, m := range ms {
		if m.Author != me && !slices.Contains(authors, m.Author) {
			authors = append(authors, m.Author)
		}
	}
	out := map[string]bool{}
	if len(authors) == 1 {
		return out, nil
	}
	mutes, err := c.Store.ChatMutes(ctx, matchID, me)
	if err != nil {
		return nil, err
	}
	for _, p := range mutes {
		out[p] = true
	}
	pairs, err := c.Store.BlockedPairs(ctx, authors)
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if p[0] == me {
			out[p[1]] = true
		}
	}
	return out, nil
}

// List returns up to size messages of a channel after seq after that me
// hears, and the next page's token ("" when the page reached the latest
// message). Errors: those of open, fault.ErrInvalid, the store's.
func (c *Chat) List(ctx context.Context, me string, req *hangarv1.ListChatMessagesRequest, size int) ([]*hangarv1.ChatMessage, string, error) {
	after := req.GetAfterSeq()
	if after < 0 {
		return nil, "", fmt.Errorf("%w: after_seq must not be negative", fault.ErrInvalid)
	}
	_, ch, err := c.open(ctx, me, req.GetMatchId(), req.GetChannel(), false)
	if err != nil {
		return nil, "", err
	}
	if t := req.GetPageToken(); t != "" {
		pos, tch, err := page.Parse(t, page.Chat)
		if err != nil || tch != ch || pos > math.MaxInt64 {
			return nil, "", fmt.Errorf("%w: bad page_token", fault.ErrInvalid)
		}
		after = int64(pos)
	}
	// One message more than the page tells whether another follows.
	ms, err := c.Store.ChatMessages(ctx, req.GetMatchId(), ch, after, size+1)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(ms) > size {
		ms = ms[:size]
		next = page.Token(page.Chat, uint64(ms[size-1].Seq), ch)
	}
	deaf, err := c.deaf(ctx, me, req.GetMatchId(), ms)
	if err != nil {
		return nil, "", err
	}
	var out []*hangarv1.ChatMessage
	for _, m := range ms {
		if !deaf[m.Author] {
			out = append(out, toAPI(m))
		}
	}
	return out, next, nil
}

// watchPage is how many messages a watcher reads from the store at once.
const watchPage = 500

// Watch sends a channel's messages after seq after that me hears, then
// each new one, until ctx ends or the node drains. It always reads the
// store by seq, so a missed wake-up only delays a message and never drops
// one. Errors: those of open, fault.ErrInvalid, fault.ErrOutOfRange, the
// limit's, fault.ErrUnavailable (draining), the store's or the stream's.
func (c *Chat) Watch(ctx context.Context, me string, req *hangarv1.WatchChatRequest, stream grpc.ServerStream) error {
	after := req.GetAfterSeq()
	if after < 0 {
		return fmt.Errorf("%w: after_seq must not be negative", fault.ErrInvalid)
	}
	_, ch, err := c.open(ctx, me, req.GetMatchId(), req.GetChannel(), false)
	if err != nil {
		return err
	}
	release, err := c.Limits.AcquireWatch(me)
	if err != nil {
		return err
	}
	defer release()
	// Subscribe before reading, so that no message after the read goes
	// unnoticed.
	wake, unsubscribe := c.Hub.Subscribe(Key(req.GetMatchId()))
	defer unsubscribe()
	latest, err := c.Store.LatestChat(ctx, req.GetMatchId(), ch)
	if err != nil {
		return err
	}
	if after > latest {
		return fmt.Errorf("%w: after_seq %d is beyond the channel's latest message %d", fault.ErrOutOfRange, after, latest)
	}
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := c.Limits.NewWatchQueue(stream)
	defer func() { _ = q.Close(ctx, false) }()
	for {
		ms, err := c.Store.ChatMessages(ctx, req.GetMatchId(), ch, after, watchPage)
		if err != nil {
			return err
		}
		deaf, err := c.deaf(ctx, me, req.GetMatchId(), ms)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if !deaf[m.Author] {
				if err := q.Push(ctx, c.Closing, &hangarv1.WatchChatResponse{Message: toAPI(m)}); err != nil {
					return err
				}
			}
			after = m.Seq
		}
		if len(ms) == watchPage {
			continue // a full page: read on, never take it for the end
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Closing:
			return fault.ErrUnavailable
		}
	}
}

// Mute mutes (or unmutes) player for me in a match. Errors: those of
// open, fault.ErrInvalid, ErrTooManyMutes, the store's.
func (c *Chat) Mute(ctx context.Context, me string, req *hangarv1.MuteChatPlayerRequest) error {
	if req.GetPlayerId() == me {
		return fmt.Errorf("%w: you cannot mute yourself", fault.ErrInvalid)
	}
	if _, _, err := c.open(ctx, me, req.GetMatchId(), hangarv1.ChatChannel_CHAT_CHANNEL_UNSPECIFIED, false); err != nil {
		return err
	}
	err := c.Store.MuteChat(ctx, req.GetMatchId(), me, req.GetPlayerId(), !req.GetUnmute(), MaxMutes)
	if errors.Is(err, store.ErrQuota) {
		return ErrTooManyMutes
	}
	return err
}

// Report stores me's report of a message it may read. Errors: those of
// open, fault.ErrInvalid, fault.ErrNotFound (no such message), the
// store's.
func (c *Chat) Report(ctx context.Context, me string, req *hangarv1.ReportChatMessageRequest) error {
	if n := utf8.RuneCountInString(req.GetReason()); n > MaxText || !printable(req.GetReason()) {
		return fmt.Errorf("%w: reason must be at most %d characters", fault.ErrInvalid, MaxText)
	}
	if req.GetSeq() <= 0 {
		return fmt.Errorf("%w: seq must be positive", fault.ErrInvalid)
	}
	_, ch, err := c.open(ctx, me, req.GetMatchId(), req.GetChannel(), false)
	if err != nil {
		return err
	}
	ms, err := c.Store.ChatMessages(ctx, req.GetMatchId(), ch, req.GetSeq()-1, 1)
	if err != nil {
		return err
	}
	if len(ms) == 0 || ms[0].Seq != req.GetSeq() {
		return fmt.Errorf("%w: no such message", fault.ErrNotFound)
	}
	_, err = c.Store.ReportChat(ctx, store.ChatReport{Match: req.GetMatchId(), Channel: ch, Seq: req.GetSeq(), Reporter: me,
		Reason: req.GetReason(), Time: c.Now()})
	return err
}
