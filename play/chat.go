package play

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The match's chat (ChatService): "say TEXT" posts TEXT to the players'
// channel (a seated player's); the client prints the lines of its channel
// as they come, the players' for a seated player and the spectators' for a
// watcher. A refusal (too long, too fast) is printed and the client plays
// on.

// chatChannel is the channel the session speaks and hears in.
func (s *session) chatChannel() hangarv1.ChatChannel {
	if s.view.seat >= 0 {
		return hangarv1.ChatChannel_CHAT_CHANNEL_PLAYERS
	}
	return hangarv1.ChatChannel_CHAT_CHANNEL_SPECTATORS
}

// chatCommand posts line when it is "say TEXT", and reports whether it
// was.
func (s *session) chatCommand(line string) bool {
	text, ok := strings.CutPrefix(line, "say ")
	if !ok {
		return false
	}
	chat := hangarv1.NewChatServiceClient(s.conn)
	_, err := chat.PostChatMessage(s.ctx, &hangarv1.PostChatMessageRequest{MatchId: s.matchID, Channel: s.chatChannel(),
		Text: strings.TrimSpace(text), RequestId: s.req("say")})
	if err != nil {
		s.printf("not said: %s\n", status.Convert(err).Message())
	}
	return true
}

// watchChat streams the session's chat channel into out, from its start,
// reconnecting after UNAVAILABLE from the last message seen, until ctx
// ends or the stream ends for good.
func (s *session) watchChat(ctx context.Context, out chan<- *hangarv1.ChatMessage) {
	chat := hangarv1.NewChatServiceClient(s.conn)
	after := int64(0)
	for failures := 0; failures < 10; failures++ {
		stream, err := chat.WatchChat(ctx, &hangarv1.WatchChatRequest{MatchId: s.matchID, Channel: s.chatChannel(), AfterSeq: after})
		for err == nil {
			var r *hangarv1.WatchChatResponse
			if r, err = stream.Recv(); err != nil {
				break
			}
			failures = 0
			after = r.GetMessage().GetSeq()
			select {
			case out <- r.GetMessage():
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil || status.Code(err) != codes.Unavailable {
			return
		}
		select {
		case <-time.After(time.Duration(failures+1) * 200 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
}

// chatLine is a chat message in words: "you say", or its author's seat
// and name (or "a spectator") and "says".
func (s *session) chatLine(m *hangarv1.ChatMessage) string {
	if m.GetAuthorId() == s.me {
		return "you say: " + m.GetText()
	}
	who := "a spectator"
	for seat, st := range s.view.seats {
		if st.GetPlayerId() == m.GetAuthorId() {
			who = s.view.seatName(seat) + " (" + s.view.player(seat) + ")"
			break
		}
	}
	return who + " says: " + m.GetText()
}
