package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

// An append with a quota (store.Append.Quota) cannot be the single
// statement of other appends: the count must see every quota append of the
// player committed before it, on any node. It runs in a transaction that
// first takes a transaction-scoped advisory lock on the player, then counts
// (a new statement, so under READ COMMITTED a new snapshot, taken after the
// previous holder of the lock committed), then appends. Appends without a
// quota never take the lock; they can only lower a count (a lobby fills,
// a match ends).
//
// Advisory locks are taken only in their two-key form, (class, key), which
// Postgres keeps apart from the one-bigint form that golang-migrate uses
// for its migration lock. The classes in use:
//
//	ratingLockClass "HANG"  key hashtext(game || ':' || player)  history.go
//	quotaLockClass  "HQUO"  key hashtext(player)                 here
//
// A quota append that also ends a match takes its quota lock before the
// rating locks; nothing takes them the other way round.

// quotaLockClass is the first key of the quota advisory locks ("HQUO").
const quotaLockClass = 0x4851554F

// errQuotaReached rolls back a quota append whose count is at the limit.
var errQuotaReached = errors.New("postgres: quota reached")

// quotaCountSQL counts, up to the limit ($2), the matches q counts of the
// player ($1). The status and the empty seat list are literals, so that the
// plan (generic ones too) can use the partial indexes of migration 0007.
func quotaCountSQL(q store.Quota) (string, error) {
	switch q.Status {
	case store.StatusOpen, store.StatusActive, store.StatusFinished, store.StatusAbandoned:
	default:
		return "", fmt.Errorf("postgres: append: quota of unknown status %q", q.Status)
	}
	cond := "status = '" + string(q.Status) + "'"
	if q.BotOnly {
		cond += " AND player_ids = '{}'"
	}
	return `SELECT count(*) FROM (SELECT 1 FROM matches WHERE creator_id = $1 AND ` + cond + ` LIMIT $2) AS counted`, nil
}

// appendQuota is Append for a.Quota != nil; q and args are the append
// statement.
func (s *Store) appendQuota(ctx context.Context, a store.Append, q string, args []any) (store.Result, error) {
	count, err := quotaCountSQL(*a.Quota)
	if err != nil {
		return store.Result{}, err
	}
	if a.End != nil {
		if err := a.End.Check(); err != nil {
			return store.Result{}, err
		}
	}
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, quotaLockClass, a.Quota.Player); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, count, a.Quota.Player, max(a.Quota.Limit, 0)).Scan(&n); err != nil {
				return err
			}
			if n >= a.Quota.Limit {
				return errQuotaReached
			}
			var applied int
			if err := tx.QueryRow(ctx, q, args...).Scan(&applied); err != nil {
				return err
			}
			if applied != 1 {
				return errNotApplied
			}
			if a.End != nil {
				return writeEnd(ctx, tx, a)
			}
			return nil
		})
		if err == nil {
			return store.Result{First: a.Expected + 1, Last: a.Match.Version}, nil
		}
		var pgErr *pgconn.PgError
		switch {
		case errors.Is(err, errQuotaReached):
			// A retried command is answered whatever the count.
			r, err := s.Command(ctx, a.Match.ID, a.Command)
			if errors.Is(err, store.ErrNotFound) {
				return store.Result{}, fmt.Errorf("%w: player %s has %d or more %s matches", store.ErrQuota,
					a.Quota.Player, a.Quota.Limit, quotaKind(*a.Quota))
			}
			return r, err
		case errors.Is(err, errNotApplied):
		case errors.As(err, &pgErr) && (pgErr.Code == uniqueViolation || pgErr.Code == serializationFailure):
			// Lost a race on a unique key, as in Append.
		case errors.As(err, &pgErr) && pgErr.Code == deadlockDetected && attempt < 3:
			continue
		default:
			return store.Result{}, wrapErr("append", err)
		}
		return s.explain(ctx, a)
	}
}

// quotaKind names the matches q counts, for error messages.
func quotaKind(q store.Quota) string {
	if q.BotOnly {
		return string(q.Status) + " bot-only"
	}
	return string(q.Status)
}
