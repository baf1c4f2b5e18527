package matchmaker

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/match"
)

// encodeClock checks the clock and bot settings a ticket chooses and
// encodes them for the ticket's row (store.Ticket.Clock): nil when it
// chooses none, so that it takes the server's defaults and pools with the
// tickets enqueued before tickets could choose. The bytes are an
// EnqueueRequest holding only those fields, marshalled deterministically,
// so that equal settings pool together.
func encodeClock(c match.Clock) ([]byte, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.IsZero() {
		return nil, nil
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(&hangarv1.EnqueueRequest{
		TurnTime: c.TurnTime, TimeoutsBeforeBot: c.TimeoutsBeforeBot, BotLevel: c.BotLevel, TimeControl: c.TimeControl})
}

// decodeClock reads a ticket's clock settings (encodeClock).
func decodeClock(b []byte) (match.Clock, error) {
	if b == nil {
		return match.Clock{}, nil
	}
	r := &hangarv1.EnqueueRequest{}
	if err := proto.Unmarshal(b, r); err != nil {
		return match.Clock{}, fmt.Errorf("clock settings: %w", err)
	}
	return match.ClockOf(r), nil
}
