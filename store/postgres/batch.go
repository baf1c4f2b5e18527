package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

// AppendBatch implements store.Batcher. The appends' statements (each the
// guarded statement of a single append) go to the server in one pgx batch:
// one round trip and one implicit transaction, so one commit. A statement
// whose guard fails (a stale version, a retried command) changes nothing
// and does not disturb the others; it is explained after the commit, as a
// single append is. A statement that fails outright (a lost race on a
// unique key with another node, a value the server rejects) rolls the
// whole batch back, and then each append is committed alone, so that only
// the failing one fails. An append that ends a match commits alone (it
// updates the players' ratings, whose row locks must not join a batch), and
// so does one with a quota (its count must follow its advisory lock, in a
// transaction of its own: quota.go).
//
// The statements run in match id order (appends of one match keep their
// order), so that batches committing at once lock match rows in the same
// order and never deadlock.
func (s *Store) AppendBatch(ctx context.Context, as []store.Append) []store.BatchResult {
	rs := make([]store.BatchResult, len(as))
	order := make([]int, len(as))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(as[i].Match.ID, as[j].Match.ID) })
	b := &pgx.Batch{}
	var queued []int
	for _, i := range order {
		if as[i].End != nil || as[i].Quota != nil {
			rs[i].Result, rs[i].Err = s.appendOne(ctx, as[i])
			continue
		}
		q, args, err := statement(as[i])
		if err != nil {
			rs[i].Err = err
			continue
		}
		b.Queue(q, args...)
		queued = append(queued, i)
	}
	switch len(queued) {
	case 0:
		return rs
	case 1:
		i := queued[0]
		rs[i].Result, rs[i].Err = s.appendOne(ctx, as[i])
		return rs
	}
	applied := make([]int, len(queued))
	br := s.pool.SendBatch(ctx, b)
	var err error
	for k := range queued {
		if err = br.QueryRow().Scan(&applied[k]); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
	case errors.As(err, &pgErr):
		// The server refused a statement and rolled the batch back.
		for _, i := range queued {
			rs[i].Result, rs[i].Err = s.appendOne(ctx, as[i])
		}
		return rs
	default:
		// The batch failed as a whole (the connection, the context):
		// as for a single append, the caller cannot know whether the
		// commit happened; a retry with the same request id finds out.
		for _, i := range queued {
			rs[i].Err = wrapErr("append", err)
		}
		return rs
	}
	for k, i := range queued {
		if applied[k] == 1 {
			rs[i].Result = store.Result{First: as[i].Expected + 1, Last: as[i].Match.Version}
		} else {
			rs[i].Result, rs[i].Err = s.explain(ctx, as[i])
		}
	}
	return rs
}

var _ store.Batcher = (*Store)(nil)
