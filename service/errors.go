package service

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/calendar"
	"github.com/hangarhq/hangar/internal/chat"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/matchmaker"
	"github.com/hangarhq/hangar/internal/social"
	"github.com/hangarhq/hangar/store"
)

// Errors of the service's own, each mapped to one gRPC code by toStatus.
var (
	errInvalid           = fault.ErrInvalid
	errRule              = fault.ErrRule
	errUnauthenticated   = fault.ErrUnauthenticated
	errPermission        = fault.ErrPermission
	errNotFound          = fault.ErrNotFound
	errOutOfRange        = fault.ErrOutOfRange
	errUnavailable       = fault.ErrUnavailable
	errIssuerUnavailable = fault.ErrIssuerUnavailable
	errExhausted         = fault.ErrExhausted
)

// errorDomain names Hangar as the source of ErrorInfo reasons.
const errorDomain = "hangar"

// reasons are the stable ErrorInfo reasons, most specific first.
var reasons = []struct {
	err    error
	reason string
}{
	{game.ErrNotYourTurn, "NOT_YOUR_TURN"},
	{game.ErrWrongPhase, "WRONG_PHASE"},
	{game.ErrIllegalMove, "ILLEGAL_MOVE"},
	{game.ErrGameOver, "GAME_OVER"},
	{game.ErrUnknownGame, "UNKNOWN_GAME"},
	{game.ErrUnknownType, ReasonUnknownType},
	{match.ErrMatchNotOpen, "MATCH_NOT_OPEN"},
	{match.ErrMatchFull, "MATCH_FULL"},
	{match.ErrSeatTaken, "SEAT_TAKEN"},
	{match.ErrSeated, "ALREADY_SEATED"},
	{match.ErrNotInPlay, "MATCH_NOT_IN_PLAY"},
	{match.ErrTooFew, "NOT_ENOUGH_PLAYERS"},
	{match.ErrNotSeated, "NOT_SEATED"},
	{match.ErrNotCreator, "NOT_CREATOR"},
	{auth.ErrTokenExpired, "TOKEN_EXPIRED"},
	{auth.ErrTokenRevoked, "TOKEN_REVOKED"},
	{auth.ErrAPIKeyRevoked, "API_KEY_REVOKED"},
	{auth.ErrAPIKeyNotPlayer, "API_KEY_NOT_A_PLAYER"},
	{auth.ErrAPIKeyRequired, "API_KEY_REQUIRED"},
	{auth.ErrHangarTokenRequired, "HANGAR_TOKEN_REQUIRED"},
	{auth.ErrAPIKeyScope, "API_KEY_SCOPE"},
	{auth.ErrNotActable, "NOT_ACTABLE_FOR_PLAYER"},
	{auth.ErrPlayerUnknown, "EXTERNAL_PLAYER_UNKNOWN"},
	{auth.ErrPlayerSuspended, "PLAYER_SUSPENDED"},
	{auth.ErrPlayerDeleted, "PLAYER_DELETED"},
	{errIssuerUnavailable, "ISSUER_UNAVAILABLE"},
	{match.ErrMatchPublic, "MATCH_PUBLIC"},
	{match.ErrMatchEnded, "MATCH_ENDED"},
	{match.ErrArchived, "MATCH_ARCHIVED"},
	{matchmaker.ErrNotYourTicket, "NOT_YOUR_TICKET"},
	{matchmaker.ErrTicketMatched, "TICKET_MATCHED"},
	{matchmaker.ErrTicketExpired, "TICKET_EXPIRED"},
	{matchmaker.ErrTicketOpen, "TICKET_OPEN"},
	{match.ErrNotInvited, "NOT_INVITED"},
	{match.ErrTooManyCodes, "TOO_MANY_INVITE_CODES"},
	{match.ErrBadTimeControl, "BAD_TIME_CONTROL"},
	{match.ErrOfferOpen, "OFFER_OPEN"},
	{match.ErrDrawNotAllowed, "DRAW_NOT_ALLOWED"},
	{match.ErrAbortTooLate, "ABORT_TOO_LATE"},
	{match.ErrTakebackNotAllowed, "TAKEBACK_NOT_ALLOWED"},
	{match.ErrRematchNotEnded, "REMATCH_NOT_ENDED"},
	{match.ErrOfferNotInPlay, "OFFER_NOT_IN_PLAY"},
	{match.ErrNoOneToAnswer, "NO_ONE_TO_ANSWER"},
	{match.ErrOwnOffer, "OWN_OFFER"},
	{match.ErrOfferClosed, "OFFER_CLOSED"},
	{match.ErrAlreadyAnswered, "ALREADY_ANSWERED"},
	{chat.ErrChannelClosed, "CHAT_CHANNEL_CLOSED"},
	{chat.ErrFull, "CHAT_FULL"},
	{chat.ErrTooManyMutes, "TOO_MANY_MUTES"},
	{social.ErrNoPlayer, "PLAYER_NOT_FOUND"},
	{social.ErrTooManyFriends, "TOO_MANY_FRIENDS"},
	{social.ErrTooManyBlocks, "TOO_MANY_BLOCKS"},
	{calendar.ErrBadZone, "BAD_TIME_ZONE"},
	{calendar.ErrBadVacation, "BAD_VACATION"},
	{calendar.ErrOnVacation, "ON_VACATION"},
	{calendar.ErrAllowanceUsed, "VACATION_ALLOWANCE_USED"},
	{store.ErrVersionConflict, "VERSION_CONFLICT"},
	{store.ErrRequestMismatch, "REQUEST_ID_REUSED"},
	{store.ErrExists, "ALREADY_EXISTS"},
	{errNotFound, "NOT_FOUND"},
	{store.ErrNotFound, "NOT_FOUND"},
	{errOutOfRange, "OUT_OF_RANGE"},
	{auth.ErrNoCredentials, "TOKEN_MISSING"},
	{auth.ErrMalformedAuthorization, "AUTHORIZATION_MALFORMED"},
	{auth.ErrUnknownToken, "TOKEN_UNKNOWN"},
	{errUnauthenticated, "UNAUTHENTICATED"},
	{errPermission, "PERMISSION_DENIED"},
	{errInvalid, "INVALID_ARGUMENT"},
	{errRule, "FAILED_PRECONDITION"},
	{limit.ErrRateLimited, "RATE_LIMITED"},
	{limit.ErrOpenQuota, "OPEN_MATCH_QUOTA"},
	{limit.ErrBotQuota, "BOT_MATCH_QUOTA"},
	{limit.ErrTooManyWatches, "TOO_MANY_WATCHES"},
	{limit.ErrSlowWatcher, "SLOW_WATCHER"},
	{limit.ErrRequestTooLarge, "REQUEST_TOO_LARGE"},
	{errExhausted, "RESOURCE_EXHAUSTED"},
	{errUnavailable, "UNAVAILABLE"},
	{store.ErrUnavailable, "UNAVAILABLE"},
}

// maxMessage bounds a status message: a client's input is never echoed
// back whole.
const maxMessage = 200

// toStatus maps an error to the gRPC status a client sees. It is the only
// place that chooses codes. The status carries a google.rpc.ErrorInfo with
// a stable reason (reasons); its message names no package, database or
// host and is at most maxMessage bytes. Unexpected errors are logged and
// reported as Internal with a fixed message: their text never reaches a
// client.
func toStatus(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code := codes.Internal
	msg := err.Error()
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
	case errors.Is(err, errExhausted):
		code = codes.ResourceExhausted
	case errors.Is(err, errUnavailable), errors.Is(err, errIssuerUnavailable):
		code = codes.Unavailable
	case errors.Is(err, store.ErrUnavailable):
		// The driver's text names the database, its user and host.
		code, msg = codes.Unavailable, "the database is unavailable; retry"
	}
	if code == codes.Internal {
		log.ErrorContext(ctx, "internal error", "err", err)
		return status.Error(codes.Internal, "internal error")
	}
	st := status.New(code, clientMessage(msg))
	info := &errdetails.ErrorInfo{Domain: errorDomain, Reason: code.String()}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			info.Reason = r.reason
			break
		}
	}
	if vc := (*match.VersionConflict)(nil); errors.As(err, &vc) && vc.Current > 0 {
		info.Metadata = map[string]string{"current_version": strconv.FormatInt(vc.Current, 10)}
	}
	if q := (*limit.QuotaError)(nil); errors.As(err, &q) {
		info.Metadata = map[string]string{"limit": strconv.Itoa(q.Limit)}
	}
	if to := (*matchmaker.TicketOpen)(nil); errors.As(err, &to) {
		info.Metadata = map[string]string{"ticket_id": to.ID}
	}
	details := []protoadapt.MessageV1{info}
	if rl := (*limit.RateLimited)(nil); errors.As(err, &rl) {
		// A client waits this long before it retries (google.rpc.RetryInfo).
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(rl.Delay)})
	}
	if d, derr := st.WithDetails(details...); derr == nil {
		st = d
	}
	return st.Err()
}

// clientMessage is msg as a client may see it: without the store's package
// prefix, valid UTF-8, at most maxMessage bytes.
func clientMessage(msg string) string { return boundMessage(msg, maxMessage) }

// boundMessage is msg without the store's package prefix, valid UTF-8, at
// most limit bytes.
func boundMessage(msg string, limit int) string {
	msg = strings.ReplaceAll(msg, "store: ", "")
	msg = strings.ToValidUTF8(msg, "?")
	if len(msg) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// Reason is an ErrorInfo reason of the service's refusals and the code of
// the status that carries it.
type Reason struct {
	Reason string
	Code   codes.Code
}

// Reasons lists the ErrorInfo reasons toStatus gives, each once, most
// specific first, with their codes: what the OpenAPI document tells
// clients to expect. (The edge's own reasons are in edge.go.)
func Reasons() []Reason {
	log := slog.New(slog.DiscardHandler)
	seen := map[string]bool{}
	var out []Reason
	for _, r := range reasons {
		if seen[r.reason] {
			continue
		}
		seen[r.reason] = true
		out = append(out, Reason{Reason: r.reason, Code: status.Code(toStatus(context.Background(), log, r.err))})
	}
	return out
}
