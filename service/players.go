package service

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// CreatePlayer implements hangarv1.PlayerServiceServer.
func (s *Service) CreatePlayer(ctx context.Context, req *hangarv1.CreatePlayerRequest) (*hangarv1.CreatePlayerResponse, error) {
	if err := checkDisplayName(req.GetDisplayName()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	reqID := req.GetRequestId()
	if reqID != "" && (len(reqID) < 16 || checkRequestID(reqID, true) != nil) {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: request_id of CreatePlayer must be 16 to 128 bytes of printable UTF-8 (a random one)", errInvalid))
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	p := store.Player{ID: newID("p_"), DisplayName: req.GetDisplayName(), Created: now}
	if reqID != "" {
		// A retried create must land on the same player: derive its id.
		h := sha256.Sum256([]byte("player\x00" + reqID))
		p.ID = "p_" + strings.ToLower(b32.EncodeToString(h[:16]))
	}
	tok, hash := newToken()
	err := s.store.CreatePlayer(ctx, p, hash)
	if errors.Is(err, store.ErrExists) && reqID != "" {
		return s.retriedCreatePlayer(ctx, p, now)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreatePlayerResponse{Player: playerProto(p), Token: tok}, nil
}

// playerRetryWindow is how long a CreatePlayer request_id returns its player.
const playerRetryWindow = 10 * time.Minute

// retriedCreatePlayer answers a CreatePlayer whose request_id made player
// want.ID already: the same player, with a new token.
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
	tok, hash := newToken()
	if err := s.store.AddToken(ctx, p.ID, hash, now); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreatePlayerResponse{Player: playerProto(p), Token: tok}, nil
}

// GetPlayer implements hangarv1.PlayerServiceServer.
func (s *Service) GetPlayer(ctx context.Context, req *hangarv1.GetPlayerRequest) (*hangarv1.GetPlayerResponse, error) {
	me, _ := caller(ctx)
	if req.GetPlayerId() == "" || req.GetPlayerId() == me.ID {
		return &hangarv1.GetPlayerResponse{Player: playerProto(me)}, nil
	}
	if err := checkID("player_id", req.GetPlayerId()); err != nil {
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

// checkDisplayName accepts 1 to 64 printable characters that show: at least
// one letter, digit, punctuation or symbol that is not drawn blank (the
// Hangul fillers, the blank Braille pattern), each carrying at most
// maxMarks combining marks (scripts such as Devanagari or Thai put two or
// three on a letter; a "zalgo" name piles up dozens).
func checkDisplayName(n string) error {
	if n == "" || utf8.RuneCountInString(n) > 64 || !utf8.ValidString(n) {
		return fmt.Errorf("%w: display_name must be 1 to 64 characters of UTF-8", errInvalid)
	}
	visible, marks := false, 0
	for _, r := range n {
		switch {
		case !unicode.IsPrint(r):
			return fmt.Errorf("%w: display_name has a non-printable character", errInvalid)
		case unicode.Is(unicode.M, r):
			if marks++; marks > maxMarks {
				return fmt.Errorf("%w: display_name has too many combining marks on one character", errInvalid)
			}
		default:
			marks = 0
			visible = visible || (r != ' ' && !blank[r])
		}
	}
	if !visible {
		return fmt.Errorf("%w: display_name must show at least one character", errInvalid)
	}
	return nil
}

// maxMarks is the most combining marks a display name may stack on one
// character.
const maxMarks = 4

// blank are printable characters that are drawn as nothing.
var blank = map[rune]bool{
	'\u115F': true, // HANGUL CHOSEONG FILLER
	'\u1160': true, // HANGUL JUNGSEONG FILLER
	'\u3164': true, // HANGUL FILLER
	'\uFFA0': true, // HALFWIDTH HANGUL FILLER
	'\u2800': true, // BRAILLE PATTERN BLANK
}

// checkID rejects ids that cannot be ours, before any store lookup.
func checkID(field, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is required", errInvalid, field)
	}
	if len(id) > 64 || !printable(id) {
		return fmt.Errorf("%w: %s is malformed", errInvalid, field)
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters
// (which no id of ours has, and Postgres text cannot hold NUL).
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// checkRequestID validates a client request id.
func checkRequestID(id string, required bool) error {
	if id == "" && !required {
		return nil
	}
	if id == "" || len(id) > 128 || !printable(id) {
		return fmt.Errorf("%w: request_id must be 1 to 128 bytes of printable UTF-8", errInvalid)
	}
	return nil
}
