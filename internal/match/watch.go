package match

import (
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/vtcodec"
	"github.com/hangarhq/hangar/store"
)

// WatchResponse is an event's watch response and its wire bytes.
type WatchResponse struct {
	Resp *hangarv1.WatchMatchResponse
	Wire []byte
}

// WatchResponseOf is the watch response of ev, m being the match just
// after it.
func WatchResponseOf(ev *hangarv1.Event, m *Match) (*WatchResponse, error) {
	resp := &hangarv1.WatchMatchResponse{Event: ev, Version: m.Version, Status: StatusProto[m.Status]}
	if m.Play != nil && m.Status == store.StatusActive {
		if turn, ok := m.Play.Turn(); ok {
			resp.TurnSeat = &turn
		}
	}
	if m.Play != nil {
		resp.Phase = m.Play.Phase()
	}
	wire, err := vtcodec.Bytes(resp)
	if err != nil {
		return nil, err
	}
	return &WatchResponse{Resp: resp, Wire: wire}, nil
}
