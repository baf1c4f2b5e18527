package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hangarhq/hangar/store"
)

// Bulk loading is for benchmark fixtures (hangar seed-history), not a write
// path: it writes the rows Append and its ending transaction (writeEnd)
// would, in the same encodings, without checks, idempotency records
// (match_commands) or notices. Callers compute statistics and ratings
// themselves. Each call is one transaction of the writer, its statements
// prepared once in it; the tables' triggers keep match_members and
// rating_buckets as they do for every writer.

// The statements of a load: the columns the write path writes.
const (
	loadPlayerSQL = `INSERT INTO players (id, display_name, created_at) VALUES (?, ?, ?)`
	loadTokenSQL  = `INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at) VALUES (?, ?, ?, ?)`
	// loadMatchSQL is insertMatchSQL without ON CONFLICT: a load that
	// meets a match already there fails.
	loadMatchSQL = `INSERT INTO matches (id, game, status, version, creator_id, player_ids,
		free_seats, bot_turn, options, summary, created_at, started_at, ended_at, deadline,
		private, invited_ids, reminder_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	loadStatsSQL = `INSERT INTO player_stats (player_id, game, played, won, place_sum, forfeits,
		win_streak, longest_win_streak, played_us, last_ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	loadCounterSQL = `INSERT INTO player_counters (player_id, game, counter, value) VALUES (?, ?, ?, ?)`
	loadRatingSQL  = `INSERT INTO ratings (game, player_id, mu, sigma, score, matches, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// load runs fn in one transaction of the writer, with sqls prepared in it
// (in their order), and commits.
func (s *Store) load(ctx context.Context, what string, sqls []string, fn func(sts []*sql.Stmt) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer tx.Rollback()
	sts := make([]*sql.Stmt, len(sqls))
	for i, q := range sqls {
		if sts[i], err = tx.PrepareContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		defer sts[i].Close()
	}
	if err := fn(sts); err != nil {
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: commit: %w", what, err)
	}
	return nil
}

// LoadPlayers inserts players and their token hashes, in one transaction.
// Each token expires ten years after its player was created: a fixture's
// tokens outlive any benchmark run.
func (s *Store) LoadPlayers(ctx context.Context, ps []store.Player, tokenHashes [][]byte) error {
	if len(ps) != len(tokenHashes) {
		return fmt.Errorf("sqlite: load players: %d players, %d token hashes", len(ps), len(tokenHashes))
	}
	return s.load(ctx, "load players", []string{loadPlayerSQL, loadTokenSQL}, func(sts []*sql.Stmt) error {
		player, token := sts[0], sts[1]
		for i, p := range ps {
			created := p.Created.UnixMicro()
			if _, err := player.ExecContext(ctx, p.ID, p.DisplayName, created); err != nil {
				return err
			}
			if _, err := token.ExecContext(ctx, tokenHashes[i], p.ID, created, p.Created.AddDate(10, 0, 0).UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
}

// LoadEnded inserts ended matches, in one transaction: each match's row,
// its events (one row each, stamped with the event's own author and time),
// and what writeEnd writes of its result: the result rows with their
// counters, the head-to-head pairs and the rating changes.
func (s *Store) LoadEnded(ctx context.Context, ms []store.EndedMatch) error {
	return s.load(ctx, "load ended", []string{loadMatchSQL, insertEventSQL, insertResultSQL, insertResultCounterSQL,
		insertOpponentSQL, insertRatingHistorySQL}, func(sts []*sql.Stmt) error {
		match, event, result, counter, opponent, history := sts[0], sts[1], sts[2], sts[3], sts[4], sts[5]
		for _, e := range ms {
			m := e.Match
			players, err := encodePlayers(m.Players)
			if err != nil {
				return err
			}
			invited, err := encodePlayers(m.Invited)
			if err != nil {
				return err
			}
			if _, err := match.ExecContext(ctx, m.ID, m.Game, string(m.Status), m.Version, m.Creator, players,
				m.FreeSeats, m.BotTurn, m.Options, m.Summary, m.Created.UnixMicro(), nullTime(m.Started), nullTime(m.Ended),
				nullTime(m.Deadline), m.Private, invited, nullTime(m.Reminder)); err != nil {
				return fmt.Errorf("match %s: %w", m.ID, err)
			}
			for i, ev := range e.Events {
				if _, err := event.ExecContext(ctx, m.ID, int64(i+1), ev.Type, ev.Payload, ev.Author, ev.Time.UnixMicro()); err != nil {
					return fmt.Errorf("match %s event %d: %w", m.ID, i+1, err)
				}
			}
			ended := m.Ended.UnixMicro()
			var humans []string
			for _, r := range e.Result.Seats {
				if r.Bot {
					continue
				}
				humans = append(humans, r.Player)
				if _, err := result.ExecContext(ctx, m.ID, r.Player, m.Game, ended, r.Seat, r.Place, r.Seats,
					string(r.Outcome), r.Forfeited, r.Played.Microseconds(), r.Rated); err != nil {
					return fmt.Errorf("match %s result of %s: %w", m.ID, r.Player, err)
				}
				for name, v := range r.Counters {
					if v == 0 {
						continue
					}
					if _, err := counter.ExecContext(ctx, m.ID, r.Player, name, v); err != nil {
						return fmt.Errorf("match %s counter %s of %s: %w", m.ID, name, r.Player, err)
					}
				}
			}
			for _, p := range humans {
				for _, o := range humans {
					if p == o {
						continue
					}
					if _, err := opponent.ExecContext(ctx, p, o, ended, m.ID); err != nil {
						return fmt.Errorf("match %s: %w", m.ID, err)
					}
				}
			}
			for _, c := range e.Ratings {
				if _, err := history.ExecContext(ctx, c.Before.Player, m.Game, ended, m.ID, c.Before.Mu, c.Before.Sigma,
					c.Before.Score, c.Before.Matches, c.After.Mu, c.After.Sigma, c.After.Score, c.Place, c.Seats); err != nil {
					return fmt.Errorf("match %s rating of %s: %w", m.ID, c.Before.Player, err)
				}
			}
		}
		return nil
	})
}

// LoadSummaries inserts players' statistics (with their counters, the
// place counts among them) and current ratings (which rating_buckets'
// triggers count), in one transaction. It runs no ANALYZE: the store
// never does, so the planner sees a loaded database as it sees one the
// write path filled.
func (s *Store) LoadSummaries(ctx context.Context, stats []store.PlayerStats, ratings []store.Rating) error {
	return s.load(ctx, "load summaries", []string{loadStatsSQL, loadCounterSQL, loadRatingSQL}, func(sts []*sql.Stmt) error {
		row, counter, rating := sts[0], sts[1], sts[2]
		for _, st := range stats {
			if _, err := row.ExecContext(ctx, st.Player, st.Game, st.Played, st.Won, st.PlaceSum, st.Forfeits,
				st.WinStreak, st.LongestWinStreak, st.TimePlayed.Microseconds(), st.LastEnded.UnixMicro()); err != nil {
				return fmt.Errorf("statistics of %s: %w", st.Player, err)
			}
			add := func(name string, v int64) error {
				if v == 0 {
					return nil
				}
				if _, err := counter.ExecContext(ctx, st.Player, st.Game, name, v); err != nil {
					return fmt.Errorf("counter %s of %s: %w", name, st.Player, err)
				}
				return nil
			}
			for i, n := range st.Places {
				if err := add(store.PlaceCounter(i+1), int64(n)); err != nil {
					return err
				}
			}
			for name, v := range st.Counters {
				if err := add(name, v); err != nil {
					return err
				}
			}
		}
		for _, r := range ratings {
			if _, err := rating.ExecContext(ctx, r.Game, r.Player, r.Mu, r.Sigma, r.Score, r.Matches, r.Updated.UnixMicro()); err != nil {
				return fmt.Errorf("rating of %s: %w", r.Player, err)
			}
		}
		return nil
	})
}
