package service

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/store"
)

// Errors of the service's own, each mapped to one gRPC code by toStatus.
var (
	errInvalid         = game.ErrInvalid
	errRule            = game.ErrIllegal
	errUnauthenticated = errors.New("missing or invalid bearer token")
	errPermission      = errors.New("permission denied")
	errNotFound        = errors.New("not found")
	errOutOfRange      = errors.New("out of range")
	errUnavailable     = errors.New("server is shutting down; reconnect")
)

// toStatus maps an error to the gRPC status a client sees. It is the only
// place that chooses codes. Unexpected errors are logged and reported as
// Internal with a fixed message: their text never reaches a client.
func toStatus(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code := codes.Internal
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, errUnauthenticated):
		code = codes.Unauthenticated
	case errors.Is(err, errPermission):
		code = codes.PermissionDenied
	case errors.Is(err, errInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, errRule):
		code = codes.FailedPrecondition
	case errors.Is(err, store.ErrVersionConflict):
		code = codes.Aborted
	case errors.Is(err, errOutOfRange):
		code = codes.OutOfRange
	case errors.Is(err, errNotFound), errors.Is(err, store.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrRequestMismatch):
		code = codes.AlreadyExists
	case errors.Is(err, errUnavailable), errors.Is(err, store.ErrUnavailable):
		code = codes.Unavailable
	}
	if code == codes.Internal {
		log.ErrorContext(ctx, "internal error", "err", err)
		return status.Error(codes.Internal, "internal error")
	}
	return status.Error(code, err.Error())
}
