package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

var _ store.Gauges = (*Store)(nil)

// MatchesInPlay implements store.Gauges (an index-only scan of
// matches_active_game, migration 0014).
func (s *Store) MatchesInPlay(ctx context.Context) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT game, count(*) FROM matches WHERE status = 'active' GROUP BY game`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: matches in play: %w", err)
	}
	defer rows.Close()
	byGame := map[string]int64{}
	for rows.Next() {
		var game string
		var n int64
		if err := rows.Scan(&game, &n); err != nil {
			return nil, fmt.Errorf("sqlite: matches in play: %w", err)
		}
		byGame[game] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: matches in play: %w", err)
	}
	return byGame, nil
}

// OutboxQueue implements store.Gauges.
func (s *Store) OutboxQueue(ctx context.Context) (int64, time.Time, error) {
	var n int64
	var oldest sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT count(*), min(n.created_at) FROM notice_outbox o
		JOIN player_notices n ON n.player_id = o.player_id AND n.seq = o.seq`).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlite: outbox queue: %w", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, fromMicros(oldest.Int64), nil
}

// PoolStats implements store.Gauges: the writer and the readers together.
func (s *Store) PoolStats() store.Pool {
	w, r := s.w.Stats(), s.r.Stats()
	return store.Pool{InUse: int64(w.InUse + r.InUse), Idle: int64(w.Idle + r.Idle),
		Max: int64(w.MaxOpenConnections + r.MaxOpenConnections)}
}
