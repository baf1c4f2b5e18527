package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// watchRun is the watched match and its watchers.
type watchRun struct {
	b        *bench
	kind     string
	match    *hangarv1.Match
	drivers  []*player // driven: the two players
	creator  *player   // bot: the observing creator who starts it
	watchers []*watcher
	acks     *ackLog
	// cancel ends the watchers' streams.
	cancel context.CancelFunc
}

type watcher struct {
	got  []received
	last atomic.Int64
	done chan struct{}
}

type received struct {
	seq      int64
	at, time time.Time
}

// setupWatch creates the watched match and subscribes the watchers; each
// has received the match's latest event when it returns, so it is
// subscribed before the first event it is measured on.
func (b *bench) setupWatch(ctx context.Context) (*watchRun, error) {
	w := &watchRun{b: b, kind: b.cfg.WatchMatch, acks: &ackLog{at: map[int64]time.Time{}}}
	var err error
	switch w.kind {
	case "driven":
		if w.drivers, err = b.players(ctx, 2, "watched"); err != nil {
			return nil, err
		}
		if w.match, err = b.newMatch(w.drivers, ""); err != nil {
			return nil, err
		}
	case "bot":
		if w.creator, err = b.newPlayer(ctx, "host"); err != nil {
			return nil, err
		}
		// Three bots wait in a four-seat lobby until the watchers are in;
		// StartMatch then drops the empty seat.
		cr, err := timed(b, w.creator.ctx, "CreateMatch", func(ctx context.Context) (*hangarv1.CreateMatchResponse, error) {
			return w.creator.matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: gameName,
				SeatCount: 4, BotSeats: 3, ObserveOnly: true, RequestId: b.reqID()})
		})
		if err != nil {
			return nil, err
		}
		w.match = cr.GetMatch()
	}
	spectators, err := b.players(ctx, 1, "spectator")
	if err != nil {
		return nil, err
	}
	sp := spectators[0]
	wctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	ready := make(chan error, b.cfg.Watchers)
	for range b.cfg.Watchers {
		conn, err := grpc.NewClient(b.watchAddr, dialOptions()...)
		if err != nil {
			return nil, err
		}
		b.connMu.Lock()
		b.conns = append(b.conns, conn)
		b.connMu.Unlock()
		wt := &watcher{done: make(chan struct{})}
		w.watchers = append(w.watchers, wt)
		go wt.watch(sp.with(wctx), b.rec, hangarv1.NewMatchServiceClient(conn), w.match, ready)
	}
	for range b.cfg.Watchers {
		if err := <-ready; err != nil {
			cancel()
			return nil, fmt.Errorf("watcher: %w", err)
		}
	}
	return w, nil
}

// watch follows the match from its latest event (the subscription check)
// until the stream ends. A failure other than the bench ending the stream
// is counted as a WatchMatch error.
func (wt *watcher) watch(ctx context.Context, rec *recorder, c hangarv1.MatchServiceClient, m *hangarv1.Match, ready chan<- error) {
	defer close(wt.done)
	stream, err := c.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: m.GetMatchId(), AfterSeq: m.GetVersion() - 1})
	if err != nil {
		ready <- err
		return
	}
	first := true
	for {
		r, err := stream.Recv()
		now := time.Now()
		if err != nil {
			if first {
				ready <- err
			}
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				rec.observe("WatchMatch", 0, err)
			}
			return
		}
		if first {
			first = false
			wt.last.Store(r.GetEvent().GetSeq())
			ready <- nil
			continue
		}
		ev := r.GetEvent()
		wt.got = append(wt.got, received{seq: ev.GetSeq(), at: now, time: ev.GetTime().AsTime()})
		wt.last.Store(ev.GetSeq())
	}
}

// run plays (or starts) the watched match, waits for the watchers to
// receive its last event and measures what they got.
func (w *watchRun) run(ctx context.Context, start time.Time) *WatchResult {
	b := w.b
	defer w.cancel()
	final := int64(0)
	switch w.kind {
	case "driven":
		_ = b.playMatch(ctx, w.drivers, w.match, 1<<62, false, b.cfg.WatchPace, w.acks)
		final = w.acks.last()
	case "bot":
		sr, err := timed(b, w.creator.ctx, "StartMatch", func(ctx context.Context) (*hangarv1.StartMatchResponse, error) {
			return w.creator.matches.StartMatch(ctx, &hangarv1.StartMatchRequest{MatchId: w.match.GetMatchId(),
				ExpectedVersion: w.match.GetVersion(), RequestId: b.reqID()})
		})
		if err == nil {
			w.acks.record([]*hangarv1.Event{{Seq: sr.GetMatch().GetVersion()}}, time.Now())
		}
		final = -1 // the match's end, as the watchers see it
	}
	// Wait for every watcher to reach the final event (or its stream's
	// end), for at most 30 seconds after the window.
	stop := b.stop
	var grace <-chan time.Time
	for _, wt := range w.watchers {
	wait:
		for final < 0 || wt.last.Load() < final {
			select {
			case <-wt.done:
				break wait
			case <-time.After(10 * time.Millisecond):
			case <-stop:
				stop, grace = nil, time.After(30*time.Second)
			case <-grace:
				w.cancel()
				break wait
			case <-ctx.Done():
				break wait
			}
		}
	}
	elapsed := time.Since(start).Seconds()
	w.cancel()
	for _, wt := range w.watchers {
		<-wt.done
	}
	res := &WatchResult{Match: w.match.GetMatchId(), Kind: w.kind, Watchers: len(w.watchers), Seconds: elapsed}
	if final < 0 {
		for _, wt := range w.watchers {
			final = max(final, wt.last.Load())
		}
	}
	res.Events = final - w.match.GetVersion()
	var fromAck, fromTime []time.Duration
	w.acks.mu.Lock()
	defer w.acks.mu.Unlock()
	for _, wt := range w.watchers {
		ok := true
		next := w.match.GetVersion() + 1
		for _, r := range wt.got {
			if r.seq != next {
				ok = false
			}
			next = r.seq + 1
			if r.seq > final {
				continue
			}
			res.Delivered++
			fromTime = append(fromTime, r.at.Sub(r.time))
			if a, found := w.acks.at[r.seq]; found && w.kind == "driven" {
				fromAck = append(fromAck, r.at.Sub(a))
			}
		}
		if ok && next-1 >= final {
			res.Complete++
		}
	}
	res.FromEventTime = stats(fromTime)
	if w.kind == "driven" {
		s := stats(fromAck)
		res.FromAck = &s
	}
	return res
}
