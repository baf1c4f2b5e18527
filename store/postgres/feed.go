package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

var _ store.Feed = (*Store)(nil)

// channel is the LISTEN/NOTIFY channel of match changes.
const channel = "hangar_matches"

// maxPayload keeps a notification under Postgres's 8000-byte limit.
const maxPayload = 7900

// Publish implements store.Feed with NOTIFY. It must be called after the
// append's commit, never inside it: a NOTIFY in a transaction takes a
// database-wide lock at commit and would serialise every append. Changes
// are packed several to a notification: an "@origin" line (the origin of
// the first change; a batch comes from one node) and "id version" lines,
// "~player seq" for a player's notices.
func (s *Store) Publish(ctx context.Context, changes []store.Change) error {
	if len(changes) == 0 {
		return nil
	}
	header := "@" + changes[0].Origin
	var b strings.Builder
	b.WriteString(header)
	flush := func() error {
		if b.Len() == len(header) {
			return nil
		}
		_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, b.String())
		b.Reset()
		b.WriteString(header)
		if err != nil {
			return fmt.Errorf("postgres: notify: %w", err)
		}
		return nil
	}
	for _, c := range changes {
		line := c.Match + " " + strconv.FormatInt(c.Version, 10)
		if c.Player != "" {
			line = "~" + c.Player + " " + strconv.FormatInt(c.Version, 10)
		}
		if b.Len()+len(line)+1 > maxPayload {
			if err := flush(); err != nil {
				return err
			}
		}
		b.WriteByte('\n')
		b.WriteString(line)
	}
	return flush()
}

// Listen implements store.Feed: it holds one connection LISTENing on the
// channel, reconnecting (with onGap, since notifications may have been
// lost meanwhile) whenever it breaks, until ctx ends.
func (s *Store) Listen(ctx context.Context, onChange func(store.Change), onGap func()) error {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, onChange, onGap, func() { backoff = 50 * time.Millisecond })
		if ctx.Err() != nil {
			break
		}
		_ = err // the connection broke: reconnect after a pause
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxListenBackoff)
	}
	return ctx.Err()
}

// maxListenBackoff is the longest pause between a listener's attempts to
// connect again. After a failover a listener that waits longer delays every
// watch whose match moves on another node: it learns of the moves only
// once it listens again.
const maxListenBackoff = 500 * time.Millisecond

// listenPing is how long a listening connection waits for a notification
// before it checks that the server still answers.
const listenPing = time.Second

// notification waits for conn's next notification. While none comes it
// pings the server each listenPing: a server that stopped answering leaves
// a listening connection open and silent, and the ping is what the stall
// watch (stall.go) finds unanswered, which breaks the connection so that
// its listener connects again, to the new primary after a failover.
func notification(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	for {
		wait, cancel := context.WithTimeout(ctx, listenPing)
		n, err := conn.WaitForNotification(wait)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return n, err
		}
		if err := conn.Ping(ctx); err != nil {
			return nil, err
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, onChange func(store.Change), onGap func(), connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	connected()
	onGap() // anything published before LISTEN took effect was missed
	for {
		n, err := notification(ctx, conn)
		if err != nil {
			return err
		}
		origin := ""
		for _, line := range strings.Split(n.Payload, "\n") {
			if o, ok := strings.CutPrefix(line, "@"); ok {
				origin = o
				continue
			}
			id, v, ok := strings.Cut(line, " ")
			ver, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil {
				continue
			}
			if p, ok := strings.CutPrefix(id, "~"); ok {
				onChange(store.Change{Player: p, Version: ver, Origin: origin})
			} else {
				onChange(store.Change{Match: id, Version: ver, Origin: origin})
			}
		}
	}
}
