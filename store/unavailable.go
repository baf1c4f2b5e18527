package store

import "errors"

// ErrUnavailable: the database cannot be reached right now (connection
// refused or lost, server shutting down). The operation may or may not
// have taken effect; retrying an append with the same command is safe.
var ErrUnavailable = errors.New("store: database unavailable")
