package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hangarhq/hangar/store"
)

// RestoreMatch implements store.Retention, in one writer transaction (the
// single writer orders two restores of one match: the second finds it
// restored).
func (s *Store) RestoreMatch(ctx context.Context, r store.Restore) (bool, error) {
	if err := r.Check(); err != nil {
		return false, err
	}
	m := r.Match
	players, err := encodePlayers(m.Players)
	if err != nil {
		return false, fmt.Errorf("sqlite: restore match: %w", err)
	}
	invited, err := encodePlayers(m.Invited)
	if err != nil {
		return false, fmt.Errorf("sqlite: restore match: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: restore match: %w", err)
	}
	defer tx.Rollback()
	var archived sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT archived_at FROM matches WHERE id = ?`, m.ID).Scan(&archived)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, `INSERT INTO matches (id, game, status, version, creator_id, player_ids,
			free_seats, bot_turn, options, summary, created_at, started_at, ended_at, deadline, private,
			invited_ids)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Game, string(m.Status), m.Version, m.Creator, players, m.FreeSeats, m.BotTurn,
			m.Options, m.Summary, m.Created.UnixMicro(), nullTime(m.Started), nullTime(m.Ended),
			nullTime(m.Deadline), m.Private, invited)
		if err != nil {
			return false, fmt.Errorf("sqlite: restore match: %w", err)
		}
	case err != nil:
		return false, fmt.Errorf("sqlite: restore match: %w", err)
	default:
		stored, err := scanMatch(tx.QueryRowContext(ctx, `SELECT `+matchColumns+` FROM matches m WHERE m.id = ?`, m.ID))
		if err != nil {
			return false, fmt.Errorf("sqlite: restore match: %w", err)
		}
		if f := store.SameMatch(stored, m); f != "" {
			return false, fmt.Errorf("%w: match %s in the database differs from the archive's (%s)", store.ErrExists, m.ID, f)
		}
		if !archived.Valid {
			return false, nil
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM match_events WHERE match_id = ?`, m.ID).Scan(&n); err != nil {
			return false, fmt.Errorf("sqlite: restore match: %w", err)
		}
		if n > 0 {
			return false, fmt.Errorf("%w: archived match %s has events", store.ErrVersionConflict, m.ID)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE matches SET archived_at = NULL WHERE id = ?`, m.ID); err != nil {
			return false, fmt.Errorf("sqlite: restore match: %w", err)
		}
	}
	for _, p := range r.Players {
		if _, err := tx.ExecContext(ctx, `INSERT INTO players (id, display_name, created_at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, p.ID, p.DisplayName, p.Created.UnixMicro()); err != nil {
			return false, fmt.Errorf("sqlite: restore match: %w", err)
		}
	}
	ins := tx.StmtContext(ctx, s.insertEvent)
	for _, e := range r.Events {
		payload := e.Payload
		if payload == nil {
			payload = []byte{} // the column is NOT NULL
		}
		if _, err := ins.ExecContext(ctx, m.ID, e.Seq, e.Type, payload, e.Author, e.Time.UnixMicro()); err != nil {
			return false, fmt.Errorf("sqlite: restore match: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite: restore match: commit: %w", err)
	}
	return true, nil
}
