package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

// RestoreMatch implements store.Retention. The match's row is locked (or,
// when there is none, created with ON CONFLICT DO NOTHING) before anything
// is written, so two restores of one match write it once: the second waits
// for the first's lock, or finds its row, and then finds it restored.
func (s *Store) RestoreMatch(ctx context.Context, r store.Restore) (bool, error) {
	if err := r.Check(); err != nil {
		return false, err
	}
	for {
		var wrote bool
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			wrote, err = restoreTx(ctx, tx, r)
			return err
		})
		switch {
		case errors.Is(err, errRestoreRaced):
			// Another restore created the row after this one read none:
			// read it again.
			continue
		case errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrVersionConflict):
			return false, err
		case err != nil:
			return false, wrapErr("restore match", err)
		}
		return wrote, nil
	}
}

// errRestoreRaced: the match's row appeared after restoreTx read none; the
// transaction is rolled back.
var errRestoreRaced = errors.New("the match was created meanwhile")

// restoreTx is RestoreMatch's transaction.
func restoreTx(ctx context.Context, tx pgx.Tx, r store.Restore) (bool, error) {
	m := r.Match
	var archived *time.Time
	err := tx.QueryRow(ctx, `SELECT archived_at FROM matches WHERE id = $1 FOR UPDATE`, m.ID).Scan(&archived)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		tag, err := tx.Exec(ctx, `INSERT INTO matches (id, game, status, version, creator_id, player_ids,
			free_seats, bot_turn, options, summary, created_at, started_at, ended_at, deadline, private,
			invited_ids)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (id) DO NOTHING`,
			m.ID, m.Game, string(m.Status), m.Version, m.Creator, nonNil(m.Players), m.FreeSeats, m.BotTurn,
			m.Options, m.Summary, m.Created, nullTime(m.Started), nullTime(m.Ended), nullTime(m.Deadline),
			m.Private, nonNil(m.Invited))
		if err != nil {
			return false, err
		}
		if tag.RowsAffected() == 0 {
			return false, errRestoreRaced
		}
	case err != nil:
		return false, err
	default:
		stored, err := scanMatch(tx.QueryRow(ctx, `SELECT `+matchColumns+` FROM matches WHERE id = $1`, m.ID))
		if err != nil {
			return false, err
		}
		if f := store.SameMatch(stored, m); f != "" {
			return false, fmt.Errorf("%w: match %s in the database differs from the archive's (%s)", store.ErrExists, m.ID, f)
		}
		if archived == nil {
			return false, nil
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM match_event_runs WHERE match_id = $1`, m.ID).Scan(&n); err != nil {
			return false, err
		}
		if n > 0 {
			return false, fmt.Errorf("%w: archived match %s has events", store.ErrVersionConflict, m.ID)
		}
		if _, err := tx.Exec(ctx, `UPDATE matches SET archived_at = NULL WHERE id = $1`, m.ID); err != nil {
			return false, err
		}
	}
	for _, p := range r.Players {
		if _, err := tx.Exec(ctx, `INSERT INTO players (id, display_name, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO NOTHING`, p.ID, p.DisplayName, p.Created); err != nil {
			return false, err
		}
	}
	for _, run := range store.Runs(r.Events) {
		types, payloads := make([]string, len(run)), make([][]byte, len(run))
		for i, e := range run {
			types[i], payloads[i] = e.Type, nonNil(e.Payload)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO match_event_runs
			(match_id, last_seq, first_seq, types, payloads, author_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			m.ID, run[len(run)-1].Seq, run[0].Seq, types, payloads, run[0].Author, run[0].Time); err != nil {
			return false, err
		}
	}
	return true, nil
}
