package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/sqlite"
)

// The upgrade test. testdata/stored-before-issue-51.jsonl is every write a
// node of the API before issue 51 (a Game enum, GameOptions, the
// platform's auto_roll) made to its store while it played: players, the
// appends of four matches (Aeroplane Chess against a bot, to its end; a
// private Aeroplane Chess match with auto_roll, left in play; Carcassonne
// against two bots, to its end; an open Carcassonne lobby) with their
// summary rows, options and notices, and a waiting auto_roll ticket; then
// what that node answered about each (its export, its state's notation).
// It was recorded once, by that node's code, and is never regenerated.
//
// TestUpgradeLoadsStoredMatches writes those rows into an empty store of
// each kind, as that node did, then starts today's node on it: every match
// loads, folds to the state it had and exports the same text; the rows
// stored then (summaries, notices, the ticket) read with the games' names
// and options; and the match left in play plays on as it was created, its
// server still rolling the dice.
func TestUpgradeLoadsStoredMatches(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"postgres", "sqlite"} {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var st store.Store
			var cfg server.Config
			if b == "postgres" {
				url := pgtest.Database(t)
				pg, err := postgres.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				st, cfg = pg, server.Config{DatabaseURL: url}
			} else {
				dir := t.TempDir()
				if err := sqlite.Migrate(dir); err != nil {
					t.Fatal(err)
				}
				sq, err := sqlite.Open(ctx, dir)
				if err != nil {
					t.Fatal(err)
				}
				st, cfg = sq, server.Config{DataDir: dir}
			}
			fx := replayStored(t, st)
			st.Close()
			checkUpgraded(t, node(t, cfg), fx)
		})
	}
}

// storedFixture is what the recording says the node of before answered.
type storedFixture struct {
	matches []storedExpect
	ticket  struct {
		Ticket, Player string
	}
}

type storedExpect struct {
	Match, Note, Status, Game, Notation, Export string
	Version                                     int64
	AutoRoll                                    bool  `json:"auto_roll"`
	TurnSeat                                    int32 `json:"turn_seat"`
}

// upgradeToken is the bearer token the replay gives player id.
func upgradeToken(id string) string {
	h := sha256.Sum256([]byte("upgrade\x00" + id))
	return ident.Derived("hgr_", h[:])
}

// replayStored writes the recorded rows into st, as the node of before
// wrote them (each player's token replaced by upgradeToken's, which the
// test knows, and every time moved on to end an hour ago, so that no turn
// clock and no ticket's time has run out since the recording), and returns
// the recorded answers.
func replayStored(t *testing.T, st store.Store) storedFixture {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open("testdata/stored-before-issue-51.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fx storedFixture
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	appends := 0
	var shift time.Duration
	moved := func(at time.Time) time.Time {
		if at.IsZero() {
			return at
		}
		return at.Add(shift)
	}
	for sc.Scan() {
		var line struct {
			Kind   string
			Player struct {
				Player store.Player
				Token  store.Token
			}
			Append struct {
				store.Append
				End *struct{ Seats []store.SeatResult }
			}
			Enqueue      store.Ticket
			Expect       storedExpect
			ExpectTicket struct {
				Ticket, Player string
			} `json:"expect_ticket"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		switch line.Kind {
		case "player":
			p, tok := line.Player.Player, line.Player.Token
			tok.Hash, tok.Expires = ident.Hash(upgradeToken(p.ID)), time.Now().Add(time.Hour)
			if err := st.CreatePlayer(ctx, p, tok); err != nil {
				t.Fatal(err)
			}
		case "append":
			a := line.Append.Append
			if shift == 0 {
				shift = time.Until(a.Time) * -1
				shift -= time.Hour
				shift = shift.Truncate(time.Second)
			}
			a.Time = moved(a.Time)
			a.Match.Created, a.Match.Started, a.Match.Ended = moved(a.Match.Created), moved(a.Match.Started), moved(a.Match.Ended)
			a.Match.Deadline = moved(a.Match.Deadline)
			if e := line.Append.End; e != nil {
				a.End = &store.MatchResult{Seats: e.Seats} // (unrated: the recording has no ratings)
			}
			if _, err := st.Append(ctx, a); err != nil {
				t.Fatalf("append %d: %v", appends+1, err)
			}
			appends++
		case "enqueue":
			tk := line.Enqueue
			tk.Created = moved(tk.Created)
			if _, _, err := st.Enqueue(ctx, tk); err != nil {
				t.Fatal(err)
			}
		case "expect":
			fx.matches = append(fx.matches, line.Expect)
		case "expect_ticket":
			fx.ticket = line.ExpectTicket
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if appends < 200 || len(fx.matches) != 4 || fx.ticket.Ticket == "" {
		t.Fatalf("the recording replayed %d appends, %d matches, ticket %q", appends, len(fx.matches), fx.ticket.Ticket)
	}
	return fx
}

// upgradeClient is the replayed player id on conn.
func upgradeClient(conn *grpc.ClientConn, id string) *client {
	return &client{conn: conn, token: upgradeToken(id), id: id, players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
}

func checkUpgraded(t *testing.T, n *server.Server, fx storedFixture) {
	conn := dial(t, n.Addr())
	players := map[string]*client{}
	for _, id := range []string{"p_ada", "p_bob", "p_cy"} {
		players[id] = upgradeClient(conn, id)
	}
	ada, bob := players["p_ada"], players["p_bob"]
	games := map[string]string{"GAME_AEROPLANE": "aeroplane", "GAME_CARCASSONNE": "carcassonne"}
	var inPlay storedExpect
	for _, want := range fx.matches {
		reader := ada
		if want.Status == "MATCH_STATUS_OPEN" {
			reader = players["p_cy"]
		}
		// The fold: the same version, status and state.
		m := reader.get(t, want.Match)
		if m.GetVersion() != want.Version || m.GetStatus().String() != want.Status || m.GetGame() != games[want.Game] {
			t.Fatalf("%s: %s %s at %d, stored as %s %s at %d", want.Note, m.GetGame(), m.GetStatus(), m.GetVersion(), want.Game, want.Status, want.Version)
		}
		got := aeroState(m).GetNotation() + carcState(m).GetNotation()
		if got != want.Notation {
			t.Fatalf("%s: folds to\n%s\nit was\n%s", want.Note, got, want.Notation)
		}
		if matchAutoRoll(m) != want.AutoRoll {
			t.Fatalf("%s: auto_roll %v, created with %v", want.Note, matchAutoRoll(m), want.AutoRoll)
		}
		// The export, line for line.
		ex, err := reader.history().ExportMatch(reader.ctx(), &hangarv1.ExportMatchRequest{MatchId: want.Match})
		if err != nil {
			t.Fatal(err)
		}
		if ex.GetText() != want.Export {
			gl, wl := strings.Split(ex.GetText(), "\n"), strings.Split(want.Export, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%s: export line %d is %q, it was %q", want.Note, i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("%s: the export has %d lines, it had %d", want.Note, len(gl), len(wl))
		}
		// The stored events, each of its game's type.
		for _, ev := range reader.events(t, want.Match) {
			if c := ev.GetMatchCreated(); c != nil && (c.GetGame() != m.GetGame() || c.GetOptions().GetTypeUrl() != m.GetOptions().GetTypeUrl()) {
				t.Fatalf("%s: created as %v", want.Note, c)
			}
			if a := ev.GetGame(); a != nil && aeroEvent(ev) == nil && carcEvent(ev) == nil {
				t.Fatalf("%s: event %d holds %s", want.Note, ev.GetSeq(), a.GetTypeUrl())
			}
		}
		if want.Status == "MATCH_STATUS_ACTIVE" {
			inPlay = want
		}
	}

	// The summary rows of before: a list shows each match with its game
	// and options (auto_roll folded into the Aeroplane Chess options).
	lm, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, m := range lm.GetMatches() {
		for _, want := range fx.matches {
			if m.GetMatchId() != want.Match {
				continue
			}
			listed++
			if m.GetGame() != games[want.Game] || m.GetOptions() == nil || matchAutoRoll(m) != want.AutoRoll {
				t.Fatalf("%s listed as %s with options %v", want.Note, m.GetGame(), m.GetOptions())
			}
			if games[want.Game] == "carcassonne" && unpack[*carcassonnev1.Options](m.GetOptions()) == nil {
				t.Fatalf("%s listed with options %v", want.Note, m.GetOptions())
			}
		}
	}
	if listed != 3 {
		t.Fatalf("Ada's list has %d of her 3 matches: %v", listed, lm.GetMatches())
	}
	ph, err := ada.history().ListPlayerMatches(ada.ctx(), &hangarv1.ListPlayerMatchesRequest{Game: "carcassonne"})
	if err != nil || len(ph.GetMatches()) != 1 || ph.GetMatches()[0].GetMatch().GetGame() != "carcassonne" || ph.GetMatches()[0].GetPlace() == 0 {
		t.Fatalf("Ada's Carcassonne history: %v, %v", ph, err)
	}

	// The notices of before name their games.
	ns, err := hangarv1.NewNoticeServiceClient(conn).ListNotices(ada.ctx(), &hangarv1.ListNoticesRequest{})
	if err != nil || len(ns.GetNotices()) == 0 {
		t.Fatalf("Ada's notices: %v, %v", ns, err)
	}
	for _, n := range ns.GetNotices() {
		name := n.GetYourTurn().GetGame() + n.GetMatchStarted().GetGame() + n.GetMatchEnded().GetGame() + n.GetInvited().GetGame()
		if n.GetTicketMatched() == nil && name != "aeroplane" && name != "carcassonne" {
			t.Fatalf("notice %v names game %q", n, name)
		}
	}

	// The waiting ticket of before: its game, and auto_roll in its options.
	tk := bob.ticket(t, fx.ticket.Ticket)
	if tk.GetGame() != "aeroplane" || !ticketAutoRoll(tk) || tk.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED {
		t.Fatalf("the stored ticket reads %v", tk)
	}

	// The match in play plays on: its seat moves, and the server rolls the
	// next seat's die in the same commit, as it was created to.
	m := ada.get(t, inPlay.Match)
	mover := ada
	for _, s := range m.GetSeats() {
		if s.GetSeat() == m.GetTurnSeat() && s.GetPlayerId() == bob.id {
			mover = bob
		}
	}
	la, err := mover.moves.ListLegalActions(mover.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: inPlay.Match})
	if err != nil || len(aeroMoves(la.GetActions())) == 0 {
		t.Fatalf("the match in play lists %v, %v", la, err)
	}
	r, err := mover.moves.Act(mover.ctx(), &hangarv1.ActRequest{MatchId: inPlay.Match, ExpectedVersion: m.GetVersion(), RequestId: reqID(),
		Action: la.GetActions()[0]})
	if err != nil {
		t.Fatal(err)
	}
	rolled := false
	for _, ev := range r.GetEvents() {
		rolled = rolled || aeroEvent(ev).GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED
	}
	after := ada.get(t, inPlay.Match)
	if !rolled || (after.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE && aeroState(after).GetPhase() != aeroplanev1.Phase_PHASE_MOVE) {
		t.Fatalf("after a move in the match in play: events %v, phase %v", r.GetEvents(), aeroState(after).GetPhase())
	}
}
