package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

// AppendBatch implements store.Batcher. The batch goes to the server as one
// pipeline of statements: one round trip and one implicit transaction, so
// one commit (sendMany for the common batch, sendBatch for the others).
// Most of its appends share one statement (appendManySQL, or
// appendManySmallSQL for a small batch): the executor's start, the planning
// and the per-statement work of the server are paid once per batch rather
// than once per append, and the statement runs each append's guard as a
// single append's statement does. The others (a create, the second append
// of a match) keep a statement each, in the same batch (plan), unless the
// batch writes notices: a statement with notices advances the notice heads
// it needs after its match rows (notices.go), and after it the transaction
// must lock no other, so such a batch of several statements commits each in
// a transaction of its own, those of different matches at once
// (commitApart), unless only its first statement has notices and the
// others create their matches or append to the first's (noticesFirst).
// An append whose guard fails (a stale version, a retried command) changes
// nothing and does not disturb the others; it is explained after the
// commit, as a single append is. A statement that fails outright
// (a lost race on a unique key with another node, a value the server
// rejects) rolls the whole batch back, and then each append is committed
// alone, so that only the failing one fails. An append that ends a match
// commits alone (it updates the players' ratings, whose row locks must not
// join a batch), and so does one with a quota (its count must follow its
// advisory lock, in a transaction of its own: quota.go). They commit one
// after the other, before the rest of the batch, whose creates a quota must
// not count. A batch without quotas commits its ends on a connection of
// their own while the rest of the batch commits, as another node's appends
// would: an end is a transaction of several round trips, and the batch's
// other matches do not wait for it (BENCHMARKS.md, twenty-first round),
// unless the batch holds another append of an ending match. A batch of one
// append goes as a single append's statement: that costs Postgres about a
// quarter less than the batch statement and its settings (BENCHMARKS.md,
// nineteenth round).
//
// The statements lock match rows in match id order (appends of one match
// keep their order), so that batches committing at once, on any node,
// take their locks in the same order and never deadlock.
func (s *Store) AppendBatch(ctx context.Context, as []store.Append) []store.BatchResult {
	rs := make([]store.BatchResult, len(as))
	order := make([]int, len(as))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(as[i].Match.ID, as[j].Match.ID) })
	var queued, alone []int
	for _, i := range order {
		if as[i].End != nil || as[i].Quota != nil {
			alone = append(alone, i)
			continue
		}
		if err := check(as[i]); err != nil {
			rs[i].Err = err
			continue
		}
		queued = append(queued, i)
	}
	commitAlone := func() {
		for _, i := range alone {
			rs[i].Result, rs[i].Err = s.appendOne(ctx, as[i])
		}
	}
	switch {
	case len(alone) == 0:
	case len(queued) == 0 || sharesMatch(as, alone, queued) ||
		slices.ContainsFunc(alone, func(i int) bool { return as[i].Quota != nil }):
		commitAlone()
	default:
		var wg sync.WaitGroup
		wg.Go(commitAlone)
		defer wg.Wait()
	}
	switch {
	case len(queued) == 0:
		return rs
	case len(queued) == 1:
		i := queued[0]
		rs[i].Result, rs[i].Err = s.appendOne(ctx, as[i])
		return rs
	}
	steps := plan(as, queued)
	if len(steps) > 1 && slices.ContainsFunc(queued, func(i int) bool { return len(as[i].Notices) > 0 }) &&
		!noticesFirst(as, steps) {
		// A transaction advances notice heads in one statement only,
		// after all its match rows (notices.go): a batch of several
		// statements with notices commits a transaction a statement.
		s.commitApart(ctx, as, steps, rs)
		return rs
	}
	s.commitSteps(ctx, as, steps, rs)
	return rs
}

// commitApart commits each of steps in a transaction of its own. Steps
// that write different matches commit at once, each on a connection of
// its own, as the batches of several nodes do: a batch that a create
// splits in three takes about one commit's time rather than three. A step
// that writes a match an earlier step writes (a match's second append)
// commits after that one, so a match's appends keep their order.
//
// Committing at once is safe as the nodes' batches are: each transaction
// is one statement that locks its match rows (disjoint from the others'
// here) in id order, then its notice heads in player order (notices.go).
func (s *Store) commitApart(ctx context.Context, as []store.Append, steps []step, rs []store.BatchResult) {
	waves := stepWaves(as, steps)
	for w := 0; w <= slices.Max(waves); w++ {
		var wg sync.WaitGroup
		for j, st := range steps {
			if waves[j] == w {
				wg.Go(func() { s.commitSteps(ctx, as, []step{st}, rs) })
			}
		}
		wg.Wait()
	}
}

// noticesFirst reports whether steps, whose appends carry notices, may
// still commit as one transaction: the first statement, of several
// appends, is the only one with notices, and each statement after it
// creates its match or appends to a match of the first, so that it locks
// no match row the first has not locked (a new row is no other writer's)
// and no notice head (notices.go). A batch of moves and the creates of
// the next matches is such a batch: committed apart, each create was a
// transaction, a commit and a WAL flush of its own, which cost Postgres
// more than the statement (BENCHMARKS.md, twenty-seventh round).
func noticesFirst(as []store.Append, steps []step) bool {
	if !steps[0].many {
		return false
	}
	first := make(map[string]bool, len(steps[0].appends))
	for _, i := range steps[0].appends {
		first[as[i].Match.ID] = true
	}
	for _, st := range steps[1:] {
		if st.many {
			return false
		}
		for _, i := range st.appends {
			if a := as[i]; len(a.Notices) > 0 || (a.Expected != 0 && !first[a.Match.ID]) {
				return false
			}
		}
	}
	return true
}

// stepWaves numbers steps' waves: a step's is 0, or one more than the
// wave of the last earlier step that writes one of its matches.
func stepWaves(as []store.Append, steps []step) []int {
	waves := make([]int, len(steps))
	after := map[string]int{} // a match's next free wave
	for j, st := range steps {
		for _, i := range st.appends {
			waves[j] = max(waves[j], after[as[i].Match.ID])
		}
		for _, i := range st.appends {
			after[as[i].Match.ID] = waves[j] + 1
		}
	}
	return waves
}

// commitSteps commits steps in one transaction and fills in the results
// of their appends.
func (s *Store) commitSteps(ctx context.Context, as []store.Append, steps []step, rs []store.BatchResult) {
	var queued []int
	for _, st := range steps {
		queued = append(queued, st.appends...)
	}
	applied := make([]bool, len(as))
	var err error
	if slices.ContainsFunc(steps, func(st step) bool { return !st.many }) {
		err = s.sendBatch(ctx, steps, applied)
	} else {
		err = s.sendMany(ctx, steps, applied)
	}
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
	case errors.As(err, &pgErr):
		// The server refused a statement and rolled the batch back.
		for _, i := range queued {
			rs[i].Result, rs[i].Err = s.appendOne(ctx, as[i])
		}
		return
	default:
		// The batch failed as a whole (the connection, the context):
		// as for a single append, the caller cannot know whether the
		// commit happened; a retry with the same request id finds out.
		for _, i := range queued {
			rs[i].Err = wrapErr("append", err)
		}
		return
	}
	for _, i := range queued {
		if applied[i] {
			rs[i].Result = store.Result{First: as[i].Expected + 1, Last: as[i].Match.Version}
		} else {
			rs[i].Result, rs[i].Err = s.explain(ctx, as[i])
		}
	}
}

var _ store.Batcher = (*Store)(nil)

// sharesMatch reports whether an append of alone (indexes of as) writes a
// match an append of queued writes.
func sharesMatch(as []store.Append, alone, queued []int) bool {
	ids := make(map[string]bool, len(alone))
	for _, i := range alone {
		ids[as[i].Match.ID] = true
	}
	return slices.ContainsFunc(queued, func(i int) bool { return ids[as[i].Match.ID] })
}

// sendBatch commits steps as one pgx batch, marking the appends applied.
func (s *Store) sendBatch(ctx context.Context, steps []step, applied []bool) error {
	b := &pgx.Batch{}
	for _, st := range steps {
		b.Queue(st.sql, st.args...)
	}
	c, give, err := s.held.take(ctx)
	if err != nil {
		return err
	}
	defer give()
	br := c.SendBatch(ctx, b)
	for _, st := range steps {
		if err != nil {
			break
		}
		err = st.read(br, applied)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// Names of the batch statements as prepared on each connection.
const (
	planName            = "hangar_batch_plan"
	genericName         = "hangar_batch_generic"
	appendManySmallName = "hangar_append_many_small" // appendManySmallSQL, after planSQL
	appendManyBigName   = "hangar_append_many_big"   // appendManySQL, as Postgres plans it
)

// planSQL opens a small batch that sendMany sends (at most smallBatch
// appends, the batches of up to a few dozen matches at once): it steers
// the planning of appendManySmallSQL, for this transaction only, to the
// plan for short lists: the lists joined in nested loops, the appends'
// list outermost, so walked in its order, each match row found through the
// primary key. Left to itself, Postgres plans the prepared statement once
// for lists of any length and, while the matches table is small (a new
// database, a benchmark's), keeps a plan that scans the whole table and
// hashes the lists: a scan of every match, and hash tables built and
// freed, per batch. That cost about 15% of the backend's CPU per command
// at 32 matches (BENCHMARKS.md). Under these settings no plan reads the
// matches in another order than the appends' or the key's (no sequential
// or bitmap scan, no hash or merge join), which appendManySmallSQL's
// locking relies on. A join in nested loops grows with the square of its
// lists, though, so a large batch goes as Postgres plans it
// (appendManySQL, which locks its rows in order whatever the plan), under
// a statement of its own name: a prepared statement keeps the plan made
// under the settings of its first executions.
//
// Both also keep the statement to its generic plan (genericSQL). Left to
// choose, Postgres plans a prepared statement anew for each execution
// (a custom plan) whenever the generic plan's estimate comes out dearer
// than the custom plans', as it does for the append statements once the
// tables hold about a million events: planning them then costs more than
// running them (a lone append took 0.92 ms at 1M events against 0.47 ms at
// 100,000, 13 relation size probes an append; BENCHMARKS.md, nineteenth
// round). The generic plan depends on no argument's value: the statement
// reads every row by its key.
const planSQL = `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
	set_config('enable_mergejoin', 'off', true), set_config('enable_bitmapscan', 'off', true),
	set_config('plan_cache_mode', 'force_generic_plan', true)`

// genericSQL opens a large batch: appendManySQL as Postgres plans it, but
// planned once (planSQL).
const genericSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// smallBatch is the most appends a batch planned by planSQL holds. With
// tables of a server's size (BenchmarkAppendBatch with FILL=100000) the
// nested loops cost the backend 9 to 17% less CPU per append than
// Postgres's own plan from 20 appends to 64, a notice on every other
// append as in play, and on a new database's small tables 1 to 6% less.
// At 128 appends they cost the same, and 12% more when every append
// carries a notice: the notices' join to their heads grows with the
// square of the batch (BENCHMARKS.md, twenty-first round).
var smallBatch = 64

// sendMany is sendBatch for steps that are all appendManySQL, the common
// batch, sent the same way (one round trip, one implicit transaction;
// a small batch as appendManySmallSQL, after planSQL, a large one after
// genericSQL)
// through pgconn with the arguments written by wire: a batch then
// allocates a fraction of what pgx's encoding allocates (wire.go). The
// statements are prepared once per connection. A tracer in Options sees
// them as it sees a pgx batch.
func (s *Store) sendMany(ctx context.Context, steps []step, applied []bool) error {
	c, give, err := s.held.take(ctx)
	if err != nil {
		return err
	}
	defer give()
	conn := c.Conn()
	n := 0
	for _, st := range steps {
		n += len(st.appends)
	}
	setName, setQ := genericName, genericSQL
	name, q := appendManyBigName, appendManyQ.sql
	if n <= smallBatch {
		setName, setQ = planName, planSQL
		name, q = appendManySmallName, appendManySmallQ.sql
	}
	planned, err := conn.Prepare(ctx, setName, setQ)
	if err != nil {
		return err
	}
	many, err := conn.Prepare(ctx, name, q)
	if err != nil {
		return err
	}
	w := wires.Get().(*wire)
	defer wires.Put(w)
	// sent is the statements in the batch's order: the plan's settings,
	// then steps.
	type sentStmt struct {
		sd   *pgconn.StatementDescription
		sql  string
		args []any
		st   *step // nil: not an append
	}
	sent := make([]sentStmt, 0, len(steps)+1)
	sent = append(sent, sentStmt{sd: planned, sql: setQ})
	for i := range steps {
		sent = append(sent, sentStmt{sd: many, sql: q, args: steps[i].args, st: &steps[i]})
	}
	var b pgconn.Batch
	for _, q := range sent {
		sd := q.sd
		vals, err := w.encode(sd.ParamOIDs, q.args)
		if err != nil {
			return err
		}
		b.ExecStatement(sd, vals, binaryFormats(len(vals)), binaryFormats(len(sd.Fields)))
	}
	bt, _ := s.tracer.(pgx.BatchTracer)
	if bt != nil {
		ctx = bt.TraceBatchStart(ctx, conn, pgx.TraceBatchStartData{})
	}
	mr := conn.PgConn().ExecBatch(ctx, &b)
	var first error
	for j := 0; mr.NextResult(); j++ {
		r := mr.ResultReader()
		for r.NextRow() {
			v := r.Values()
			if j >= len(sent) || sent[j].st == nil || len(v) != 1 || len(v[0]) != 8 {
				continue
			}
			st := sent[j].st
			if k := int64(binary.BigEndian.Uint64(v[0])); k >= 1 && k <= int64(len(st.appends)) {
				applied[st.appends[k-1]] = true
			}
		}
		tag, err := r.Close()
		if bt != nil && j < len(sent) {
			bt.TraceBatchQuery(ctx, conn, pgx.TraceBatchQueryData{SQL: sent[j].sql, Args: sent[j].args, CommandTag: tag, Err: err})
		}
		if first == nil {
			first = err
		}
	}
	if err := mr.Close(); first == nil {
		first = err
	}
	if bt != nil {
		bt.TraceBatchEnd(ctx, conn, pgx.TraceBatchEndData{Err: first})
	}
	if stalePrepared(first) {
		// The connection's statements are gone (DISCARD ALL, say) or no
		// longer match the schema (a migration while serving): the pool
		// replaces the connection, and the next batch prepares them anew.
		// This one's appends are then committed alone (AppendBatch).
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(closeCtx)
		cancel()
	}
	return first
}

// stalePrepared reports whether err is the server refusing a prepared
// statement of the connection: it does not exist, or its plan no longer
// fits the tables.
func stalePrepared(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == noSuchPrepared || pgErr.Code == featureNotSupported)
}

// binaryFormats is n binary format codes.
func binaryFormats(n int) []int16 {
	if n <= len(allBinary) {
		return allBinary[:n]
	}
	return binaryCodes(n)
}

// allBinary is enough binary format codes for the batch statements'
// parameters and results.
var allBinary = binaryCodes(64)

func binaryCodes(n int) []int16 {
	f := make([]int16, n)
	for i := range f {
		f[i] = pgx.BinaryFormatCode
	}
	return f
}

// step is one statement of a batch: appendManySQL for a run of appends,
// or the statement of one (a create, a match's later append).
type step struct {
	appends []int // indexes of the batch's appends, in the statement's order
	sql     string
	args    []any
	many    bool // appendManySQL, even for one append
}

// read reads st's result from br, marking the appends it applied.
func (st step) read(br pgx.BatchResults, applied []bool) error {
	if !st.many {
		var n int
		err := br.QueryRow().Scan(&n)
		applied[st.appends[0]] = n == 1
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	ks, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	for _, k := range ks {
		applied[st.appends[k-1]] = true
	}
	return err
}

// plan lays out the queued appends (indexes of as in match id order,
// appends of one match in their batch order) as the batch's statements.
// Walking the matches in id order, the first append of each match joins a
// run of appends that appendManySQL writes together, locking their rows in
// id order, unless it creates the match. A create followed by more appends
// of its match, and the appends of a match after its first, take a
// statement each, in order, and end the run before them: the next run
// starts after them. So the batch as a whole takes its match rows' locks
// in id order, as a statement per append in id order would: the appends of
// a match after its first write to a row the batch holds already (or
// created), or, when that row did not exist yet when the run locked its
// rows, lock it while holding only rows of lower ids, since the run ended
// with that match. A create that is its match's only append locks no row
// another writer holds (its match's row is new), so it does not end the
// run: it takes a statement after the last one, and the run goes on.
//
// In the common batch (each match once, none created) that is one
// statement in all; with a new match besides, two.
func plan(as []store.Append, queued []int) []step {
	var (
		steps []step
		run   []int
	)
	one := func(i int) {
		q, args := statementOf(as[i])
		steps = append(steps, step{appends: []int{i}, sql: q, args: args})
	}
	flush := func() {
		if len(run) > 0 {
			steps = append(steps, step{appends: run, sql: appendManyQ.sql, args: appendManyArgs(as, run), many: true})
		}
		run = nil
	}
	var creates []int // creates of matches with no other append here
	for j := 0; j < len(queued); {
		k := j + 1
		for k < len(queued) && as[queued[k]].Match.ID == as[queued[j]].Match.ID {
			k++
		}
		alone := queued[j+1 : k] // the match's appends after its first
		switch {
		case as[queued[j]].Expected == 0 && k == j+1:
			creates = append(creates, queued[j])
		case as[queued[j]].Expected == 0:
			alone = queued[j:k]
		default:
			run = append(run, queued[j])
		}
		if len(alone) > 0 {
			flush()
			for _, i := range alone {
				one(i)
			}
		}
		j = k
	}
	flush()
	for _, i := range creates {
		one(i)
	}
	return steps
}

// appendManySQL is the guarded statement of many appends, each to a
// different existing match: the columns of appendSQL's parameters become
// arrays of one element per append (u, k numbering them from 1), and the
// notices arrays of rows naming their append by k. Array columns (the
// players, the invited, the events' types and payloads, which an append
// writes as one row of match_event_runs) cannot be elements of an array
// of their own length, so each append's is a slice of one array of them
// all, from its index to its index (an empty slice, [n+1:n], is an empty
// array).
//
// locked locks the rows of the appends' matches in id order: a SELECT's
// locking clause applies after its ORDER BY (the plan's LockRows sits on
// the sorted rows, or on a scan of matches_pkey in id order: plan_test.go),
// so it locks rows in the order it returns them. The update joins it, so
// that it can only reach a row that locked has returned, hence locked
// already: whatever plan the server chooses for the join, the statement
// takes its row locks in id order. (The row of an append that turns out
// stale or retried stays locked to the commit, where a single append's
// statement would not lock it: a writer of that match may wait a little
// longer, never in a cycle.) Each row is then guarded exactly as appendSQL
// guards it (the version, the command's request id) and returns its
// append's k when it applied; events, commands and notices are written for
// those only. It returns the k of each append that applied.
var appendManySQL = appendMany(true)

// appendManySmallSQL is appendManySQL without locked, for a small batch,
// which sendMany sends after planSQL: under its settings the update is a
// nested loop that walks the appends in their order (match id order: plan
// sorts them) and reaches each match row by its key (plan_test.go pins
// it), so the update itself takes the row locks in id order. Locking the
// rows first, then updating them, writes each row twice, and the lock's
// record in the WAL: the update alone costs the backend about a tenth
// less CPU per append (BenchmarkAppendBatch; BENCHMARKS.md, tenth round).
var appendManySmallSQL = appendMany(false)

// appendManyQ and appendManySmallQ are the two with numbered parameters,
// the same numbers in both (TestAppendManyParameters): appendManyArgs lays
// out the arguments of either.
var appendManyQ, appendManySmallQ = positional(appendManySQL), positional(appendManySmallSQL)

// appendMany is appendManySQL, or with lockFirst false appendManySmallSQL.
func appendMany(lockFirst bool) string {
	locked, from := "", "u"
	if lockFirst {
		locked = `, locked AS MATERIALIZED (
	SELECT id FROM matches WHERE id = ANY(@ids::text[]) ORDER BY id FOR UPDATE
)`
		from = "u JOIN locked USING (id)"
	}
	return `
WITH u AS (
	SELECT * FROM unnest(@ids::text[], @expected::bigint[], @versions::bigint[], @statuses::text[],
		@players_from::int[], @players_to::int[], @free_seats::int[], @bot_turns::bool[],
		@summaries::bytea[], @started::timestamptz[], @ended::timestamptz[], @deadlines::timestamptz[],
		@reminders::timestamptz[], @invited_from::int[], @invited_to::int[], @authors::text[], @request_ids::text[],
		@fingerprints::bytea[], @times::timestamptz[], @events_from::int[], @events_to::int[])
		WITH ORDINALITY AS u(id, expected, version, status, players_from, players_to, free_seats, bot_turn,
			summary, started, ended, deadline, reminder, invited_from, invited_to, author, request_id,
			fingerprint, at, events_from, events_to, k)
)` + locked + `, done AS (
	UPDATE matches AS m SET version = u.version, status = u.status,
		player_ids = (@players::text[])[u.players_from:u.players_to], free_seats = u.free_seats,
		bot_turn = u.bot_turn, summary = u.summary, started_at = u.started, ended_at = u.ended,
		deadline = u.deadline, reminder_at = u.reminder,
		invited_ids = (@invited::text[])[u.invited_from:u.invited_to]
	FROM ` + from + `
	WHERE m.id = u.id AND m.version = u.expected
	  AND NOT EXISTS (SELECT 1 FROM match_commands AS c
	                  WHERE c.match_id = u.id AND c.author_id = u.author AND c.request_id = u.request_id)
	RETURNING u.k, u.id, u.expected, u.version, u.author, u.request_id, u.fingerprint, u.at,
		u.events_from, u.events_to
), ev AS (
	INSERT INTO match_event_runs (match_id, last_seq, first_seq, types, payloads, author_id, created_at)
	SELECT d.id, d.version, d.expected + 1, (@types::text[])[d.events_from:d.events_to],
		(@payloads::bytea[])[d.events_from:d.events_to], d.author, d.at
	FROM done AS d
), cmd AS (
	INSERT INTO match_commands (match_id, author_id, request_id, fingerprint, first_seq, last_seq)
	SELECT d.id, d.author, d.request_id, d.fingerprint, d.expected + 1, d.version FROM done AS d
)` + manyNoticeWrites + `
SELECT k FROM done`
}

// appendManyArgs lays out the appends as[i], i in idx (of different
// matches, none a create), as appendManyQ's arguments.
func appendManyArgs(as []store.Append, idx []int) []any {
	n := len(idx)
	var (
		ids, statuses, authors, requests = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		expected, versions               = make([]int64, n), make([]int64, n)
		playersFrom, playersTo           = make([]int, n), make([]int, n)
		invitedFrom, invitedTo           = make([]int, n), make([]int, n)
		freeSeats                        = make([]int, n)
		botTurns                         = make([]bool, n)
		summaries, fingerprints          = make([][]byte, n), make([][]byte, n)
		started, ended, deadlines        = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		reminders                        = make([]*time.Time, n)
		times                            = make([]time.Time, n)
		players, invited                 = []string{}, []string{}
		eventsFrom, eventsTo             = make([]int, n), make([]int, n)
		types                            []string
		payloads                         [][]byte
	)
	ns := manyNotices{}
	for k, i := range idx {
		a := as[i]
		m := a.Match
		ids[k], expected[k], versions[k], statuses[k] = m.ID, a.Expected, m.Version, string(m.Status)
		playersFrom[k] = len(players) + 1
		players = append(players, m.Players...)
		playersTo[k] = len(players)
		freeSeats[k], botTurns[k], summaries[k] = m.FreeSeats, m.BotTurn, m.Summary
		started[k], ended[k], deadlines[k] = nullTime(m.Started), nullTime(m.Ended), nullTime(m.Deadline)
		reminders[k] = nullTime(m.Reminder)
		invitedFrom[k] = len(invited) + 1
		invited = append(invited, m.Invited...)
		invitedTo[k] = len(invited)
		authors[k], requests[k], fingerprints[k], times[k] = a.Command.Author, a.Command.RequestID, a.Command.Fingerprint, a.Time
		eventsFrom[k] = len(types) + 1
		for _, e := range a.Events {
			types, payloads = append(types, e.Type), append(payloads, e.Payload)
		}
		eventsTo[k] = len(types)
		ns.add(int64(k+1), a)
	}
	named := map[string]any{
		"ids": ids, "expected": expected, "versions": versions, "statuses": statuses,
		"players_from": playersFrom, "players_to": playersTo, "players": players,
		"free_seats": freeSeats, "bot_turns": botTurns, "summaries": summaries,
		"started": started, "ended": ended, "deadlines": deadlines, "reminders": reminders,
		"invited_from": invitedFrom, "invited_to": invitedTo, "invited": invited,
		"authors": authors, "request_ids": requests, "fingerprints": fingerprints, "times": times,
		"events_from": eventsFrom, "events_to": eventsTo, "types": types, "payloads": payloads,
	}
	ns.args(named)
	return appendManyQ.args(named)
}
