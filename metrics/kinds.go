package metrics

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
)

// Games makes the node count each game's events by their kind: the first
// word of the game's notation of the event (game.Game.EventNotation), as in
// hangar_events_total{game="…",type="moved"}. Call it before the first
// commit.
func (m *Metrics) Games(r *game.Registry) { m.games = r }

// kindCounters are the counters of one game's events, by kind.
type kindCounters struct {
	game string
	g    game.Game
	// byKind holds a *eventCounters per kind; kinds counts them.
	byKind sync.Map
	kinds  atomic.Int32
}

// maxKinds bounds the series of one game's events: past it, further kinds
// count under "other" (a game whose notation starts with something else
// than a kind would make a series per event).
const maxKinds = 64

// gameCounters are the counters of ev's kind. A game's events share one
// Go type (an Any), so the kind is read from the event itself: it is
// decoded and written in the game's notation, whose first word names it.
// An event the game does not decode counts under the type "game".
func (o *Observer) gameCounters(name string, ev *hangarv1.Event) *eventCounters {
	v, ok := o.m.eventCounters.Load(name)
	if !ok {
		v, _ = o.m.eventCounters.LoadOrStore(name, &kindCounters{game: name, g: o.m.games.Get(name)})
	}
	kc := v.(*kindCounters)
	kind := "game"
	if kc.g != nil {
		if msg, err := o.m.games.Event(kc.g, ev); err == nil {
			if k, _, _ := strings.Cut(kc.g.EventNotation(msg), " "); k != "" {
				kind = k
			}
		}
	}
	if c, ok := kc.byKind.Load(kind); ok {
		return c.(*eventCounters)
	}
	if kc.kinds.Add(1) > maxKinds {
		kind = "other"
		if c, ok := kc.byKind.Load(kind); ok {
			return c.(*eventCounters)
		}
	}
	c, _ := kc.byKind.LoadOrStore(kind, &eventCounters{events: o.m.events.WithLabelValues(name, kind)})
	return c.(*eventCounters)
}

// refusedUnary and refusedStream count the calls refused with
// RESOURCE_EXHAUSTED by the reason of their ErrorInfo.
func (m *Metrics) refusedUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	m.refused(err)
	return resp, err
}

func (m *Metrics) refusedStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	err := h(srv, ss)
	m.refused(err)
	return err
}

func (m *Metrics) refused(err error) {
	if err == nil {
		return
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return
	}
	reason := "RESOURCE_EXHAUSTED"
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() != "" {
			reason = info.GetReason()
			break
		}
	}
	m.refusals.With(prometheus.Labels{"reason": reason}).Inc()
}
