package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The append that ends a started match (store.Append.End) writes the result
// rows, head-to-head pairs, statistics, counters and ratings in the append's
// own transaction. The single writer holds the write lock throughout, so
// ratings are read and written with nothing in between.

const (
	insertResultSQL = `INSERT INTO match_results (match_id, player_id, game, ended_at, seat, place,
		seats, result, forfeited, played_us, rated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertResultCounterSQL = `INSERT INTO match_result_counters (match_id, player_id, counter, value)
		VALUES (?, ?, ?, ?)`
	// upsertCounterSQL adds a seat's counter, or a count of its place
	// (store.PlaceCounter), to its player's in the game.
	upsertCounterSQL = `INSERT INTO player_counters AS s (player_id, game, counter, value)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (player_id, game, counter) DO UPDATE SET value = s.value + excluded.value`
	insertOpponentSQL = `INSERT INTO match_opponents (player_id, opponent_id, ended_at, match_id)
		VALUES (?, ?, ?, ?)`
	// upsertStatsSQL is store.PlayerStats.Add in SQL; the place counts are
	// counters (upsertCounterSQL).
	upsertStatsSQL = `INSERT INTO player_stats AS s (player_id, game, played, won, place_sum,
		forfeits, win_streak, longest_win_streak, played_us, last_ended_at)
		VALUES (?1, ?2, 1, ?3, ?4, ?5, ?3, ?3, ?6, ?7)
		ON CONFLICT (player_id, game) DO UPDATE SET
			played = s.played + 1,
			won = s.won + excluded.won,
			place_sum = s.place_sum + excluded.place_sum,
			forfeits = s.forfeits + excluded.forfeits,
			win_streak = CASE WHEN excluded.won = 1 THEN s.win_streak + 1 ELSE 0 END,
			longest_win_streak = max(s.longest_win_streak, CASE WHEN excluded.won = 1 THEN s.win_streak + 1 ELSE 0 END),
			played_us = s.played_us + excluded.played_us,
			last_ended_at = max(s.last_ended_at, excluded.last_ended_at)`
	selectRatingSQL = `SELECT mu, sigma, score, matches, updated_at FROM ratings WHERE game = ? AND player_id = ?`
	upsertRatingSQL = `INSERT INTO ratings (game, player_id, mu, sigma, score, matches, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (game, player_id) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,
			score = excluded.score, matches = excluded.matches, updated_at = excluded.updated_at`
	insertRatingHistorySQL = `INSERT INTO rating_history (player_id, game, ended_at, match_id,
		mu_before, sigma_before, score_before, matches_before, mu, sigma, score, place, seats)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// endTime is when the match a ends ended.
func endTime(a store.Append) time.Time {
	if !a.Match.Ended.IsZero() {
		return a.Match.Ended
	}
	return a.Time
}

// writeEnd writes a.End in tx, after the append's own writes.
func writeEnd(ctx context.Context, tx *sql.Tx, a store.Append) error {
	if err := a.End.Check(); err != nil {
		return err
	}
	m, ended := a.Match, endTime(a).UnixMicro()
	var humans []string
	for _, r := range a.End.Seats {
		if r.Bot {
			continue
		}
		humans = append(humans, r.Player)
		won := r.Outcome == store.OutcomeWon
		_, err := tx.ExecContext(ctx, insertResultSQL, m.ID, r.Player, m.Game, ended, r.Seat, r.Place, r.Seats,
			string(r.Outcome), r.Forfeited, r.Played.Microseconds(), r.Rated)
		if err == nil {
			_, err = tx.ExecContext(ctx, upsertStatsSQL, r.Player, m.Game, won, r.Place, r.Forfeited,
				r.Played.Microseconds(), ended)
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, upsertCounterSQL, r.Player, m.Game, store.PlaceCounter(r.Place), 1)
		}
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(r.Counters)) {
			v := r.Counters[name]
			if v == 0 {
				continue
			}
			_, err := tx.ExecContext(ctx, insertResultCounterSQL, m.ID, r.Player, name, v)
			if err == nil {
				_, err = tx.ExecContext(ctx, upsertCounterSQL, r.Player, m.Game, name, v)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, p := range humans {
		for _, o := range humans {
			if p == o {
				continue
			}
			if _, err := tx.ExecContext(ctx, insertOpponentSQL, p, o, ended, m.ID); err != nil {
				return err
			}
		}
	}
	if a.End.Rate == nil {
		return nil
	}
	var before []store.Rating
	var rs []store.SeatResult
	for _, r := range a.End.Seats {
		if !r.Rated {
			continue
		}
		cur := store.Rating{Player: r.Player, Game: m.Game}
		var at int64
		err := tx.QueryRowContext(ctx, selectRatingSQL, m.Game, r.Player).Scan(&cur.Mu, &cur.Sigma, &cur.Score, &cur.Matches, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			cur.Updated = fromMicros(at)
		}
		before, rs = append(before, cur), append(rs, r)
	}
	after, err := a.End.Rate(slices.Clone(before))
	if err != nil {
		return fmt.Errorf("rate: %w", err)
	}
	if len(after) != len(before) {
		return fmt.Errorf("rate: %d ratings for %d players", len(after), len(before))
	}
	for i, b := range before {
		n := after[i]
		_, err := tx.ExecContext(ctx, upsertRatingSQL, m.Game, rs[i].Player, n.Mu, n.Sigma, n.Score, b.Matches+1, ended)
		if err == nil {
			_, err = tx.ExecContext(ctx, insertRatingHistorySQL, rs[i].Player, m.Game, ended, m.ID,
				b.Mu, b.Sigma, b.Score, b.Matches, n.Mu, n.Sigma, n.Score, rs[i].Place, rs[i].Seats)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// countersSQL aggregates the counter rows selected by a WHERE clause into a
// JSON object of counter name to value ('{}' when there are none).
const countersSQL = `SELECT json_group_object(counter, value) FROM `

// historyColumns are a history row: the player's result, its counters (a
// JSON object), the rating change (null when unrated), then the match's
// matchColumns.
const historyColumns = `r.player_id, r.seat, r.place, r.seats, r.result, r.forfeited, r.played_us, r.rated,
	(` + countersSQL + `match_result_counters c
		WHERE c.match_id = r.match_id AND c.player_id = r.player_id AND c.value <> 0),
	h.mu_before, h.sigma_before, h.score_before, h.matches_before, h.mu, h.sigma, h.score, ` + matchColumns

// historySQL builds the query for q. With an opponent it walks
// match_opponents' primary key (player, opponent, ended_at, match_id);
// otherwise a player's results along one of the (player[, game | result],
// ended_at, match_id) indexes. CROSS JOIN keeps the walked table outermost.
func historySQL(q store.HistoryQuery) (string, []any) {
	var where []string
	var args []any
	from, key := "match_results r", "r"
	if q.Opponent != "" {
		from, key = "match_opponents o CROSS JOIN match_results r", "o"
		where = append(where, "o.player_id = ?", "o.opponent_id = ?", "r.match_id = o.match_id", "r.player_id = o.player_id")
		args = append(args, q.Player, q.Opponent)
	} else {
		where = append(where, "r.player_id = ?")
		args = append(args, q.Player)
	}
	if q.Game != "" {
		where = append(where, "r.game = ?")
		args = append(args, q.Game)
	}
	if q.Outcome != "" {
		where = append(where, "r.result = ?")
		args = append(args, string(q.Outcome))
	}
	if !q.From.IsZero() {
		where = append(where, key+".ended_at >= ?")
		args = append(args, q.From.UnixMicro())
	}
	if !q.To.IsZero() {
		where = append(where, key+".ended_at < ?")
		args = append(args, q.To.UnixMicro())
	}
	if q.After != nil {
		where = append(where, fmt.Sprintf("(%s.ended_at, %s.match_id) < (?, ?)", key, key))
		args = append(args, q.After.Ended.UnixMicro(), q.After.ID)
	}
	if q.Viewer != "" {
		where = append(where, visibleSQL)
		args = append(args, q.Viewer, q.Viewer, q.Viewer)
	}
	sql := `SELECT ` + historyColumns + ` FROM ` + from + `
	CROSS JOIN matches m
	LEFT JOIN rating_history h ON h.player_id = r.player_id AND h.game = r.game
		AND h.ended_at = r.ended_at AND h.match_id = r.match_id
	WHERE m.id = r.match_id AND ` + strings.Join(where, " AND ") +
		fmt.Sprintf(" ORDER BY %s.ended_at DESC, %s.match_id DESC LIMIT ?", key, key)
	args = append(args, q.Limit)
	return sql, args
}

// prefixed scans its leading columns into pre and the rest into what Scan
// is given, so that scanMatch reads the match columns at the end of a row.
type prefixed struct {
	rows *sql.Rows
	pre  []any
}

func (p prefixed) Scan(dst ...any) error { return p.rows.Scan(append(p.pre, dst...)...) }

// PlayerMatches implements store.History.
func (s *Store) PlayerMatches(ctx context.Context, q store.HistoryQuery) ([]store.PlayerMatch, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("sqlite: player matches: negative limit %d", q.Limit)
	}
	query, args := historySQL(q)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: player matches: %w", err)
	}
	defer rows.Close()
	pms := []store.PlayerMatch{}
	for rows.Next() {
		var res store.SeatResult
		var outcome, counters string
		var played int64
		var mu0, sigma0, score0, mu, sigma, score sql.NullFloat64
		var matches0 sql.NullInt64
		m, err := scanMatch(prefixed{rows, []any{&res.Player, &res.Seat, &res.Place, &res.Seats, &outcome,
			&res.Forfeited, &played, &res.Rated, &counters, &mu0, &sigma0, &score0, &matches0, &mu, &sigma, &score}})
		if err != nil {
			return nil, fmt.Errorf("sqlite: player matches: %w", err)
		}
		res.Outcome, res.Played = store.Outcome(outcome), time.Duration(played)*time.Microsecond
		if res.Counters, err = countersOf(counters); err != nil {
			return nil, fmt.Errorf("sqlite: player matches: %w", err)
		}
		pm := store.PlayerMatch{Match: m, Result: res}
		if mu.Valid {
			n := int(matches0.Int64)
			pm.Rating = &store.RatingChange{MatchID: m.ID, Ended: m.Ended, Place: res.Place, Seats: res.Seats,
				Before: store.Rating{Player: res.Player, Game: m.Game, Mu: mu0.Float64, Sigma: sigma0.Float64, Score: score0.Float64, Matches: n},
				After:  store.Rating{Player: res.Player, Game: m.Game, Mu: mu.Float64, Sigma: sigma.Float64, Score: score.Float64, Matches: n + 1, Updated: m.Ended}}
		}
		pms = append(pms, pm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: player matches: %w", err)
	}
	return pms, nil
}

// statsSQL reads a player's statistics row and, in the same statement (one
// snapshot), the player's counters in the game, the place counters among
// them.
const statsSQL = `SELECT s.played, s.won, s.place_sum, s.forfeits, s.win_streak, s.longest_win_streak, s.played_us, s.last_ended_at,
	(` + countersSQL + `player_counters c WHERE c.player_id = s.player_id AND c.game = s.game AND c.value <> 0)
	FROM player_stats s WHERE s.player_id = ? AND s.game = ?`

// countersOf decodes the JSON object countersSQL built.
func countersOf(obj string) (store.Counters, error) {
	var c store.Counters
	if err := json.Unmarshal([]byte(obj), &c); err != nil {
		return nil, fmt.Errorf("counters %q: %w", obj, err)
	}
	if len(c) == 0 {
		return nil, nil
	}
	return c, nil
}

// PlayerStats implements store.History.
func (s *Store) PlayerStats(ctx context.Context, player, game string) (store.PlayerStats, error) {
	st := store.PlayerStats{Player: player, Game: game}
	var played, last int64
	var counters string
	err := s.r.QueryRowContext(ctx, statsSQL, player, game).Scan(&st.Played, &st.Won,
		&st.PlaceSum, &st.Forfeits, &st.WinStreak, &st.LongestWinStreak, &played, &last, &counters)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.PlayerStats{Player: player, Game: game}, nil
	case err != nil:
		return st, fmt.Errorf("sqlite: player stats: %w", err)
	}
	st.TimePlayed, st.LastEnded = time.Duration(played)*time.Microsecond, fromMicros(last)
	all, err := countersOf(counters)
	if err != nil {
		return st, fmt.Errorf("sqlite: player stats: %w", err)
	}
	st.Places, st.Counters = store.SplitPlaces(all)
	return st, nil
}

// ratingHistorySQL walks rating_history's primary key.
func ratingHistorySQL(q store.RatingQuery) (string, []any) {
	args := []any{q.Player, q.Game}
	sql := `SELECT match_id, ended_at, mu_before, sigma_before, score_before, matches_before,
		mu, sigma, score, place, seats FROM rating_history WHERE player_id = ? AND game = ?`
	if q.After != nil {
		sql += ` AND (ended_at, match_id) < (?, ?)`
		args = append(args, q.After.Ended.UnixMicro(), q.After.ID)
	}
	if q.Viewer != "" {
		// In the statement, before the LIMIT: a page is full and its
		// cursor is a row the viewer saw.
		sql += ` AND EXISTS (SELECT 1 FROM matches m WHERE m.id = rating_history.match_id AND ` + visibleSQL + `)`
		args = append(args, q.Viewer, q.Viewer, q.Viewer)
	}
	return sql + ` ORDER BY ended_at DESC, match_id DESC LIMIT ?`, append(args, q.Limit)
}

// RatingHistory implements store.History.
func (s *Store) RatingHistory(ctx context.Context, q store.RatingQuery) ([]store.RatingChange, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("sqlite: rating history: negative limit %d", q.Limit)
	}
	query, args := ratingHistorySQL(q)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: rating history: %w", err)
	}
	defer rows.Close()
	cs := []store.RatingChange{}
	for rows.Next() {
		c := store.RatingChange{Before: store.Rating{Player: q.Player, Game: q.Game}, After: store.Rating{Player: q.Player, Game: q.Game}}
		var at int64
		if err := rows.Scan(&c.MatchID, &at, &c.Before.Mu, &c.Before.Sigma, &c.Before.Score, &c.Before.Matches,
			&c.After.Mu, &c.After.Sigma, &c.After.Score, &c.Place, &c.Seats); err != nil {
			return nil, fmt.Errorf("sqlite: rating history: %w", err)
		}
		c.Ended = fromMicros(at)
		c.After.Matches, c.After.Updated = c.Before.Matches+1, c.Ended
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: rating history: %w", err)
	}
	return cs, nil
}

// standingColumns are a leaderboard row; display_name comes from players.
const standingColumns = `r.player_id, r.mu, r.sigma, r.score, r.matches, r.updated_at, coalesce(p.display_name, '')`

// ratingBucket is a score's bucket in rating_buckets, in SQL: a tenth of a
// point a bucket, as the table's triggers (migration 0022) count.
func ratingBucket(score string) string { return `CAST(floor(` + score + ` * 10) AS INTEGER)` }

// ratingsAbove counts game's ratings ordered after (score, player) in the
// leaderboard's order (cmp ">") or from it on (">="), all SQL expressions:
// the buckets above the score's bucket, plus the ratings of its own bucket
// from the leaderboard's index.
func ratingsAbove(game, score, player, cmp string) string {
	return `(SELECT coalesce(sum(players), 0) FROM rating_buckets b
			WHERE b.game = ` + game + ` AND b.bucket > ` + ratingBucket(score) + `)
		+ (SELECT count(*) FROM ratings c WHERE c.game = ` + game + `
			AND (c.score, c.player_id) ` + cmp + ` (` + score + `, ` + player + `)
			AND c.score < (` + ratingBucket(score) + ` + 2) / 10.0
			AND ` + ratingBucket("c.score") + ` = ` + ratingBucket(score) + `)`
}

// leaderboardSQL reads a range of ratings_leaderboard and, with a cursor,
// counts the entries up to it (the rank of the page's first entry, less
// one) in the same statement, so both come from one snapshot.
func leaderboardSQL(q store.LeaderboardQuery) (string, []any) {
	if q.After == nil {
		return `SELECT ` + standingColumns + `, 0 FROM ratings r LEFT JOIN players p ON p.id = r.player_id
			WHERE r.game = ? ORDER BY r.score DESC, r.player_id DESC LIMIT ?`, []any{q.Game, q.Limit}
	}
	return `SELECT ` + standingColumns + `, ` + ratingsAbove("?1", "?2", "?3", ">=") + `
		FROM ratings r LEFT JOIN players p ON p.id = r.player_id
		WHERE r.game = ?1 AND (r.score, r.player_id) < (?2, ?3)
		ORDER BY r.score DESC, r.player_id DESC LIMIT ?4`, []any{q.Game, q.After.Score, q.After.Player, q.Limit}
}

// standingSQL reads one player's rating and counts the entries above it.
var standingSQL = `SELECT ` + standingColumns + `, ` + ratingsAbove("r.game", "r.score", "r.player_id", ">") + `
	FROM ratings r LEFT JOIN players p ON p.id = r.player_id
	WHERE r.game = ? AND r.player_id = ?`

func scanStanding(r interface{ Scan(...any) error }, game string) (store.Standing, error) {
	st := store.Standing{Rating: store.Rating{Game: game}}
	var at int64
	err := r.Scan(&st.Player, &st.Mu, &st.Sigma, &st.Score, &st.Matches, &at, &st.DisplayName, &st.Rank)
	st.Rank++
	st.Updated = fromMicros(at)
	return st, err
}

// Leaderboard implements store.History.
func (s *Store) Leaderboard(ctx context.Context, q store.LeaderboardQuery) ([]store.Standing, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("sqlite: leaderboard: negative limit %d", q.Limit)
	}
	query, args := leaderboardSQL(q)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: leaderboard: %w", err)
	}
	defer rows.Close()
	sts := []store.Standing{}
	for rows.Next() {
		st, err := scanStanding(rows, q.Game)
		if err != nil {
			return nil, fmt.Errorf("sqlite: leaderboard: %w", err)
		}
		st.Rank += len(sts)
		sts = append(sts, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: leaderboard: %w", err)
	}
	return sts, nil
}

// Standing implements store.History.
func (s *Store) Standing(ctx context.Context, game, player string) (store.Standing, error) {
	st, err := scanStanding(s.r.QueryRowContext(ctx, standingSQL, game, player), game)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Standing{}, store.ErrNotFound
	case err != nil:
		return store.Standing{}, fmt.Errorf("sqlite: standing: %w", err)
	}
	return st, nil
}
