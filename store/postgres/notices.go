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
// lock: every transaction that writes notices first locks its players'
// heads, all at once, in player order (lockNoticeHeadsSQL), and only then
// any match row. A batch of appends (batch.go) locks the heads of all its
// appends' players in its first statement; a single append sends the lock
// and its statement in one round trip; one that ends a match or carries a
// quota locks them first in its transaction (after the quota's advisory
// lock). The full order of locks is thus: quota lock, notice heads, match
// rows, rating locks, statistics rows.

// lockNoticeHeadsSQL locks the notice heads of the players in $1 (making
// those missing, at 0), in player order. ON CONFLICT DO UPDATE locks every
// conflicting row even where its WHERE is false, which spares writing a
// new version of each row only to lock it.
const lockNoticeHeadsSQL = `
INSERT INTO notice_heads AS h (player_id, seq)
SELECT p, 0 FROM (SELECT DISTINCT p FROM unnest($1::text[]) AS p) AS l ORDER BY p
ON CONFLICT (player_id) DO UPDATE SET seq = h.seq WHERE false`

// noticeWrites insert an append's notices, numbered after their players'
// heads, only if the append applied (done): heads advances each player's
// head by its count of notices (h_counts), and a notice's seq is its
// player's new head less the player's notices after it in the append
// (n_back). The heads exist and are locked: lockNoticeHeadsSQL ran first
// in the transaction. outboxWrites queue the notices to deliver.
const noticeWrites = `, heads AS (
	UPDATE notice_heads AS h SET seq = h.seq + c.n
	FROM unnest(@h_players::text[], @h_counts::bigint[]) AS c(p, n)
	WHERE h.player_id = c.p AND EXISTS (SELECT 1 FROM done)
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
// the notices of all its appends, each naming its append by k, are written
// for the appends that applied (done) only. A player's notices are
// numbered in the statement's order of the appends, and in each append's
// order: nn numbers them per player (rn, of cnt), the heads advance by
// cnt, and a notice's seq is its player's new head less cnt plus its rn,
// so the applied appends' notices follow their heads without a gap, as
// they would statement after statement. The heads exist and are locked:
// lockNoticeHeadsSQL ran first in the transaction.
const manyNoticeWrites = `, nn AS (
	SELECT n.p, n.kind, n.m, n.pl, n.deliver, d.at,
		row_number() OVER (PARTITION BY n.p ORDER BY n.ord) AS rn,
		count(*) OVER (PARTITION BY n.p) AS cnt
	FROM unnest(@notice_k::bigint[], @notice_players::text[], @notice_kinds::text[],
		@notice_matches::text[], @notice_payloads::bytea[], @notice_deliver::bool[])
		WITH ORDINALITY AS n(k, p, kind, m, pl, deliver, ord)
	JOIN done AS d ON d.k = n.k
), heads AS (
	UPDATE notice_heads AS h SET seq = h.seq + c.n
	FROM (SELECT p, count(*) AS n FROM nn GROUP BY p) AS c
	WHERE h.player_id = c.p
	RETURNING h.player_id, h.seq
), notes AS (
	INSERT INTO player_notices (player_id, seq, kind, match_id, payload, created_at)
	SELECT nn.p, heads.seq - nn.cnt + nn.rn, nn.kind, nn.m, nn.pl, nn.at
	FROM nn JOIN heads ON heads.player_id = nn.p
), outbox AS (
	INSERT INTO notice_outbox (player_id, seq, due_at)
	SELECT nn.p, heads.seq - nn.cnt + nn.rn, nn.at
	FROM nn JOIN heads ON heads.player_id = nn.p
	WHERE nn.deliver
)`

// manyNotices gathers the notices of appendManySQL's appends as its
// arguments.
type manyNotices struct {
	k                       []int64
	players, kinds, matches []string
	payloads                [][]byte
	deliver                 []bool
}

// add adds the notices of the statement's append k.
func (ns *manyNotices) add(k int64, notices []store.Notice) {
	for _, n := range notices {
		p := n.Payload
		if p == nil {
			p = []byte{}
		}
		ns.k, ns.players, ns.kinds, ns.matches = append(ns.k, k), append(ns.players, n.Player), append(ns.kinds, n.Kind), append(ns.matches, n.Match)
		ns.payloads, ns.deliver = append(ns.payloads, p), append(ns.deliver, n.Deliver)
	}
}

// args adds the notices to the statement's named arguments.
func (ns *manyNotices) args(named map[string]any) {
	named["notice_k"], named["notice_players"], named["notice_kinds"] = nonNil(ns.k), nonNil(ns.players), nonNil(ns.kinds)
	named["notice_matches"], named["notice_payloads"], named["notice_deliver"] = nonNil(ns.matches), nonNil(ns.payloads), nonNil(ns.deliver)
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
	payloads, back := make([][]byte, n), make([]int64, n)
	var hPlayers, oPlayers []string
	var hCounts, oBack []int64
	count := map[string]int64{}
	for i := n - 1; i >= 0; i-- { // from the last: back counts the player's later notices
		nt := a.Notices[i]
		players[i], kinds[i], matches[i], payloads[i] = nt.Player, nt.Kind, nt.Match, nt.Payload
		if payloads[i] == nil {
			payloads[i] = []byte{}
		}
		back[i] = count[nt.Player]
		if count[nt.Player] == 0 {
			hPlayers = append(hPlayers, nt.Player)
		}
		count[nt.Player]++
		if nt.Deliver {
			oPlayers, oBack = append(oPlayers, nt.Player), append(oBack, back[i])
		}
	}
	for _, p := range hPlayers {
		hCounts = append(hCounts, count[p])
	}
	named["h_players"], named["h_counts"] = hPlayers, hCounts
	named["n_players"], named["n_back"], named["n_kinds"], named["n_matches"], named["n_payloads"] = players, back, kinds, matches, payloads
	switch {
	case len(oPlayers) > 0:
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

// noticePlayers lists the players of a's notices (repeats included).
func noticePlayers(a store.Append) []string {
	ps := make([]string, len(a.Notices))
	for i, n := range a.Notices {
		ps[i] = n.Player
	}
	return ps
}

// queryAppend runs an append's statement q and returns how many appends
// it applied (1 or 0). With notices the heads' lock goes first, in the same
// round trip and implicit transaction.
func (s *Store) queryAppend(ctx context.Context, a store.Append, q string, args []any) (int, error) {
	var applied int
	if len(a.Notices) == 0 {
		err := s.pool.QueryRow(ctx, q, args...).Scan(&applied)
		return applied, err
	}
	b := &pgx.Batch{}
	b.Queue(lockNoticeHeadsSQL, noticePlayers(a))
	b.Queue(q, args...)
	br := s.pool.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&applied)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return applied, err
}

// lockNoticeHeads locks the notice heads of a's players in tx, before the
// append statement.
func lockNoticeHeads(ctx context.Context, tx pgx.Tx, a store.Append) error {
	if len(a.Notices) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, lockNoticeHeadsSQL, noticePlayers(a))
	return err
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
