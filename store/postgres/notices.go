package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var (
	_ store.Notices = (*Store)(nil)
	_ store.Outbox  = (*Store)(nil)
)

// Notices (store.Append.Notices) are numbered per player from the
// player's row in notice_heads. The append statement inserts them after
// its guard, advancing each player's head by its count: appends writing
// one player's notices serialise on that row, so a player's notices commit
// in seq order, and a reader that has read seq n never finds a new notice
// below n later.
//
// Those row locks must not form cycles with the match rows the appends
// lock: every statement that writes notices locks its players' heads only
// after its match rows, and all of them at once, in player order. The
// heads are advanced (made, if missing) by one INSERT … ON CONFLICT DO
// UPDATE whose rows come sorted by player, so it locks them in that order;
// its rows follow from done (the appends that applied), which has run to
// its end, and so locked every match row of the statement, before the
// first of them comes out. After a statement with notices, a transaction
// locks no match row it does not hold already (a batch's later statements
// write rows its run locked, or create theirs: batch.go's plan), and every
// transaction's full order of locks is thus: quota lock, match rows,
// notice heads, rating locks, statistics rows. (Until the fifteenth round
// of BENCHMARKS.md a statement of its own locked the heads first, ahead of
// the match rows: it cost a batch 5 to 10% of its backend CPU.)

// noticeWrites insert an append's notices, numbered after their players'
// heads, only if the append applied (done): heads advances each player's
// head by its count of notices (h_counts; h_players lists each player
// once, so the upsert meets no row twice), making those missing, and
// a notice's seq is its player's new head less the player's notices after
// it in the append (n_back). outboxWrites queue the notices to deliver.
const noticeWrites = `, heads AS (
	INSERT INTO notice_heads AS h (player_id, seq)
	SELECT c.p, c.n FROM unnest(@h_players::text[], @h_counts::bigint[]) AS c(p, n)
	WHERE EXISTS (SELECT 1 FROM done)
	ORDER BY c.p
	ON CONFLICT (player_id) DO UPDATE SET seq = h.seq + excluded.seq
	RETURNING h.player_id, h.seq
), notes AS (
	INSERT INTO player_notices (player_id, seq, kind, match_id, payload, created_at)
	SELECT n.p, heads.seq - n.back, n.k, n.m, n.pl, @time
	FROM unnest(@n_players::text[], @n_back::bigint[], @n_kinds::text[], @n_matches::text[], @n_payloads::bytea[])
		AS n(p, back, k, m, pl)
	JOIN heads ON heads.player_id = n.p
)`

const outboxWrites = `, outbox AS (
	INSERT INTO notice_outbox (player_id, seq, due_at)
	SELECT o.p, heads.seq - o.back, @time
	FROM unnest(@o_players::text[], @o_back::bigint[]) AS o(p, back)
	JOIN heads ON heads.player_id = o.p
)`

// manyNoticeWrites are noticeWrites and outboxWrites for appendManySQL:
// the notices of all its appends, numbered by the node (manyNotices) as
// if every append that carries notices applied: a player's notices in
// the statement's order of the appends, and in each append's order, a
// notice's seq its player's new head less the player's notices after it
// in the statement (notice_back), as statement after statement would
// number them. heads advances (or makes) the heads in player order, as
// noticeWrites does, after done has locked the match rows: its rows'
// values count the appends that applied, a subquery run once, before the
// first row, which reads done to its end. Should an append
// with notices not apply (a stale version, a retried command: rare, since
// the node checks both first), the numbering would leave a gap: heads then
// writes a NULL head, which the column refuses, and the batch rolls back
// and commits each append alone (AppendBatch), whose statement numbers its
// own notices. The node numbering them spares the statement the window
// functions, sorts and joins that numbered them in SQL (BENCHMARKS.md,
// fifteenth round).
const manyNoticeWrites = `, heads AS (
	INSERT INTO notice_heads AS h (player_id, seq)
	SELECT c.p, CASE WHEN (SELECT count(*) FROM done WHERE done.k = ANY(@notified_k::bigint[]))
		= cardinality(@notified_k::bigint[]) THEN c.n END
	FROM unnest(@h_players::text[], @h_counts::bigint[]) AS c(p, n)
	ORDER BY c.p
	ON CONFLICT (player_id) DO UPDATE SET seq = h.seq + excluded.seq
	RETURNING h.player_id, h.seq
), notes AS (
	INSERT INTO player_notices (player_id, seq, kind, match_id, payload, created_at)
	SELECT n.p, heads.seq - n.back, n.kind, n.m, n.pl, n.at
	FROM unnest(@notice_players::text[], @notice_back::bigint[], @notice_kinds::text[],
		@notice_matches::text[], @notice_payloads::bytea[], @notice_times::timestamptz[])
		AS n(p, back, kind, m, pl, at)
	JOIN heads ON heads.player_id = n.p
), outbox AS (
	INSERT INTO notice_outbox (player_id, seq, due_at)
	SELECT o.p, heads.seq - o.back, o.at
	FROM unnest(@o_players::text[], @o_back::bigint[], @o_times::timestamptz[]) AS o(p, back, at)
	JOIN heads ON heads.player_id = o.p
)`

// manyNotices gathers the notices of appendManySQL's appends as its
// arguments.
type manyNotices struct {
	notified                []int64 // the k of each append with notices
	players, kinds, matches []string
	payloads                [][]byte
	deliver                 []bool
	times                   []time.Time
}

// add adds the notices of a, the statement's append k.
func (ns *manyNotices) add(k int64, a store.Append) {
	if len(a.Notices) > 0 {
		ns.notified = append(ns.notified, k)
	}
	for _, n := range a.Notices {
		p := n.Payload
		if p == nil {
			p = []byte{}
		}
		ns.players, ns.kinds, ns.matches = append(ns.players, n.Player), append(ns.kinds, n.Kind), append(ns.matches, n.Match)
		ns.payloads, ns.deliver, ns.times = append(ns.payloads, p), append(ns.deliver, n.Deliver), append(ns.times, a.Time)
	}
}

// args numbers the notices (numberNotices) and adds them to the
// statement's named arguments, those to deliver (o_) too.
func (ns *manyNotices) args(named map[string]any) {
	nb := numberNotices(ns.players, ns.deliver)
	op, ob, ot := make([]string, len(nb.delivered)), make([]int64, len(nb.delivered)), make([]time.Time, len(nb.delivered))
	for j, i := range nb.delivered {
		op[j], ob[j], ot[j] = ns.players[i], nb.back[i], ns.times[i]
	}
	named["h_players"], named["h_counts"], named["notified_k"] = nb.heads, nb.counts, nonNil(ns.notified)
	named["notice_players"], named["notice_back"], named["notice_kinds"] = nonNil(ns.players), nb.back, nonNil(ns.kinds)
	named["notice_matches"], named["notice_payloads"], named["notice_times"] = nonNil(ns.matches), nonNil(ns.payloads), nonNil(ns.times)
	named["o_players"], named["o_back"], named["o_times"] = op, ob, ot
}

// numbering numbers notices after their players' heads: a notice's seq is
// its player's new head less back, its count of the player's notices after
// it; heads lists each player once, counts its count of notices, and
// delivered the notices to deliver.
type numbering struct {
	back      []int64
	heads     []string
	counts    []int64
	delivered []int
}

// numberNotices numbers the notices of players (deliver[i]: notice i is to
// be delivered).
func numberNotices(players []string, deliver []bool) numbering {
	nb := numbering{back: make([]int64, len(players)), heads: []string{}, counts: []int64{}}
	count := map[string]int64{}
	for i := len(players) - 1; i >= 0; i-- { // from the last: back counts the player's later notices
		p := players[i]
		nb.back[i] = count[p]
		if count[p] == 0 {
			nb.heads = append(nb.heads, p)
		}
		count[p]++
		if deliver[i] {
			nb.delivered = append(nb.delivered, i)
		}
	}
	for _, p := range nb.heads {
		nb.counts = append(nb.counts, count[p])
	}
	return nb
}

// The append and create statements that also write notices, without and
// with outbox rows.
var (
	appendNoticesQ = positional(appendSQLHead() + appendWrites + noticeWrites + appendResult)
	createNoticesQ = positional(createSQLHead() + appendWrites + noticeWrites + appendResult)
	appendOutboxQ  = positional(appendSQLHead() + appendWrites + noticeWrites + outboxWrites + appendResult)
	createOutboxQ  = positional(createSQLHead() + appendWrites + noticeWrites + outboxWrites + appendResult)
)

// appendSQLHead and createSQLHead are the done CTEs of appendSQL and
// createSQL.
func appendSQLHead() string { return appendSQL[:len(appendSQL)-len(appendTail)] }
func createSQLHead() string { return createSQL[:len(createSQL)-len(appendTail)] }

// noticeArgs adds a's notices to the named arguments of its statement and
// returns the statement that writes them.
func noticeArgs(a store.Append, named map[string]any) numbered {
	n := len(a.Notices)
	players, kinds, matches := make([]string, n), make([]string, n), make([]string, n)
	payloads, deliver := make([][]byte, n), make([]bool, n)
	for i, nt := range a.Notices {
		players[i], kinds[i], matches[i], payloads[i], deliver[i] = nt.Player, nt.Kind, nt.Match, nt.Payload, nt.Deliver
		if payloads[i] == nil {
			payloads[i] = []byte{}
		}
	}
	nb := numberNotices(players, deliver)
	named["h_players"], named["h_counts"] = nb.heads, nb.counts
	named["n_players"], named["n_back"], named["n_kinds"], named["n_matches"], named["n_payloads"] = players, nb.back, kinds, matches, payloads
	switch {
	case len(nb.delivered) > 0:
		oPlayers, oBack := make([]string, len(nb.delivered)), make([]int64, len(nb.delivered))
		for j, i := range nb.delivered {
			oPlayers[j], oBack[j] = players[i], nb.back[i]
		}
		named["o_players"], named["o_back"] = oPlayers, oBack
		if a.Expected == 0 {
			return createOutboxQ
		}
		return appendOutboxQ
	case a.Expected == 0:
		return createNoticesQ
	}
	return appendNoticesQ
}

// Notices implements store.Notices.
func (s *Store) Notices(ctx context.Context, player string, after int64, limit int) ([]store.Notice, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT seq, kind, match_id, payload, created_at FROM player_notices
		WHERE player_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, player, after, min(limit, store.NoticePage))
	if err != nil {
		return nil, wrapErr("notices", err)
	}
	ns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Notice, error) {
		n := store.Notice{Player: player}
		err := r.Scan(&n.Seq, &n.Kind, &n.Match, &n.Payload, &n.Time)
		return n, err
	})
	if err != nil {
		return nil, wrapErr("notices", err)
	}
	return ns, nil
}

// LatestNotice implements store.Notices.
func (s *Store) LatestNotice(ctx context.Context, player string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM notice_heads WHERE player_id = $1`, player).Scan(&seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, wrapErr("latest notice", err)
	}
	return seq, nil
}

// ClaimDeliveries implements store.Outbox. SKIP LOCKED lets the nodes
// sharing the outbox claim disjoint rows without waiting on each other.
func (s *Store) ClaimDeliveries(ctx context.Context, now, lease time.Time, limit int) ([]store.Delivery, error) {
	rows, err := s.pool.Query(ctx, `
		WITH c AS (
			UPDATE notice_outbox o SET due_at = $2, attempts = o.attempts + 1
			FROM (SELECT player_id, seq FROM notice_outbox WHERE due_at <= $1
			      ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS d
			WHERE o.player_id = d.player_id AND o.seq = d.seq
			RETURNING o.player_id, o.seq, o.attempts
		)
		SELECT c.player_id, c.seq, c.attempts, n.kind, n.match_id, n.payload, n.created_at
		FROM c JOIN player_notices n ON n.player_id = c.player_id AND n.seq = c.seq
		ORDER BY n.created_at, c.player_id, c.seq`, now, lease, limit)
	if err != nil {
		return nil, wrapErr("claim deliveries", err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Delivery, error) {
		var d store.Delivery
		n := &d.Notice
		err := r.Scan(&n.Player, &n.Seq, &d.Attempts, &n.Kind, &n.Match, &n.Payload, &n.Time)
		return d, err
	})
	if err != nil {
		return nil, wrapErr("claim deliveries", err)
	}
	return ds, nil
}

// Delivered implements store.Outbox.
func (s *Store) Delivered(ctx context.Context, keys []store.NoticeKey) error {
	if len(keys) == 0 {
		return nil
	}
	players, seqs := make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		players[i], seqs[i] = k.Player, k.Seq
	}
	_, err := s.pool.Exec(ctx, `
		DELETE FROM notice_outbox o USING unnest($1::text[], $2::bigint[]) AS k(p, s)
		WHERE o.player_id = k.p AND o.seq = k.s`, players, seqs)
	if err != nil {
		return wrapErr("delivered", err)
	}
	return nil
}

// RetryDelivery implements store.Outbox.
func (s *Store) RetryDelivery(ctx context.Context, key store.NoticeKey, due time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE notice_outbox SET due_at = $3 WHERE player_id = $1 AND seq = $2`,
		key.Player, key.Seq, due)
	if err != nil {
		return wrapErr("retry delivery", err)
	}
	return nil
}
