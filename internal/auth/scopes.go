package auth

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/store"
)

// API key scopes. A key without scopes signs its backend's players in and
// does nothing else. A key of scope server (store.ScopeServer) also acts
// for its backend's players: it calls the methods of actAsMethods for the
// player it names in the ExternalIDHeader, and the AdminService for them.
// A key of scope admin (store.ScopeAdmin) calls the AdminService for any
// player. Which player a key may name is checked by Target.

// ExternalIDHeader is the metadata key (an HTTP header over REST) with
// which a key of scope server names the player it acts for, by the
// backend's id of its user.
const ExternalIDHeader = "hangar-external-id"

// Errors of API key scopes and suspensions, each with its own reason.
var (
	ErrAPIKeyScope   = fmt.Errorf("%w: the API key lacks the scope this call needs (hangar apikey create --scope server or admin)", fault.ErrPermission)
	ErrNotActable    = fmt.Errorf("%w: a key of scope server cannot make this call for a player; it may read the player's matches, tickets, notices and history, and enqueue and cancel tickets", fault.ErrPermission)
	ErrPlayerUnknown = fmt.Errorf("%w: the backend has no player with that external id (SignInExternalPlayer makes it)", fault.ErrNotFound)
	// ErrPlayerSuspended: the player is suspended: it gets no token, and a
	// backend cannot act for it.
	ErrPlayerSuspended = fmt.Errorf("%w: the player is suspended", fault.ErrPermission)
)

var (
	// actAsMethods are the calls a key of scope server makes for one of its
	// backend's players: reads of their matches, tickets, notices and
	// history, and their tickets' enqueueing and cancelling. Only unary
	// calls: a stream is the player's app's.
	actAsMethods = map[string]bool{
		hangarv1.PlayerService_GetPlayer_FullMethodName:          true,
		hangarv1.MatchService_GetMatch_FullMethodName:            true,
		hangarv1.MatchService_ListMatches_FullMethodName:         true,
		hangarv1.MatchService_ListMatchEvents_FullMethodName:     true,
		hangarv1.HistoryService_ListPlayerMatches_FullMethodName: true,
		hangarv1.HistoryService_ExportMatch_FullMethodName:       true,
		hangarv1.HistoryService_GetPlayerStats_FullMethodName:    true,
		hangarv1.HistoryService_GetRatingHistory_FullMethodName:  true,
		hangarv1.NoticeService_ListNotices_FullMethodName:        true,
		hangarv1.MatchmakingService_Enqueue_FullMethodName:       true,
		hangarv1.MatchmakingService_GetTicket_FullMethodName:     true,
		hangarv1.MatchmakingService_CancelTicket_FullMethodName:  true,
	}
	// adminMethods take an API key of scope server or admin, and nothing
	// else.
	adminMethods = map[string]bool{
		hangarv1.AdminService_SignOutPlayer_FullMethodName:   true,
		hangarv1.AdminService_SuspendPlayer_FullMethodName:   true,
		hangarv1.AdminService_ReinstatePlayer_FullMethodName: true,
		hangarv1.AdminService_EndMatch_FullMethodName:        true,
		hangarv1.AdminService_DeletePlayer_FullMethodName:    true,
	}
)

// ActAs says whether a key of scope server may call method for a player.
func ActAs(method string) bool { return actAsMethods[method] }

// Admin says whether method is one of the AdminService's, which take an
// API key of scope server or admin.
func Admin(method string) bool { return adminMethods[method] }

// authenticateKey decides what the valid key k may do in a call of
// method: sign in, call the AdminService, or act for the player its call
// names.
func (a *Authenticator) authenticateKey(ctx context.Context, method string, k store.APIKey) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	ext := md.Get(ExternalIDHeader)
	switch {
	case a.keyOnly[method] && len(ext) == 0:
	case adminMethods[method] && len(ext) == 0:
		if !k.HasScope(store.ScopeServer) && !k.HasScope(store.ScopeAdmin) {
			return ctx, ErrAPIKeyScope
		}
	case len(ext) == 0:
		return ctx, ErrAPIKeyNotPlayer
	case !k.HasScope(store.ScopeServer):
		return ctx, ErrAPIKeyScope
	case !actAsMethods[method]:
		return ctx, ErrNotActable
	case len(ext) > 1:
		return ctx, fmt.Errorf("%w: %d %s headers; send one", fault.ErrInvalid, len(ext), ExternalIDHeader)
	default:
		acc, err := a.externalAccount(ctx, k, ext[0])
		if err != nil {
			return ctx, err
		}
		if !acc.Deleted.IsZero() {
			return ctx, ErrPlayerDeleted
		}
		if !acc.Suspended.IsZero() {
			return ctx, ErrPlayerSuspended
		}
		noteCaller(ctx, acc.Player)
		ctx = context.WithValue(ctx, playerKey{}, acc.Player)
	}
	return context.WithValue(ctx, apiKeyKey{}, k), nil
}

// externalAccount is the account of key k's backend's user ext.
func (a *Authenticator) externalAccount(ctx context.Context, k store.APIKey, ext string) (store.Account, error) {
	if err := checkExternalID(ext); err != nil {
		return store.Account{}, err
	}
	acc, err := a.st.ExternalAccount(ctx, k.Name, ext)
	if errors.Is(err, store.ErrNotFound) {
		return acc, ErrPlayerUnknown
	}
	return acc, err
}

func checkExternalID(ext string) error {
	if ext == "" || len(ext) > 128 || !ident.Printable(ext) {
		return fmt.Errorf("%w: external_id must be 1 to 128 bytes of printable UTF-8", fault.ErrInvalid)
	}
	return nil
}

// Target returns the player an AdminService call names, by player id or
// external id (exactly one), as the caller's key may name it: a key of
// scope admin any player by id, and a key its own backend's players by
// external id. Errors: fault.ErrInvalid, ErrAPIKeyScope, ErrPlayerUnknown,
// store.ErrNotFound, or the store's.
func (a *Authenticator) Target(ctx context.Context, playerID, externalID string) (store.Account, error) {
	k, ok := CallerKey(ctx)
	switch {
	case !ok:
		return store.Account{}, ErrAPIKeyRequired
	case (playerID == "") == (externalID == ""):
		return store.Account{}, fmt.Errorf("%w: name the player by player_id or by external_id, exactly one", fault.ErrInvalid)
	case externalID == "" && !k.HasScope(store.ScopeAdmin):
		return store.Account{}, fmt.Errorf("%w: a key of scope server names its players by external_id", ErrAPIKeyScope)
	}
	var acc store.Account
	var err error
	if externalID != "" {
		acc, err = a.externalAccount(ctx, k, externalID)
	} else if err = ident.Check("player_id", playerID); err == nil {
		acc, err = a.st.Account(ctx, playerID)
	}
	if err == nil {
		noteCaller(ctx, acc.Player) // the access log names the player acted on
	}
	return acc, err
}

// RequireAdmin checks that the caller is an API key of scope admin: the
// AdminService's calls that reach past one backend's players (EndMatch).
// Errors: ErrAPIKeyRequired, ErrAPIKeyScope.
func RequireAdmin(ctx context.Context) error {
	k, ok := CallerKey(ctx)
	switch {
	case !ok:
		return ErrAPIKeyRequired
	case !k.HasScope(store.ScopeAdmin):
		return fmt.Errorf("%w: this call takes a key of scope admin", ErrAPIKeyScope)
	}
	return nil
}

// CheckReason checks the reason an operator gives for an action.
func CheckReason(reason string) error {
	if reason == "" || len(reason) > 200 || !ident.Printable(reason) {
		return fmt.Errorf("%w: reason must be 1 to 200 bytes of printable UTF-8", fault.ErrInvalid)
	}
	return nil
}
