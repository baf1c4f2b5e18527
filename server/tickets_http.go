package server

import (
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// ticketWatchPath matches /v1/tickets/{ticket_id}:watch.
func ticketWatchPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v1/tickets/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ":watch")
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// restWatchTicket serves WatchTicket over REST as restWatch serves
// WatchMatch: on the node directly, one JSON line (or
// one server-sent event) per response. A ticket's stream needs no cursor:
// a client that reconnects gets the ticket as it stands.
func (m *Server) restWatchTicket(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet {
		writeStatus(w, status.New(codes.Unimplemented, "WatchTicket over REST is GET /v1/tickets/{ticket_id}:watch"))
		return
	}
	for k := range r.URL.Query() {
		writeStatus(w, status.New(codes.InvalidArgument, fmt.Sprintf("unknown query parameter %.40q", k)))
		return
	}
	req := &hangarv1.WatchTicketRequest{TicketId: id}
	m.local.serve(r, hangarv1.MatchmakingService_WatchTicket_FullMethodName, req, newRestWriter(m.json, w, r, func(*hangarv1.WatchTicketResponse) int64 { return -1 }))
}
