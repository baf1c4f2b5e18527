package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Gauges = (*Store)(nil)

// MatchesInPlay implements store.Gauges: an index-only scan of
// matches_active_game (migration 0015).
func (s *Store) MatchesInPlay(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT game, count(*) FROM matches WHERE status = 'active' GROUP BY game`)
	if err != nil {
		return nil, wrapErr("matches in play", err)
	}
	byGame := map[string]int64{}
	var game string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&game, &n}, func() error {
		byGame[game] = n
		return nil
	}); err != nil {
		return nil, wrapErr("matches in play", err)
	}
	return byGame, nil
}

// OutboxQueue implements store.Gauges. The outbox holds only what is not
// delivered yet, so it is small unless the receiver is down.
func (s *Store) OutboxQueue(ctx context.Context) (int64, time.Time, error) {
	var n int64
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `SELECT count(*), min(n.created_at) FROM notice_outbox o
		JOIN player_notices n ON n.player_id = o.player_id AND n.seq = o.seq`).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, wrapErr("outbox queue", err)
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, *oldest, nil
}

// PoolStats implements store.Gauges: the primary's pool.
func (s *Store) PoolStats() store.Pool {
	st := s.pool.Stat()
	return store.Pool{InUse: int64(st.AcquiredConns()), Idle: int64(st.IdleConns()), Max: int64(st.MaxConns())}
}
