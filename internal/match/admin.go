package match

import (
	"context"
	"fmt"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
)

// EndMatch runs an operator's EndMatch command: the match, open or
// active, ends abandoned (no result, no rating), and its MatchEnded
// carries the reason and the id of the caller's API key. The caller is
// an API key of scope admin, checked by the service. Errors:
// fault.ErrInvalid, store.ErrNotFound, ErrNotInPlay (the match has
// ended), or the write path's.
func (s *Commands) EndMatch(ctx context.Context, req *hangarv1.EndMatchRequest) (Outcome, error) {
	k, _ := auth.CallerKey(ctx)
	if err := auth.CheckReason(req.GetReason()); err != nil {
		return Outcome{}, err
	}
	c, err := matchCommand(ctx, req.GetMatchId(), 0, req.GetRequestId(), req)
	if err != nil {
		return Outcome{}, err
	}
	c.Decide = func(m *Match) (Step, error) {
		if m.Status != store.StatusOpen && m.Status != store.StatusActive {
			return Step{}, fmt.Errorf("%w: the match is over", ErrNotInPlay)
		}
		return Events(&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{
			Status: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED, Reason: req.GetReason(), EndedByKeyId: k.ID}}}), nil
	}
	// execFresh: a retry finds the match ended, and the stored command
	// says it was this one.
	return s.execFresh(ctx, c)
}
