package match

import (
	"fmt"

	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/store"
)

// VersionConflict is a command's expected version that is not the match's:
// ABORTED with reason VERSION_CONFLICT and the current version (when the
// store told it) in the ErrorInfo's metadata.
type VersionConflict struct {
	match             string
	Current, expected int64 // current 0: not known
}

func (e *VersionConflict) Error() string {
	if e.Current == 0 {
		return fmt.Sprintf("match %s moved on from version %d; read it again", e.match, e.expected)
	}
	return fmt.Sprintf("match %s is at version %d, not %d", e.match, e.Current, e.expected)
}

func (e *VersionConflict) Unwrap() error { return store.ErrVersionConflict }

// ErrArchived: the match's events were archived (service.Archive); its
// result stays in the history.
var ErrArchived = fmt.Errorf("%w: the match was archived", fault.ErrNotFound)
