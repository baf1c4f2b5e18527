package sqlite

import (
	"context"
	"fmt"

	"github.com/hangarhq/hangar/store"
)

// AppendBatch implements store.Batcher: the appends are written in one
// transaction of the writer, one commit (one sync of the WAL) for all.
// Each runs inside a savepoint: one that changes nothing (a stale
// version, a retried command) or fails is rolled back to its savepoint and
// leaves the others be. A failed commit fails them all, and none is
// written.
func (s *Store) AppendBatch(ctx context.Context, as []store.Append) []store.BatchResult {
	rs := make([]store.BatchResult, len(as))
	if len(as) == 1 {
		rs[0].Result, rs[0].Err = s.appendOne(ctx, as[0])
		return rs
	}
	fail := func(err error) []store.BatchResult {
		for i := range rs {
			rs[i] = store.BatchResult{Err: fmt.Errorf("sqlite: append: %w", err)}
		}
		return rs
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	written := false
	for i, a := range as {
		players, invited, err := check(a)
		if err != nil {
			rs[i].Err = err
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT append"); err != nil {
			return fail(err)
		}
		r, err := s.appendTx(ctx, tx, a, players, invited)
		rs[i] = store.BatchResult{Result: r, Err: err}
		if err != nil || r.Duplicate {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO append"); err != nil {
				return fail(err)
			}
		} else {
			written = true
		}
		if _, err := tx.ExecContext(ctx, "RELEASE append"); err != nil {
			return fail(err)
		}
	}
	if !written {
		return rs
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	return rs
}

var _ store.Batcher = (*Store)(nil)
