package service

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/store"
)

// CreatePlayer implements hangarv1.PlayerServiceServer.
//
// A request_id makes it safe to retry when the answer was lost: the retry
// gets the player the first call made, with a new token (the server keeps
// no token it could send again). CreatePlayer needs no credential, so the
// retry must show it comes from the same caller by something besides the
// request id, which is the client's choice and may be anyone's: a fixed
// id copied from an example, or one read from a log. The request id is
// therefore the caller's alone: the player's id is derived from the
// request id and the client's address (clientAddr: the connection's peer,
// or the address a trusted proxy names; an IPv6 /64). A retry from the
// same address lands on the same player; the same request id from another
// address makes that caller a player of its own, and never returns, or
// tells of, the first one. This is what a client retrying after a lost
// answer needs, which retries at once from where it is: a retry from a
// new address (a phone that changed networks) makes a second player, the
// first left unused, and never an error. What it does not stop is a
// stranger at the same address (one NAT, or a proxy not named in
// TrustedProxies) who knows the request id, within the retry window:
// hence request ids must be random, as the API says.
func (s *playerServer) CreatePlayer(ctx context.Context, req *hangarv1.CreatePlayerRequest) (*hangarv1.CreatePlayerResponse, error) {
	if err := auth.CheckDisplayName(req.GetDisplayName()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	reqID := req.GetRequestId()
	if reqID != "" && (len(reqID) < 16 || ident.CheckRequestID(reqID, true) != nil) {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: request_id of CreatePlayer must be 16 to 128 bytes of printable UTF-8 (a random one)", errInvalid))
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	p := store.Player{ID: ident.New("p_"), DisplayName: req.GetDisplayName(), Created: now}
	if reqID != "" {
		// A retried create must land on the same player, and only the
		// caller's: derive its id from the request id and the address.
		h := sha256.Sum256([]byte("player\x00" + s.limits.ClientAddr(ctx) + "\x00" + reqID))
		p.ID = ident.Derived("p_", h[:16])
	}
	tok, t := s.auth.Issue(now)
	err := s.store.CreatePlayer(ctx, p, t)
	if errors.Is(err, store.ErrExists) && reqID != "" {
		return s.retriedCreatePlayer(ctx, p, now)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreatePlayerResponse{Player: playerProto(p), Token: tok, ExpireTime: timestamppb.New(t.Expires)}, nil
}

// playerRetryWindow is how long a CreatePlayer request_id returns its player.
const playerRetryWindow = 10 * time.Minute

// retriedCreatePlayer answers a CreatePlayer whose request_id made player
// want.ID already, from the same address: the same player, with a new
// token.
func (s *Service) retriedCreatePlayer(ctx context.Context, want store.Player, now time.Time) (*hangarv1.CreatePlayerResponse, error) {
	p, err := s.store.Player(ctx, want.ID)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if p.DisplayName != want.DisplayName {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: request_id was used with another display_name", errInvalid))
	}
	if now.Sub(p.Created) > playerRetryWindow {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: request_id made a player more than %v ago: a retry no longer returns it", store.ErrExists, playerRetryWindow))
	}
	tok, t := s.auth.Issue(now)
	if err := s.store.AddToken(ctx, p.ID, t); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreatePlayerResponse{Player: playerProto(p), Token: tok, ExpireTime: timestamppb.New(t.Expires)}, nil
}

// GetPlayer implements hangarv1.PlayerServiceServer.
func (s *playerServer) GetPlayer(ctx context.Context, req *hangarv1.GetPlayerRequest) (*hangarv1.GetPlayerResponse, error) {
	me, _ := auth.Caller(ctx)
	if req.GetPlayerId() == "" || req.GetPlayerId() == me.ID {
		return &hangarv1.GetPlayerResponse{Player: playerProto(me)}, nil
	}
	if err := ident.Check("player_id", req.GetPlayerId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	p, err := s.store.Player(ctx, req.GetPlayerId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.GetPlayerResponse{Player: playerProto(p)}, nil
}

func playerProto(p store.Player) *hangarv1.Player {
	return &hangarv1.Player{PlayerId: p.ID, DisplayName: p.DisplayName, CreateTime: timestamppb.New(p.Created)}
}
