package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

// The append that ends a started match (store.Append.End) runs the usual
// append statement in a transaction and, when it applied, writes the result
// rows, the head-to-head pairs, the statistics, the counters and the ratings
// in the same transaction. The transaction takes two round trips (endTx):
// BEGIN, the append, the history's writes and the read of the players'
// ratings go together, then the new ratings and COMMIT. Appends that end
// nothing keep the single statement of Append.
//
// Ratings are read and written under transaction-scoped advisory locks on
// (game, player), taken in key order: two matches of one player that end
// at once rate one after the other, and never deadlock.

// ratingLockClass is the first key of the rating advisory locks ("HANG").
const ratingLockClass = 0x48414E47

// errNotApplied rolls back an ending append whose statement changed nothing.
var errNotApplied = errors.New("postgres: append not applied")

// appendEnd is Append for a.End != nil; q and args are the append statement.
func (s *Store) appendEnd(ctx context.Context, a store.Append, q string, args []any) (store.Result, error) {
	if err := a.End.Check(); err != nil {
		return store.Result{}, err
	}
	for attempt := 1; ; attempt++ {
		err := s.endTx(ctx, a, q, args)
		if err == nil {
			return store.Result{First: a.Expected + 1, Last: a.Match.Version}, nil
		}
		var pgErr *pgconn.PgError
		switch {
		case errors.Is(err, errNotApplied):
		case errors.As(err, &pgErr) && (pgErr.Code == uniqueViolation || pgErr.Code == serializationFailure):
			// Lost a race on a unique key, as in Append.
		case errors.As(err, &pgErr) && pgErr.Code == deadlockDetected && attempt < 3:
			continue // a deadlock with another writer: try again
		default:
			return store.Result{}, wrapErr("append", err)
		}
		return s.explain(ctx, a)
	}
}

// endTx commits the append a that ends its match, and the end's writes, in
// one transaction of two round trips: the first sends BEGIN, the append
// statement (q, args), the end's writes and the read of the players'
// ratings; the second the new ratings and COMMIT. The end's writes go
// before the server has said whether the append applied: when it did not
// (a stale version, a retried command), or any statement failed, the
// transaction rolls back, and nothing it wrote stays. In five round trips
// (BEGIN, the append, the writes, the ratings, COMMIT, each waiting for
// the last) the ending move took 2.8 ms where another took 1.3, and 13.5
// ms with the database 1 ms away; in two, 2.2 and 6.5 ms (BENCHMARKS.md,
// twenty-eighth round).
func (s *Store) endTx(ctx context.Context, a store.Append, q string, args []any) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	committed := false
	defer func() {
		if !committed {
			rollback(conn.Conn())
		}
	}()
	var applied int
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(q, args...).QueryRow(func(r pgx.Row) error { return r.Scan(&applied) })
	end := queueEnd(b, a)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if applied != 1 {
		return errNotApplied
	}
	b = &pgx.Batch{}
	if err := end.queueRatings(b); err != nil {
		return err
	}
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	committed = true
	return nil
}

// rollback ends the transaction c has open, if any; a connection that
// cannot is closed, and its pool then drops it.
func rollback(c *pgx.Conn) {
	if c.IsClosed() || c.PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		_ = c.Close(ctx)
	}
}

const insertResultsSQL = `
INSERT INTO match_results (match_id, player_id, game, ended_at, seat, place, seats, result,
	forfeited, played_us, rated)
SELECT $1, r.p, $2, $3, r.seat, r.place, r.seats, r.result, r.forfeited, r.played, r.rated
FROM unnest($4::text[], $5::int[], $6::int[], $7::int[], $8::text[], $9::bool[], $10::bigint[], $11::bool[])
	AS r(p, seat, place, seats, result, forfeited, played, rated)`

// insertResultCountersSQL writes the seats' counters: parallel arrays of
// player, counter and value.
const insertResultCountersSQL = `
INSERT INTO match_result_counters (match_id, player_id, counter, value)
SELECT $1, c.p, c.counter, c.value FROM unnest($2::text[], $3::text[], $4::bigint[]) AS c(p, counter, value)`

const insertOpponentsSQL = `
INSERT INTO match_opponents (player_id, opponent_id, ended_at, match_id)
SELECT a, b, $2, $1 FROM unnest($3::text[]) AS a, unnest($3::text[]) AS b WHERE a <> b`

// upsertStatsSQL is store.PlayerStats.Add in SQL, one row per player in
// player order; the place counts are counters (upsertCountersSQL).
const upsertStatsSQL = `
INSERT INTO player_stats AS s (player_id, game, played, won, place_sum, forfeits, win_streak,
	longest_win_streak, played_us, last_ended_at)
SELECT r.p, $1, 1, r.won, r.place, r.forfeited, r.won, r.won, r.played, $2
FROM unnest($3::text[], $4::int[], $5::int[], $6::int[], $7::bigint[])
	AS r(p, won, place, forfeited, played)
ORDER BY r.p
ON CONFLICT (player_id, game) DO UPDATE SET
	played = s.played + 1,
	won = s.won + excluded.won,
	place_sum = s.place_sum + excluded.place_sum,
	forfeits = s.forfeits + excluded.forfeits,
	win_streak = CASE WHEN excluded.won = 1 THEN s.win_streak + 1 ELSE 0 END,
	longest_win_streak = GREATEST(s.longest_win_streak, CASE WHEN excluded.won = 1 THEN s.win_streak + 1 ELSE 0 END),
	played_us = s.played_us + excluded.played_us,
	last_ended_at = GREATEST(s.last_ended_at, excluded.last_ended_at)`

// upsertCountersSQL adds the seats' counters, and a count of one for each
// seat's place (store.PlaceCounter), to their players' in the game, in
// (player, counter) order. The rows it locks belong to players whose
// player_stats rows upsertStatsSQL has locked before it in the same order,
// so two ends that share players take these locks one after the other.
const upsertCountersSQL = `
INSERT INTO player_counters AS s (player_id, game, counter, value)
SELECT c.p, $1, c.counter, c.value FROM unnest($2::text[], $3::text[], $4::bigint[]) AS c(p, counter, value)
ORDER BY c.p, c.counter
ON CONFLICT (player_id, game, counter) DO UPDATE SET value = s.value + excluded.value`

const lockRatingsSQL = `
SELECT count(pg_advisory_xact_lock($1, k))
FROM (SELECT DISTINCT hashtext($2 || ':' || p) AS k FROM unnest($3::text[]) AS p ORDER BY k) AS l`

const selectRatingsSQL = `
SELECT player_id, mu, sigma, score, matches, updated_at FROM ratings
WHERE game = $1 AND player_id = ANY($2::text[])`

const upsertRatingsSQL = `
INSERT INTO ratings (game, player_id, mu, sigma, score, matches, updated_at)
SELECT $1, r.p, r.mu, r.sigma, r.score, r.matches, $2
FROM unnest($3::text[], $4::float8[], $5::float8[], $6::float8[], $7::int[]) AS r(p, mu, sigma, score, matches)
ON CONFLICT (game, player_id) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,
	score = excluded.score, matches = excluded.matches, updated_at = excluded.updated_at`

// ratingBucket is a score's bucket in rating_buckets, in SQL: a tenth of a
// point a bucket. Ranks compute it by the expression the table's trigger
// (migration 0023) counts by.
func ratingBucket(score string) string { return `floor(` + score + ` * 10)::integer` }

const insertRatingHistorySQL = `
INSERT INTO rating_history (player_id, game, ended_at, match_id, mu_before, sigma_before,
	score_before, matches_before, mu, sigma, score, place, seats)
SELECT r.p, $1, $2, $3, r.mu0, r.sigma0, r.score0, r.matches0, r.mu, r.sigma, r.score, r.place, r.seats
FROM unnest($4::text[], $5::float8[], $6::float8[], $7::float8[], $8::int[], $9::float8[],
	$10::float8[], $11::float8[], $12::int[], $13::int[])
	AS r(p, mu0, sigma0, score0, matches0, mu, sigma, score, place, seats)`

// endTime is when the match a ends ended.
func endTime(a store.Append) time.Time {
	if !a.Match.Ended.IsZero() {
		return a.Match.Ended
	}
	return a.Time
}

// writeEnd writes a.End in tx, after the append statement applied.
func writeEnd(ctx context.Context, tx pgx.Tx, a store.Append) error {
	b := &pgx.Batch{}
	end := queueEnd(b, a)
	if b.Len() == 0 {
		return nil
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	b = &pgx.Batch{}
	if err := end.queueRatings(b); err != nil || b.Len() == 0 {
		return err
	}
	return tx.SendBatch(ctx, b).Close()
}

// endWrites is the end of the match a ends, its history queued on a batch
// (queueEnd); once that batch has run, current holds the rated players'
// ratings (nil when no seat is rated) and queueRatings queues the new
// ones.
type endWrites struct {
	a       store.Append
	ended   time.Time
	current map[string]store.Rating
}

// queueEnd queues on b the writes of a.End that need no answer from the
// server (the results, the head-to-head pairs, the statistics, the
// counters), then the rating locks and the read of the rated players'
// current ratings.
func queueEnd(b *pgx.Batch, a store.Append) *endWrites {
	m, ended := a.Match, endTime(a)
	end := &endWrites{a: a, ended: ended}
	var humans []store.SeatResult
	for _, r := range a.End.Seats {
		if !r.Bot {
			humans = append(humans, r)
		}
	}
	slices.SortFunc(humans, func(x, y store.SeatResult) int { return strings.Compare(x.Player, y.Player) })
	n := len(humans)
	var (
		ids                = make([]string, n)
		results            = make([]string, n)
		seat, place, seats = make([]int32, n), make([]int32, n), make([]int32, n)
		won, forfeits      = make([]int32, n), make([]int32, n)
		forfeited, rated   = make([]bool, n), make([]bool, n)
		played             = make([]int64, n)
		ratedIDs           []string
		// The seats' counters, one element per (player, counter), in that
		// order.
		cPlayers, cNames []string
		cValues          []int64
		// The players' counters to add: the seats' counters and their
		// place counters.
		pPlayers, pNames []string
		pValues          []int64
	)
	for i, r := range humans {
		ids[i], results[i] = r.Player, string(r.Outcome)
		seat[i], place[i], seats[i] = int32(r.Seat), int32(r.Place), int32(r.Seats)
		forfeited[i], rated[i], played[i] = r.Forfeited, r.Rated, r.Played.Microseconds()
		for _, name := range slices.Sorted(maps.Keys(r.Counters)) {
			if v := r.Counters[name]; v != 0 {
				cPlayers, cNames, cValues = append(cPlayers, r.Player), append(cNames, name), append(cValues, v)
			}
		}
		pPlayers, pNames, pValues = append(pPlayers, r.Player), append(pNames, store.PlaceCounter(r.Place)), append(pValues, 1)
		if r.Outcome == store.OutcomeWon {
			won[i] = 1
		}
		if r.Forfeited {
			forfeits[i] = 1
		}
		if r.Rated {
			ratedIDs = append(ratedIDs, r.Player)
		}
	}
	if n == 0 {
		return end
	}
	b.Queue(insertResultsSQL, m.ID, m.Game, ended, ids, seat, place, seats, results, forfeited, played, rated)
	b.Queue(insertOpponentsSQL, m.ID, ended, ids)
	b.Queue(upsertStatsSQL, m.Game, ended, ids, won, place, forfeits, played)
	if len(cNames) > 0 {
		b.Queue(insertResultCountersSQL, m.ID, cPlayers, cNames, cValues)
	}
	pPlayers, pNames, pValues = append(pPlayers, cPlayers...), append(pNames, cNames...), append(pValues, cValues...)
	b.Queue(upsertCountersSQL, m.Game, pPlayers, pNames, pValues)
	if len(ratedIDs) > 0 {
		b.Queue(lockRatingsSQL, int32(ratingLockClass), m.Game, ratedIDs)
		end.current = make(map[string]store.Rating, len(ratedIDs))
		b.Queue(selectRatingsSQL, m.Game, ratedIDs).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				r := store.Rating{Game: m.Game}
				if err := rows.Scan(&r.Player, &r.Mu, &r.Sigma, &r.Score, &r.Matches, &r.Updated); err != nil {
					return err
				}
				end.current[r.Player] = r
			}
			return rows.Err()
		})
	}
	return end
}

// queueRatings rates the end's rated seats from their current ratings and
// queues the new ratings on b; an end without rated seats queues nothing.
func (e *endWrites) queueRatings(b *pgx.Batch) error {
	if e.current == nil {
		return nil
	}
	a := e.a
	var before []store.Rating
	var rs []store.SeatResult
	for _, r := range a.End.Seats {
		if r.Rated {
			cur, ok := e.current[r.Player]
			if !ok {
				cur = store.Rating{Player: r.Player, Game: a.Match.Game}
			}
			before, rs = append(before, cur), append(rs, r)
		}
	}
	after, err := a.End.Rate(slices.Clone(before))
	if err != nil {
		return fmt.Errorf("rate: %w", err)
	}
	if len(after) != len(before) {
		return fmt.Errorf("rate: %d ratings for %d players", len(after), len(before))
	}
	n := len(before)
	ids := make([]string, n)
	mu0, sigma0, score0, mu, sigma, score := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	matches0, matches, place, seats := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	for i, b := range before {
		ids[i] = rs[i].Player
		mu0[i], sigma0[i], score0[i], matches0[i] = b.Mu, b.Sigma, b.Score, int32(b.Matches)
		mu[i], sigma[i], score[i], matches[i] = after[i].Mu, after[i].Sigma, after[i].Score, int32(b.Matches+1)
		place[i], seats[i] = int32(rs[i].Place), int32(rs[i].Seats)
	}
	b.Queue(upsertRatingsSQL, a.Match.Game, e.ended, ids, mu, sigma, score, matches)
	b.Queue(insertRatingHistorySQL, a.Match.Game, e.ended, a.Match.ID, ids, mu0, sigma0, score0, matches0, mu, sigma, score, place, seats)
	return nil
}

// historyMatchColumns are matchColumns of the matches table aliased m.
const historyMatchColumns = `m.id, m.game, m.status, m.version, m.creator_id, m.player_ids, m.free_seats,
	m.bot_turn, m.options, m.summary, m.created_at, m.started_at, m.ended_at, m.private, m.invited_ids`

// historyColumns are a history row: the player's result, its counters (a
// JSON object, null when none), the rating change (null when unrated) and
// the match.
const historyColumns = `r.player_id, r.seat, r.place, r.seats, r.result, r.forfeited, r.played_us, r.rated,
	cs.counters,
	h.mu_before, h.sigma_before, h.score_before, h.matches_before, h.mu, h.sigma, h.score, ` + historyMatchColumns

// countersSQL aggregates the counter rows selected by a WHERE clause into a
// JSON object of counter name to value, counters (null when there are
// none); jsonb numbers are exact, so any int64 comes back as it went in.
const countersSQL = `SELECT jsonb_object_agg(counter, value) AS counters FROM `

// historySQL builds the query for q. With an opponent it walks the pair
// table's (player, opponent, ended_at, match_id) key; otherwise a player's
// results along one of the (player[, game | result], ended_at, match_id)
// indexes.
func historySQL(q store.HistoryQuery) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	from, key := "match_results r", "r"
	if q.Opponent != "" {
		from = `match_opponents o JOIN match_results r ON r.match_id = o.match_id AND r.player_id = o.player_id`
		key = "o"
		where = append(where, "o.player_id = "+arg(q.Player), "o.opponent_id = "+arg(q.Opponent))
	} else {
		where = append(where, "r.player_id = "+arg(q.Player))
	}
	if q.Game != "" {
		where = append(where, "r.game = "+arg(q.Game))
	}
	if q.Outcome != "" {
		where = append(where, "r.result = "+arg(string(q.Outcome)))
	}
	if !q.From.IsZero() {
		where = append(where, key+".ended_at >= "+arg(q.From))
	}
	if !q.To.IsZero() {
		where = append(where, key+".ended_at < "+arg(q.To))
	}
	if q.After != nil {
		where = append(where, fmt.Sprintf("(%s.ended_at, %s.match_id) < (%s, %s)", key, key, arg(q.After.Ended), arg(q.After.ID)))
	}
	if q.Viewer != "" {
		where = append(where, visibleTo("m.", arg(q.Viewer)))
	}
	// The rating change is a LATERAL probe of rating_history's key per row
	// of the page (LIMIT 1 keeps Postgres from flattening it into a join):
	// a generic plan, made for a player of average history, would otherwise
	// read a busy player's whole rating history to join it. The counters
	// are an aggregate over match_result_counters' key, per row too.
	sql := `SELECT ` + historyColumns + ` FROM ` + from + `
	JOIN matches m ON m.id = r.match_id
	CROSS JOIN LATERAL (` + countersSQL + `match_result_counters c
		WHERE c.match_id = r.match_id AND c.player_id = r.player_id AND c.value <> 0) cs
	LEFT JOIN LATERAL (SELECT mu_before, sigma_before, score_before, matches_before, mu, sigma, score
		FROM rating_history h WHERE r.rated AND h.player_id = r.player_id AND h.game = r.game
		AND h.ended_at = r.ended_at AND h.match_id = r.match_id LIMIT 1) h ON true
	WHERE ` + strings.Join(where, " AND ") +
		fmt.Sprintf(" ORDER BY %s.ended_at DESC, %s.match_id DESC LIMIT %s", key, key, arg(q.Limit))
	return sql, args
}

// PlayerMatches implements store.History, on the read replica when there
// is one (replica.go).
func (s *Store) PlayerMatches(ctx context.Context, q store.HistoryQuery) ([]store.PlayerMatch, error) {
	return fromReplica(ctx, s, func(db querier) ([]store.PlayerMatch, error) { return playerMatches(ctx, db, q) })
}

func playerMatches(ctx context.Context, db querier, q store.HistoryQuery) ([]store.PlayerMatch, error) {
	sql, args := historySQL(q)
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrapErr("player matches", err)
	}
	pms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.PlayerMatch, error) {
		var pm store.PlayerMatch
		var res store.SeatResult
		var result, status string
		var played int64
		var mu0, sigma0, score0, mu, sigma, score *float64
		var matches0 *int
		var started, ended *time.Time
		m := &pm.Match
		err := r.Scan(&res.Player, &res.Seat, &res.Place, &res.Seats, &result, &res.Forfeited, &played, &res.Rated,
			&res.Counters, &mu0, &sigma0, &score0, &matches0, &mu, &sigma, &score,
			&m.ID, &m.Game, &status, &m.Version, &m.Creator, &m.Players, &m.FreeSeats,
			&m.BotTurn, &m.Options, &m.Summary, &m.Created, &started, &ended, &m.Private, &m.Invited)
		if err != nil {
			return pm, err
		}
		m.Status, res.Outcome, res.Played = store.Status(status), store.Outcome(result), time.Duration(played)*time.Microsecond
		if started != nil {
			m.Started = *started
		}
		if ended != nil {
			m.Ended = *ended
		}
		pm.Result = res
		if mu != nil {
			pm.Rating = &store.RatingChange{MatchID: m.ID, Ended: m.Ended, Place: res.Place, Seats: res.Seats,
				Before: store.Rating{Player: res.Player, Game: m.Game, Mu: *mu0, Sigma: *sigma0, Score: *score0, Matches: *matches0},
				After:  store.Rating{Player: res.Player, Game: m.Game, Mu: *mu, Sigma: *sigma, Score: *score, Matches: *matches0 + 1, Updated: m.Ended}}
		}
		return pm, nil
	})
	if err != nil {
		return nil, wrapErr("player matches", err)
	}
	return pms, nil
}

// statsSQL reads a player's statistics row and, in the same statement (one
// snapshot), the player's counters in the game, the place counters among
// them.
const statsSQL = `SELECT s.played, s.won, s.place_sum, s.forfeits, s.win_streak, s.longest_win_streak,
	s.played_us, s.last_ended_at, cs.counters
	FROM player_stats s
	CROSS JOIN LATERAL (` + countersSQL + `player_counters c
		WHERE c.player_id = s.player_id AND c.game = s.game AND c.value <> 0) cs
	WHERE s.player_id = $1 AND s.game = $2`

// PlayerStats implements store.History, on the read replica when there is
// one (replica.go).
func (s *Store) PlayerStats(ctx context.Context, player, game string) (store.PlayerStats, error) {
	return fromReplica(ctx, s, func(db querier) (store.PlayerStats, error) { return playerStats(ctx, db, player, game) })
}

func playerStats(ctx context.Context, db querier, player, game string) (store.PlayerStats, error) {
	st := store.PlayerStats{Player: player, Game: game}
	var played int64
	var counters store.Counters
	err := db.QueryRow(ctx, statsSQL, player, game).Scan(&st.Played, &st.Won,
		&st.PlaceSum, &st.Forfeits, &st.WinStreak, &st.LongestWinStreak, &played, &st.LastEnded, &counters)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.PlayerStats{Player: player, Game: game}, nil
	case err != nil:
		return st, wrapErr("player stats", err)
	}
	st.TimePlayed = time.Duration(played) * time.Microsecond
	st.Places, st.Counters = store.SplitPlaces(counters)
	return st, nil
}

// ratingHistorySQL walks rating_history's primary key backwards.
func ratingHistorySQL(q store.RatingQuery) (string, []any) {
	args := []any{q.Player, q.Game}
	sql := `SELECT match_id, ended_at, mu_before, sigma_before, score_before, matches_before,
		mu, sigma, score, place, seats FROM rating_history WHERE player_id = $1 AND game = $2`
	if q.After != nil {
		sql += ` AND (ended_at, match_id) < ($3, $4)`
		args = append(args, q.After.Ended, q.After.ID)
	}
	if q.Viewer != "" {
		// The filter is in the statement, before the LIMIT: a page is full
		// and its cursor is a row the viewer saw.
		args = append(args, q.Viewer)
		sql += ` AND EXISTS (SELECT 1 FROM matches m WHERE m.id = rating_history.match_id AND ` +
			visibleTo("m.", fmt.Sprintf("$%d", len(args))) + `)`
	}
	args = append(args, q.Limit)
	return sql + fmt.Sprintf(` ORDER BY ended_at DESC, match_id DESC LIMIT $%d`, len(args)), args
}

// RatingHistory implements store.History, on the read replica when there
// is one (replica.go).
func (s *Store) RatingHistory(ctx context.Context, q store.RatingQuery) ([]store.RatingChange, error) {
	return fromReplica(ctx, s, func(db querier) ([]store.RatingChange, error) { return ratingHistory(ctx, db, q) })
}

func ratingHistory(ctx context.Context, db querier, q store.RatingQuery) ([]store.RatingChange, error) {
	sql, args := ratingHistorySQL(q)
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrapErr("rating history", err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.RatingChange, error) {
		c := store.RatingChange{Before: store.Rating{Player: q.Player, Game: q.Game}, After: store.Rating{Player: q.Player, Game: q.Game}}
		err := r.Scan(&c.MatchID, &c.Ended, &c.Before.Mu, &c.Before.Sigma, &c.Before.Score, &c.Before.Matches,
			&c.After.Mu, &c.After.Sigma, &c.After.Score, &c.Place, &c.Seats)
		c.After.Matches, c.After.Updated = c.Before.Matches+1, c.Ended
		return c, err
	})
	if err != nil {
		return nil, wrapErr("rating history", err)
	}
	return cs, nil
}

// standingColumns are a leaderboard row; display_name comes from players.
const standingColumns = `r.player_id, r.mu, r.sigma, r.score, r.matches, r.updated_at, coalesce(p.display_name, '')`

// ratingsAbove counts game's ratings ordered after (score, player) in the
// leaderboard's order (cmp ">") or from it on (">="), all SQL expressions:
// the buckets above the score's bucket, plus the ratings of its own bucket
// from the leaderboard's index. A rank costs a few hundred bucket rows and
// one bucket's ratings, not every rating above it.
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
			WHERE r.game = $1 ORDER BY r.score DESC, r.player_id DESC LIMIT $2`, []any{q.Game, q.Limit}
	}
	return `SELECT ` + standingColumns + `, ` + ratingsAbove("$1", "$2::float8", "$3::text", ">=") + `
		FROM ratings r LEFT JOIN players p ON p.id = r.player_id
		WHERE r.game = $1 AND (r.score, r.player_id) < ($2, $3)
		ORDER BY r.score DESC, r.player_id DESC LIMIT $4`, []any{q.Game, q.After.Score, q.After.Player, q.Limit}
}

// standingSQL reads one player's rating and counts the entries above it.
var standingSQL = `SELECT ` + standingColumns + `, ` + ratingsAbove("r.game", "r.score", "r.player_id", ">") + `
	FROM ratings r LEFT JOIN players p ON p.id = r.player_id
	WHERE r.game = $1 AND r.player_id = $2`

func scanStanding(r pgx.Row, game string) (store.Standing, error) {
	st := store.Standing{Rating: store.Rating{Game: game}}
	err := r.Scan(&st.Player, &st.Mu, &st.Sigma, &st.Score, &st.Matches, &st.Updated, &st.DisplayName, &st.Rank)
	st.Rank++
	return st, err
}

// Leaderboard implements store.History, on the read replica when there is
// one (replica.go).
func (s *Store) Leaderboard(ctx context.Context, q store.LeaderboardQuery) ([]store.Standing, error) {
	return fromReplica(ctx, s, func(db querier) ([]store.Standing, error) { return leaderboard(ctx, db, q) })
}

func leaderboard(ctx context.Context, db querier, q store.LeaderboardQuery) ([]store.Standing, error) {
	sql, args := leaderboardSQL(q)
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrapErr("leaderboard", err)
	}
	sts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Standing, error) { return scanStanding(r, q.Game) })
	if err != nil {
		return nil, wrapErr("leaderboard", err)
	}
	for i := range sts {
		sts[i].Rank += i
	}
	return sts, nil
}

// Standing implements store.History, on the read replica when there is
// one (replica.go).
func (s *Store) Standing(ctx context.Context, game, player string) (store.Standing, error) {
	return fromReplica(ctx, s, func(db querier) (store.Standing, error) { return standing(ctx, db, game, player) })
}

func standing(ctx context.Context, db querier, game, player string) (store.Standing, error) {
	st, err := scanStanding(db.QueryRow(ctx, standingSQL, game, player), game)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Standing{}, store.ErrNotFound
	case err != nil:
		return store.Standing{}, wrapErr("standing", err)
	}
	return st, nil
}
