// Command go is a Hangar client in Go: it lists the games the server hosts,
// registers two players, plays an Aeroplane Chess match to the end as one
// of them against a bot, and has the other watch the match as a spectator.
//
//	go run ./examples/go -addr 127.0.0.1:7350
//
// A game's own messages (options, state, actions, events) travel as
// google.protobuf.Any: the client packs its options with anypb.New and
// reads the game's events with UnmarshalTo. The player learns the match's
// version and whose turn it is from its watch stream, and acts when the
// turn is its own: ListLegalActions, then Act with one of them as it came
// (a Roll while it must roll, else one of its Moves). The spectator watches
// from the first event and checks that it saw every event once, in order.
// It exits 1 on any failure.
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
	"google.golang.org/protobuf/types/known/anypb"

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

// client holds the services of one connection.
type client struct {
	games   hangarv1.GameServiceClient
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
		games:   hangarv1.NewGameServiceClient(conn),
		players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn),
		moves:   hangarv1.NewMoveServiceClient(conn),
	}

	// ListGames needs no token: every hosted game, by name, with the
	// names of its message types.
	games, err := c.games.ListGames(ctx, &hangarv1.ListGamesRequest{})
	if err != nil {
		return fmt.Errorf("list games: %w", err)
	}
	for _, g := range games.GetGames() {
		fmt.Printf("game %s: %s, %d to %d seats, options %s\n", g.GetName(), g.GetTitle(), g.GetMinSeats(), g.GetMaxSeats(), g.GetOptionsType())
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

	// The options are the game's own message, packed in an Any.
	opts, err := anypb.New(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
	if err != nil {
		return err
	}
	// Ada takes a seat and a bot the other; the match is full, so it starts.
	created, err := c.matches.CreateMatch(ada, &hangarv1.CreateMatchRequest{
		Game:      "aeroplane",
		SeatCount: 2,
		BotSeats:  1,
		RequestId: rand.Text(),
		Options:   opts,
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
		n, rolls, err := c.spectate(bob, id)
		watched <- result{n, rolls, err}
	}()
	rolls, moves, err := c.play(ada, id, seat)
	if err != nil {
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
	if spec.rolls < int64(rolls) {
		return fmt.Errorf("spectator saw %d rolls, Ada rolled %d times", spec.rolls, rolls)
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
	fmt.Printf("Ada: %d rolls, %d moves\n", rolls, moves)
	fmt.Printf("spectator: saw %d events, 1..%d in order, each once\n", spec.events, m.GetVersion())
	fmt.Printf("spectator: %d of them the die's rolls\n", spec.rolls)
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
// says after each event, and counts its rolls and moves.
func (c client) play(ctx context.Context, id string, seat int32) (rolls, moves int, err error) {
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		return 0, 0, fmt.Errorf("watch: %w", err)
	}
	// acted is the version our last command reached: one command appends
	// several events, and the ones before its last are already history.
	var acted int64
	for {
		w, err := stream.Recv()
		if err == io.EOF {
			return rolls, moves, nil // the stream ends after the match's last event
		}
		if err != nil {
			return 0, 0, fmt.Errorf("watch: %w", err)
		}
		if w.GetVersion() < acted || w.TurnSeat == nil || w.GetTurnSeat() != seat {
			continue
		}
		action, v, err := c.act(ctx, id)
		// ABORTED: the match had moved on past this event (one in the
		// middle of a command); the next event says where it stands.
		if err != nil && status.Code(err) != codes.Aborted {
			return 0, 0, fmt.Errorf("act at version %d: %w", w.GetVersion(), err)
		}
		if err == nil {
			switch {
			case action.MessageIs(&aeroplanev1.Roll{}):
				rolls++
			case action.MessageIs(&aeroplanev1.Move{}):
				moves++
			}
		}
		acted = max(acted, v)
	}
}

// act plays the first of the caller's legal actions, as the server listed
// it, and returns it and the match's version after it (no action and 0
// when there is none to play: the match moved on).
func (c client) act(ctx context.Context, id string) (*anypb.Any, int64, error) {
	la, err := c.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: id})
	if err != nil || len(la.GetActions()) == 0 {
		return nil, 0, err
	}
	action := la.GetActions()[0]
	r, err := c.moves.Act(ctx, &hangarv1.ActRequest{
		MatchId: id, ExpectedVersion: la.GetVersion(), RequestId: rand.Text(), Action: action,
	})
	return action, r.GetVersion(), err
}

type result struct {
	events, rolls int64
	err           error
}

// spectate watches a match from its first event to its end and checks that
// every event comes once, in order. It returns how many it saw, and how
// many of them were the game's ROLLED events.
func (c client) spectate(ctx context.Context, id string) (events, rolls int64, err error) {
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: 0})
	if err != nil {
		return 0, 0, fmt.Errorf("spectator: watch: %w", err)
	}
	for {
		w, err := stream.Recv()
		if err == io.EOF {
			return events, rolls, nil
		}
		if err != nil {
			return events, rolls, fmt.Errorf("spectator: watch: %w", err)
		}
		if seq := w.GetEvent().GetSeq(); seq != events+1 || w.GetVersion() != seq {
			return events, rolls, fmt.Errorf("spectator: event %d (version %d) after event %d", seq, w.GetVersion(), events)
		}
		events++
		// A game's event is its own message in an Any.
		if g := w.GetEvent().GetGame(); g != nil {
			e := &aeroplanev1.Event{}
			if err := g.UnmarshalTo(e); err != nil {
				return events, rolls, fmt.Errorf("spectator: event %d: %w", events, err)
			}
			if e.GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED {
				rolls++
			}
		}
	}
}
