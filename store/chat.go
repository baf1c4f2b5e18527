package store

import (
	"context"
	"time"
)

// This file is the contract of the matches' chat.
//
// A match has two chat channels (ChatPlayers and ChatSpectators), each
// numbered 1, 2, 3 … (ChatMessage.Seq) in commit order: a post serialises
// with every other post to its channel, so a reader that has seen message
// n never later finds a new message below n, and a reader resuming after n
// (ChatMessages) neither skips nor repeats one. Messages are never updated
// nor deleted.

// The chat channels of a match.
const (
	ChatPlayers    = "players"
	ChatSpectators = "spectators"
)

// ChatMessage is one message of a match's chat channel.
type ChatMessage struct {
	Match   string
	Channel string
	// Seq is the message's number in its channel, set by the store
	// (ignored by PostChat).
	Seq    int64
	Author string
	Body   string
	// RequestID makes a post idempotent: a second post of the author
	// with the same request id in the match returns the first (empty:
	// none).
	RequestID string
	Time      time.Time
}

// ChatReport is a player's report of a chat message, kept for operators.
type ChatReport struct {
	Match    string
	Channel  string
	Seq      int64
	Reporter string
	Reason   string
	Time     time.Time
}

// ChatPage is the most messages ChatMessages returns at once.
const ChatPage = 1000

// Chat keeps the matches' chat channels, mutes and reports.
type Chat interface {
	// PostChat appends m to its channel, numbered after the channel's
	// latest message, unless the channel holds max messages already
	// (ErrQuota; nothing written). A post whose author already posted
	// m.RequestID in the match returns the stored message and false;
	// ErrRequestMismatch if that one differs in channel or body.
	PostChat(ctx context.Context, m ChatMessage, max int64) (ChatMessage, bool, error)
	// ChatMessages returns up to limit (at most ChatPage) messages of a
	// match's channel with seq > after, in seq order.
	ChatMessages(ctx context.Context, match, channel string, after int64, limit int) ([]ChatMessage, error)
	// LatestChat returns the seq of a channel's latest message, 0 when it
	// has none.
	LatestChat(ctx context.Context, match, channel string) (int64, error)
	// MuteChat mutes (on) or unmutes muted for player in match; muting
	// twice or unmuting an unmuted player changes nothing. A player holds
	// at most max mutes in a match (ErrQuota).
	MuteChat(ctx context.Context, match, player, muted string, on bool, max int) error
	// ChatMutes returns the players player muted in match.
	ChatMutes(ctx context.Context, match, player string) ([]string, error)
	// ReportChat stores r; a second report of one message by one reporter
	// changes nothing and returns false.
	ReportChat(ctx context.Context, r ChatReport) (bool, error)
	// ChatReports returns up to limit reports of match, oldest first
	// (for operators and tests).
	ChatReports(ctx context.Context, match string, limit int) ([]ChatReport, error)
}
