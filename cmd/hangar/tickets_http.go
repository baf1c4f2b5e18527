package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/service"
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
// WatchMatch: through the node's in-process connection, one JSON line (or
// one server-sent event) per response. A ticket's stream needs no cursor:
// a client that reconnects gets the ticket as it stands.
func (m *Main) restWatchTicket(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet {
		writeStatus(w, status.New(codes.Unimplemented, "WatchTicket over REST is GET /v1/tickets/{ticket_id}:watch"))
		return
	}
	for k := range r.URL.Query() {
		writeStatus(w, status.New(codes.InvalidArgument, fmt.Sprintf("unknown query parameter %.40q", k)))
		return
	}
	ctx := r.Context()
	if auth := r.Header.Get("Authorization"); auth != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
	}
	ctx = metadata.AppendToOutgoingContext(ctx, service.ClientAddrKey, r.RemoteAddr)
	for _, v := range r.Header.Values("X-Forwarded-For") {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-forwarded-for", v)
	}
	stream, err := hangarv1.NewMatchmakingServiceClient(m.selfCC).WatchTicket(ctx, &hangarv1.WatchTicketRequest{TicketId: id})
	if err != nil {
		writeStatus(w, status.Convert(err))
		return
	}
	// The service sends headers once the watch is valid; none means it
	// failed, and Recv says why.
	if md, err := stream.Header(); md == nil || err != nil {
		_, err := stream.Recv()
		if err == nil || errors.Is(err, io.EOF) {
			err = status.Error(codes.Internal, "internal error")
		}
		writeStatus(w, status.Convert(err))
		return
	}
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if sse {
				_, _ = io.WriteString(w, "event: end\ndata: {}\n\n")
				_ = rc.Flush()
			}
			return
		}
		var line []byte
		if err != nil {
			b, _ := jsonOptions.Marshal(status.Convert(err).Proto())
			line = fmt.Appendf(nil, `{"error":%s}`, b)
			if sse {
				line = fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
			}
		} else {
			b, merr := jsonOptions.Marshal(resp)
			if merr != nil {
				return
			}
			line = b
			if sse {
				line = fmt.Appendf(nil, "data: %s\n\n", b)
			}
		}
		if !sse {
			line = append(line, '\n')
		}
		if _, werr := w.Write(line); werr != nil || err != nil {
			_ = rc.Flush()
			return
		}
		_ = rc.Flush()
	}
}
