package notice

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/store"
)

// Log reads players' notice logs: a page of one (List), or all of it after
// a seq and then each new notice as it comes (Watch).
type Log struct {
	// Games are the games of the notices' matches.
	Games  *game.Registry
	Store  store.Store
	Hub    *Hub
	Limits *limit.Limiter
	// Closing is closed when the node drains: watches end.
	Closing <-chan struct{}
}

// watchPage is how many notices a watcher reads from the store at once.
const watchPage = 500

// Watch sends player's notices after seq after on stream, then each new
// one, until ctx ends or the node drains. It always reads notices from the
// store by seq, so a missed wake-up only delays a notice and never drops
// one. Errors: fault.ErrInvalid, fault.ErrOutOfRange (after is beyond the
// latest notice), the limit's (too many watches, a slow watcher),
// fault.ErrUnavailable (draining), the store's or the stream's.
func (l *Log) Watch(ctx context.Context, player string, after int64, stream grpc.ServerStream) error {
	if after < 0 {
		return fmt.Errorf("%w: after_seq must not be negative", fault.ErrInvalid)
	}
	release, err := l.Limits.AcquireWatch(player)
	if err != nil {
		return err
	}
	defer release()
	// Subscribe before reading, so that no notice after the read goes
	// unnoticed.
	wake, unsubscribe := l.Hub.Subscribe(player)
	defer unsubscribe()
	latest, err := l.Store.LatestNotice(ctx, player)
	if err != nil {
		return err
	}
	if after > latest {
		return fmt.Errorf("%w: after_seq %d is beyond your latest notice %d", fault.ErrOutOfRange, after, latest)
	}
	// The watch is valid: say so at once (see WatchMatch).
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := l.Limits.NewWatchQueue(stream)
	defer func() { _ = q.Close(ctx, false) }()
	for {
		ns, err := l.Store.Notices(ctx, player, after, watchPage)
		if err != nil {
			return err
		}
		for _, sn := range ns {
			n, err := Decode(l.Games, sn)
			if err != nil {
				return err
			}
			if err := q.Push(ctx, l.Closing, &hangarv1.WatchPlayerResponse{Notice: n}); err != nil {
				return err
			}
			after = sn.Seq
		}
		if len(ns) == watchPage {
			continue // a full page: read on, never take it for the end
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-l.Closing:
			return fault.ErrUnavailable
		}
	}
}

// List returns up to size of player's notices after seq after, and the
// seq of its latest notice. Errors: fault.ErrInvalid, or the store's.
func (l *Log) List(ctx context.Context, player string, after int64, size int) ([]*hangarv1.Notice, int64, error) {
	if after < 0 {
		return nil, 0, fmt.Errorf("%w: after_seq must not be negative", fault.ErrInvalid)
	}
	ns, err := l.Store.Notices(ctx, player, after, size)
	if err != nil {
		return nil, 0, err
	}
	// Read after the page, so that latest_seq is never below its last.
	latest, err := l.Store.LatestNotice(ctx, player)
	if err != nil {
		return nil, 0, err
	}
	var out []*hangarv1.Notice
	for _, sn := range ns {
		n, err := Decode(l.Games, sn)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, n)
	}
	return out, latest, nil
}
