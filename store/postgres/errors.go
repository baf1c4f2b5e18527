package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

// wrapErr names the failed operation and marks errors that mean the
// database cannot be reached (rather than that the statement failed) with
// store.ErrUnavailable, so clients are told to retry. Connection trouble is
// recognised by error type and SQLSTATE class, never by message text.
func wrapErr(op string, err error) error {
	if unreachable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, errReconnectWait) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P01-57P03: admin or crash shutdown,
		// cannot connect now; 25006: a write reached a server that is
		// read-only now (a primary being demoted in a failover).
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" ||
			pgErr.Code == readOnlyTransaction
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// SQLSTATEs the store acts on.
const (
	// readOnlyTransaction: a write in a read-only transaction.
	readOnlyTransaction = "25006"
	// uniqueViolation: a primary key or unique violation.
	uniqueViolation = "23505"
	// serializationFailure: a concurrent update made the statement fail.
	serializationFailure = "40001"
	// deadlockDetected: the transaction was chosen to break a deadlock.
	deadlockDetected = "40P01"
	// noSuchPrepared: a prepared statement the connection named does not
	// exist on the server.
	noSuchPrepared = "26000"
	// featureNotSupported: among others, a prepared statement whose cached
	// plan no longer fits its tables' columns.
	featureNotSupported = "0A000"
)

// isUnique says whether err is a unique violation.
func isUnique(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == uniqueViolation
}
