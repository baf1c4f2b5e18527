// Command go is a Hangar client in Go: it registers two players, plays an
// Aeroplane Chess match to the end as one of them against a bot, and has
// the other watch the match as a spectator.
//
//	go run ./examples/go -addr 127.0.0.1:7350
//
// The player learns the match's version, whose turn it is and the phase
// from its watch stream, and acts when the turn is its own: Roll, or
// ListLegalMoves and Move. The spectator watches from the first event and
// checks that it saw every event once, in order. It exits 1 on any failure.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

func main() {
	addr := os.Getenv("HANGAR_ADDR")
	if addr == "" {
		addr = "127.0.0.1:7350"
	}
	flag.StringVar(&addr, "addr", addr, "the server's gRPC address (env HANGAR_ADDR)")
	flag.Parse()
	log.SetFlags(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, addr); err != nil {
		log.Fatal(err)
	}
}

// client holds the three services of one connection.
type client struct {
	players hangarv1.PlayerServiceClient
	matches hangarv1.MatchServiceClient
	moves   hangarv1.MoveServiceClient
}

func run(ctx context.Context, addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := client{
		players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn),
		moves:   hangarv1.NewMoveServiceClient(conn),
	}

	// Each player's calls carry its token in their context.
	ada, adaID, err := c.createPlayer(ctx, "Ada")
	if err != nil {
		return err
	}
	bob, _, err := c.createPlayer(ctx, "Bob")
	if err != nil {
		return err
	}

	// Ada takes a seat and a bot the other; the match is full, so it starts.
	created, err := c.matches.CreateMatch(ada, &hangarv1.CreateMatchRequest{
		Game:      hangarv1.Game_GAME_AEROPLANE,
		SeatCount: 2,
		BotSeats:  1,
		RequestId: rand.Text(),
		Options: &hangarv1.GameOptions{Game: &hangarv1.GameOptions_Aeroplane{
			Aeroplane: &aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0},
		}},
	})
	if err != nil {
		return fmt.Errorf("create match: %w", err)
	}
	id := created.GetMatch().GetMatchId()
	seat := int32(-1)
	for _, s := range created.GetMatch().GetSeats() {
		if s.GetPlayerId() == adaID {
			seat = s.GetSeat()
		}
	}
	fmt.Printf("match %s: Ada plays seat %d against a bot\n", id, seat)

	watched := make(chan result, 1)
	go func() {
		n, err := c.spectate(bob, id)
		watched <- result{n, err}
	}()
	if err := c.play(ada, id, seat); err != nil {
		return err
	}
	spec := <-watched
	if spec.err != nil {
		return spec.err
	}

	got, err := c.matches.GetMatch(ada, &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		return fmt.Errorf("get match: %w", err)
	}
	m := got.GetMatch()
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		return fmt.Errorf("match is %v, want FINISHED", m.GetStatus())
	}
	if spec.events != m.GetVersion() {
		return fmt.Errorf("spectator saw %d events, the match has %d", spec.events, m.GetVersion())
	}
	fmt.Printf("match %s: %v at version %d\n", id, m.GetStatus(), m.GetVersion())
	seats := m.GetSeats()
	slices.SortFunc(seats, func(a, b *hangarv1.Seat) int { return cmp.Compare(a.GetPlace(), b.GetPlace()) })
	for _, s := range seats {
		name := s.GetDisplayName()
		if s.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_BOT {
			name = "bot"
		}
		fmt.Printf("  place %d: seat %d (%s)\n", s.GetPlace(), s.GetSeat(), name)
	}
	fmt.Printf("spectator: saw %d events, 1..%d in order, each once\n", spec.events, m.GetVersion())
	return nil
}

// createPlayer registers a player and returns a context that authenticates
// as it, and its id.
func (c client) createPlayer(ctx context.Context, name string) (context.Context, string, error) {
	// A random request id makes the call safe to retry.
	r, err := c.players.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: name, RequestId: rand.Text()})
	if err != nil {
		return nil, "", fmt.Errorf("create player %s: %w", name, err)
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+r.GetToken())
	return ctx, r.GetPlayer().GetPlayerId(), nil
}

// play plays seat until the match ends, acting on what the watch stream
// says after each event.
func (c client) play(ctx context.Context, id string, seat int32) error {
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	// acted is the version our last command reached: one command appends
	// several events, and the ones before its last are already history.
	var acted int64
	for {
		w, err := stream.Recv()
		if err == io.EOF {
			return nil // the stream ends after the match's last event
		}
		if err != nil {
			return fmt.Errorf("watch: %w", err)
		}
		if w.GetVersion() < acted || w.TurnSeat == nil || w.GetTurnSeat() != seat {
			continue
		}
		var v int64
		switch w.GetPhase() {
		case "start", "roll":
			v, err = c.roll(ctx, id, w.GetVersion())
		case "move":
			v, err = c.move(ctx, id)
		}
		// ABORTED: the match had moved on past this event (one in the
		// middle of a command); the next event says where it stands.
		if err != nil && status.Code(err) != codes.Aborted {
			return fmt.Errorf("%s at version %d: %w", w.GetPhase(), w.GetVersion(), err)
		}
		acted = max(acted, v)
	}
}

// roll rolls the die for the caller's turn and returns the match's version
// after it.
func (c client) roll(ctx context.Context, id string, version int64) (int64, error) {
	r, err := c.moves.Roll(ctx, &hangarv1.RollRequest{MatchId: id, ExpectedVersion: version, RequestId: rand.Text()})
	return r.GetVersion(), err
}

// move plays the first of the caller's legal moves and returns the match's
// version after it, or 0 when there is none to play (the match moved on).
func (c client) move(ctx context.Context, id string) (int64, error) {
	lm, err := c.moves.ListLegalMoves(ctx, &hangarv1.ListLegalMovesRequest{MatchId: id})
	if err != nil {
		return 0, err
	}
	if len(lm.GetMoves()) == 0 {
		return 0, nil
	}
	r, err := c.moves.Move(ctx, &hangarv1.MoveRequest{
		MatchId: id, ExpectedVersion: lm.GetVersion(), RequestId: rand.Text(), Move: lm.GetMoves()[0],
	})
	return r.GetVersion(), err
}

type result struct {
	events int64
	err    error
}

// spectate watches a match from its first event to its end and checks that
// every event comes once, in order. It returns how many it saw.
func (c client) spectate(ctx context.Context, id string) (int64, error) {
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: 0})
	if err != nil {
		return 0, fmt.Errorf("spectator: watch: %w", err)
	}
	var last int64
	for {
		w, err := stream.Recv()
		if err == io.EOF {
			return last, nil
		}
		if err != nil {
			return last, fmt.Errorf("spectator: watch: %w", err)
		}
		if seq := w.GetEvent().GetSeq(); seq != last+1 || w.GetVersion() != seq {
			return last, fmt.Errorf("spectator: event %d (version %d) after event %d", seq, w.GetVersion(), last)
		}
		last++
	}
}
