package nodetest

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// Player is one player's connection to a node.
type Player struct {
	ID, Token string
	Players   hangarv1.PlayerServiceClient
	Matches   hangarv1.MatchServiceClient
	Moves     hangarv1.MoveServiceClient
}

// NewPlayer registers a player named name through addr.
func NewPlayer(t testing.TB, addr, name string) *Player {
	t.Helper()
	p := AsPlayer(Dial(t, addr), "")
	r, err := p.Players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
	if err != nil {
		t.Fatalf("CreatePlayer: %v", err)
	}
	p.ID, p.Token = r.GetPlayer().GetPlayerId(), r.GetToken()
	return p
}

// AsPlayer is the player of token on conn.
func AsPlayer(conn grpc.ClientConnInterface, token string) *Player {
	return &Player{Token: token, Players: hangarv1.NewPlayerServiceClient(conn),
		Matches: hangarv1.NewMatchServiceClient(conn), Moves: hangarv1.NewMoveServiceClient(conn)}
}

// Ctx is a context whose calls carry the player's token.
func (p *Player) Ctx() context.Context { return WithToken(context.Background(), p.Token) }

// Match is match id as the player sees it now.
func (p *Player) Match(t testing.TB, id string) *hangarv1.Match {
	t.Helper()
	r, err := p.Matches.GetMatch(p.Ctx(), &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("GetMatch: %v", err)
	}
	return r.GetMatch()
}

// WatchToEnd watches match id from its start until its stream ends with
// the match (a minute at most).
func (p *Player) WatchToEnd(t testing.TB, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx(), time.Minute)
	defer cancel()
	w, err := p.Matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("WatchMatch: %v", err)
	}
	for {
		_, err := w.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("WatchMatch: %v", err)
		}
	}
}
