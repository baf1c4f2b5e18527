// Package fault declares the umbrella errors that Hangar's job packages
// wrap: each names one kind of refusal, and service's toStatus maps each
// kind to one gRPC code. A job package wraps one of these (with %w) in its
// own named sentinels; it never matches an error by its text.
//
// fault imports game (whose two rule umbrellas it names) and nothing else
// of Hangar's; every job package may import it.
package fault

import (
	"errors"

	"github.com/hangarhq/hangar/game"
)

// The umbrellas.
var (
	// ErrInvalid: the request is malformed (INVALID_ARGUMENT).
	ErrInvalid = game.ErrInvalid
	// ErrRule: the request breaks a rule now (FAILED_PRECONDITION).
	ErrRule = game.ErrIllegal
	// ErrUnauthenticated: no or bad credentials (UNAUTHENTICATED).
	ErrUnauthenticated = errors.New("missing or invalid bearer token")
	// ErrPermission: the caller may not do that (PERMISSION_DENIED).
	ErrPermission = errors.New("permission denied")
	// ErrNotFound: no such thing, or none the caller may see (NOT_FOUND).
	ErrNotFound = errors.New("not found")
	// ErrOutOfRange: a position past the end (OUT_OF_RANGE).
	ErrOutOfRange = errors.New("out of range")
	// ErrUnavailable: the node is draining (UNAVAILABLE).
	ErrUnavailable = errors.New("server is shutting down; reconnect")
	// ErrIssuerUnavailable: the identity provider cannot be reached to
	// verify its token (UNAVAILABLE).
	ErrIssuerUnavailable = errors.New("the identity provider cannot be reached; retry later")
	// ErrExhausted: a limit or quota refused the request
	// (RESOURCE_EXHAUSTED).
	ErrExhausted = errors.New("resource exhausted")
)
