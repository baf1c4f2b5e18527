package server

import (
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/service"
)

// chatWatchPath matches /v1/matches/{match_id}/chat:watch.
func chatWatchPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v1/matches/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/chat:watch")
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// restWatchChat serves WatchChat over REST as restWatch serves WatchMatch:
// newline-delimited JSON, or server-sent events whose id is the message's
// seq (a reconnecting EventSource resumes with Last-Event-ID). It takes
// channel (a ChatChannel's name or number) and after_seq.
func (m *Server) restWatchChat(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet {
		writeStatus(w, status.New(codes.Unimplemented, "WatchChat over REST is GET /v1/matches/{match_id}/chat:watch"))
		return
	}
	req := &hangarv1.WatchChatRequest{MatchId: id}
	q := r.URL.Query()
	if v := q.Get("channel"); v != "" {
		ch, ok := hangarv1.ChatChannel_value[v]
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			ch, ok = int32(n), true
		}
		if !ok {
			writeStatus(w, status.Convert(service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest,
				"channel must be CHAT_CHANNEL_PLAYERS or CHAT_CHANNEL_SPECTATORS", false)))
			return
		}
		req.Channel = hangarv1.ChatChannel(ch)
		q.Del("channel")
	}
	// restAfterSeq reads after_seq and refuses any other parameter.
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	after, err := restAfterSeq(r2, "a chat message's seq")
	if err != nil {
		writeStatus(w, status.Convert(err))
		return
	}
	req.AfterSeq = after
	m.local.serve(r, hangarv1.ChatService_WatchChat_FullMethodName, req,
		newRestWriter(m.json, w, r, func(r *hangarv1.WatchChatResponse) int64 { return r.GetMessage().GetSeq() }))
}
