package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

// Bulk loading is for benchmark fixtures (hangar seed-history), not a write
// path: it writes the rows Append and its ending transaction would, with
// COPY and without checks, idempotency records (match_commands) or
// notifications. Callers compute statistics and ratings themselves.

// LoadPlayers inserts players and their token hashes with COPY.
func (s *Store) LoadPlayers(ctx context.Context, ps []store.Player, tokenHashes [][]byte) error {
	if len(ps) != len(tokenHashes) {
		return fmt.Errorf("postgres: load players: %d players, %d token hashes", len(ps), len(tokenHashes))
	}
	_, err := s.pool.CopyFrom(ctx, pgx.Identifier{"players"}, []string{"id", "display_name", "created_at"},
		pgx.CopyFromSlice(len(ps), func(i int) ([]any, error) { return []any{ps[i].ID, ps[i].DisplayName, ps[i].Created}, nil }))
	if err == nil {
		// A fixture's tokens outlive any benchmark run.
		_, err = s.pool.CopyFrom(ctx, pgx.Identifier{"player_tokens"}, []string{"token_hash", "player_id", "created_at", "expires_at"},
			pgx.CopyFromSlice(len(ps), func(i int) ([]any, error) {
				return []any{tokenHashes[i], ps[i].ID, ps[i].Created, ps[i].Created.AddDate(10, 0, 0)}, nil
			}))
	}
	if err != nil {
		return wrapErr("load players", err)
	}
	return nil
}

// LoadEnded inserts ended matches with COPY, one table after another, in
// one transaction.
func (s *Store) LoadEnded(ctx context.Context, ms []store.EndedMatch) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		copyRows := func(table string, cols []string, rows func(yield func(...any))) error {
			var all [][]any
			rows(func(v ...any) { all = append(all, v) })
			_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(all))
			return err
		}
		if err := copyRows("matches", []string{"id", "game", "status", "version", "creator_id", "player_ids",
			"free_seats", "bot_turn", "options", "summary", "created_at", "started_at", "ended_at"},
			func(yield func(...any)) {
				for _, e := range ms {
					m := e.Match
					players := m.Players
					if players == nil {
						players = []string{}
					}
					yield(m.ID, m.Game, string(m.Status), m.Version, m.Creator, players, m.FreeSeats, m.BotTurn,
						m.Options, m.Summary, m.Created, nullTime(m.Started), nullTime(m.Ended))
				}
			}); err != nil {
			return err
		}
		// The events, the bulk of it, stream without a copy of their own:
		// a match's consecutive events of one author and time are one run
		// (match_event_runs), as the events of one command are.
		i, j := 0, 0
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"match_event_runs"},
			[]string{"match_id", "last_seq", "first_seq", "types", "payloads", "author_id", "created_at"},
			pgx.CopyFromFunc(func() ([]any, error) {
				for i < len(ms) && j >= len(ms[i].Events) {
					i, j = i+1, 0
				}
				if i == len(ms) {
					return nil, nil
				}
				evs, first := ms[i].Events, j
				var types []string
				var payloads [][]byte
				for j < len(evs) && evs[j].Author == evs[first].Author && evs[j].Time.Equal(evs[first].Time) {
					types, payloads = append(types, evs[j].Type), append(payloads, evs[j].Payload)
					j++
				}
				return []any{ms[i].Match.ID, int64(j), int64(first + 1), types, payloads, evs[first].Author, evs[first].Time}, nil
			}))
		if err != nil {
			return err
		}
		if err := copyRows("match_results", []string{"match_id", "player_id", "game", "ended_at", "seat", "place",
			"seats", "result", "forfeited", "played_us", "rated"},
			func(yield func(...any)) {
				for _, e := range ms {
					for _, r := range e.Result.Seats {
						if !r.Bot {
							yield(e.Match.ID, r.Player, e.Match.Game, e.Match.Ended, r.Seat, r.Place, r.Seats, string(r.Outcome),
								r.Forfeited, r.Played.Microseconds(), r.Rated)
						}
					}
				}
			}); err != nil {
			return err
		}
		if err := copyRows("match_result_counters", []string{"match_id", "player_id", "counter", "value"},
			func(yield func(...any)) {
				for _, e := range ms {
					for _, r := range e.Result.Seats {
						for name, v := range r.Counters {
							if !r.Bot && v != 0 {
								yield(e.Match.ID, r.Player, name, v)
							}
						}
					}
				}
			}); err != nil {
			return err
		}
		if err := copyRows("match_opponents", []string{"player_id", "opponent_id", "ended_at", "match_id"},
			func(yield func(...any)) {
				for _, e := range ms {
					for _, a := range e.Result.Seats {
						for _, b := range e.Result.Seats {
							if !a.Bot && !b.Bot && a.Player != b.Player {
								yield(a.Player, b.Player, e.Match.Ended, e.Match.ID)
							}
						}
					}
				}
			}); err != nil {
			return err
		}
		return copyRows("rating_history", []string{"player_id", "game", "ended_at", "match_id", "mu_before",
			"sigma_before", "score_before", "matches_before", "mu", "sigma", "score", "place", "seats"},
			func(yield func(...any)) {
				for _, e := range ms {
					for _, c := range e.Ratings {
						yield(c.Before.Player, e.Match.Game, e.Match.Ended, e.Match.ID, c.Before.Mu, c.Before.Sigma,
							c.Before.Score, c.Before.Matches, c.After.Mu, c.After.Sigma, c.After.Score, c.Place, c.Seats)
					}
				}
			})
	})
	if err != nil {
		return wrapErr("load ended", err)
	}
	return nil
}

// LoadSummaries inserts players' statistics (with their counters, the
// place counts among them) and current ratings with COPY (whose rows
// rating_buckets' trigger counts).
func (s *Store) LoadSummaries(ctx context.Context, stats []store.PlayerStats, ratings []store.Rating) error {
	_, err := s.pool.CopyFrom(ctx, pgx.Identifier{"player_stats"}, []string{"player_id", "game", "played", "won",
		"place_sum", "forfeits", "win_streak", "longest_win_streak", "played_us", "last_ended_at"},
		pgx.CopyFromSlice(len(stats), func(i int) ([]any, error) {
			st := stats[i]
			return []any{st.Player, st.Game, st.Played, st.Won, st.PlaceSum,
				st.Forfeits, st.WinStreak, st.LongestWinStreak, st.TimePlayed.Microseconds(), st.LastEnded}, nil
		}))
	if err == nil {
		var rows [][]any
		for _, st := range stats {
			for i, n := range st.Places {
				if n != 0 {
					rows = append(rows, []any{st.Player, st.Game, store.PlaceCounter(i + 1), int64(n)})
				}
			}
			for name, v := range st.Counters {
				if v != 0 {
					rows = append(rows, []any{st.Player, st.Game, name, v})
				}
			}
		}
		_, err = s.pool.CopyFrom(ctx, pgx.Identifier{"player_counters"}, []string{"player_id", "game", "counter", "value"},
			pgx.CopyFromRows(rows))
	}
	if err == nil {
		_, err = s.pool.CopyFrom(ctx, pgx.Identifier{"ratings"}, []string{"game", "player_id", "mu", "sigma", "score", "matches", "updated_at"},
			pgx.CopyFromSlice(len(ratings), func(i int) ([]any, error) {
				r := ratings[i]
				return []any{r.Game, r.Player, r.Mu, r.Sigma, r.Score, r.Matches, r.Updated}, nil
			}))
	}
	if err == nil {
		// Statistics for the planner and a visibility map for index-only
		// scans, as autovacuum would leave them.
		_, err = s.pool.Exec(ctx, `VACUUM ANALYZE`)
	}
	if err != nil {
		return wrapErr("load summaries", err)
	}
	return nil
}
