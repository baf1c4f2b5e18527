package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/server"
)

// The leak test. Carcassonne's one secret is the order of the face-down
// stack: the server must draw each tile at the moment it is needed, so that
// no recipient ever sees a tile before the Drew event that drew it exists.
// Hundreds of seeded matches (bots only, people with bots, people only) are
// played over gRPC with seats and spectators recording every response and
// every watched event, and each is checked against the match's stored log:
//
//   - tiles: what a response for version v shows (the tile in hand, the
//     board, the events, the remaining counts) is exactly what the Drew
//     events up to v account for, and the remaining counts come in table
//     order and add up with the board and hand to the box;
//   - each GetMatch state equals the view folded from the log up to its
//     version, and each ListLegalActions equals the legal moves there;
//   - each watch stream is the log, and folded from the start it gives the
//     final state the server reports to that recipient;
//   - a spectator never has legal moves, a seat only on its turn;
//   - ListGames says Carcassonne hides information and names its message
//     types, and every google.protobuf.Any a recipient was sent (options,
//     states, events, legal actions, the board) holds a type ListGames
//     names for its place, and nothing else: its bytes are exactly that
//     message's, no field the type does not declare (a client decoding it
//     by the type it was told sees all there is).

// leakTally counts what was checked.
type leakTally struct {
	mu                                sync.Mutex
	games, events, responses, watched int
	byNotation, byFields              int
}

func (t *leakTally) add(games, events, responses, watched, byNotation, byFields int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.games += games
	t.events += events
	t.responses += responses
	t.watched += watched
	t.byNotation += byNotation
	t.byFields += byFields
}

// tileIndex is the table order of each tile type's name.
var tileIndex = func() map[string]int {
	m := map[string]int{}
	for i, t := range carcassonne.TileTypes() {
		m[t.GetName()] = i
	}
	return m
}()

// box is the tiles of a game under o, by name (the start tile D included).
func box(o *anypb.Any) map[string]int {
	co := unpack[*carcassonnev1.Options](o)
	flier := co.FlyingMachines == nil || co.GetFlyingMachines()
	m := map[string]int{}
	for _, t := range carcassonne.TileTypes() {
		if len(t.GetName()) == 2 && !flier {
			continue
		}
		m[t.GetName()] = int(t.GetCount())
	}
	return m
}

// drawLedger is what the Drew and Discarded events of a log up to each
// version account for.
type drawLedger struct {
	drawn, discarded []map[string]int // by version
	last             []string         // the tile of the latest Drew at or before each version
}

func ledger(log []*hangarv1.Event) (*drawLedger, error) {
	l := &drawLedger{drawn: make([]map[string]int, len(log)+1), discarded: make([]map[string]int, len(log)+1), last: make([]string, len(log)+1)}
	drawn, discarded, last := map[string]int{}, map[string]int{}, ""
	l.drawn[0], l.discarded[0] = drawn, discarded
	for i, ev := range log {
		e := carcEvent(ev)
		switch e.GetKind() {
		case carcassonnev1.EventKind_EVENT_KIND_DREW:
			if _, ok := tileIndex[e.GetTile()]; !ok {
				return nil, fmt.Errorf("event %d draws %q", ev.GetSeq(), e.GetTile())
			}
			drawn = maps(drawn)
			drawn[e.GetTile()]++
			last = e.GetTile()
		case carcassonnev1.EventKind_EVENT_KIND_DISCARDED, carcassonnev1.EventKind_EVENT_KIND_PLACED:
			if e.GetTile() != last || last == "" {
				return nil, fmt.Errorf("event %d (%s) shows tile %q; the latest draw before it was %q", ev.GetSeq(), e.GetNotation(), e.GetTile(), last)
			}
			if e.GetKind() == carcassonnev1.EventKind_EVENT_KIND_DISCARDED {
				discarded = maps(discarded)
				discarded[e.GetTile()]++
			}
			last = "" // placed or gone: the next draw names the next
		default:
			if e.GetTile() != "" {
				return nil, fmt.Errorf("event %d (%s) names tile %q", ev.GetSeq(), e.GetNotation(), e.GetTile())
			}
		}
		l.drawn[i+1], l.discarded[i+1], l.last[i+1] = drawn, discarded, last
	}
	return l, nil
}

func maps(m map[string]int) map[string]int {
	n := make(map[string]int, len(m)+1)
	for k, v := range m {
		n[k] = v
	}
	return n
}

// checkTiles checks the tiles a state for version v shows against what the
// draws up to v account for.
func (l *drawLedger) checkTiles(st *carcassonnev1.State, v int64, inBox map[string]int) error {
	drawn, discarded := l.drawn[v], l.discarded[v]
	shown := map[string]int{}
	if h := st.GetTile(); h != nil {
		if st.GetPhase() != carcassonnev1.Phase_PHASE_PLACE || h.GetName() != l.last[v] {
			return fmt.Errorf("hand %s in phase %v at %d; the tile drawn and not yet placed is %q", h.GetName(), st.GetPhase(), v, l.last[v])
		}
		shown[h.GetName()]++
	} else if st.GetPhase() == carcassonnev1.Phase_PHASE_PLACE {
		return fmt.Errorf("phase place with no tile at %d", v)
	}
	b := st.GetBoard()
	if len(b) == 0 || b[0].GetTile() != "D" || b[0].GetX() != 0 || b[0].GetY() != 0 {
		return fmt.Errorf("board does not start with D at 0,0")
	}
	for _, t := range b[1:] {
		shown[t.GetTile()]++
	}
	for t, n := range discarded {
		shown[t] += n
	}
	for t := range tileIndex {
		if shown[t] != drawn[t] {
			return fmt.Errorf("at %d: %d %s on board, in hand or discarded; the draws up to then drew %d", v, shown[t], t, drawn[t])
		}
	}
	left, prev := 0, -1
	rem := map[string]int{}
	for _, c := range st.GetRemaining() {
		i, ok := tileIndex[c.GetTile()]
		if !ok || i <= prev || c.GetCount() <= 0 {
			return fmt.Errorf("remaining %v is not in table order with positive counts", st.GetRemaining())
		}
		prev = i
		rem[c.GetTile()] = int(c.GetCount())
		left += int(c.GetCount())
	}
	if left != int(st.GetTilesLeft()) {
		return fmt.Errorf("remaining adds up to %d, tiles_left %d", left, st.GetTilesLeft())
	}
	for t := range tileIndex {
		start := 0
		if t == "D" {
			start = 1
		}
		if rem[t]+drawn[t]+start != inBox[t] {
			return fmt.Errorf("at %d: %s: %d remaining + %d drawn + %d start, box has %d", v, t, rem[t], drawn[t], start, inBox[t])
		}
	}
	return nil
}

// checkCarcRecipients checks everything each recipient of a played match
// was sent against its log (see the file comment) and tallies it.
func checkCarcRecipients(p *carcPlayed, tally *leakTally) error {
	opts := p.final.GetOptions()
	states, err := foldCarc(opts, p.log)
	if err != nil {
		return err
	}
	l, err := ledger(p.log)
	if err != nil {
		return err
	}
	inBox := box(opts)
	last := int64(len(p.log))
	responses, watched, byNotation, byFields := 0, 0, 0, 0
	for _, rec := range p.recs {
		// The watch stream is the log; folded, it is the final state this
		// recipient is told.
		if len(rec.watched) != len(p.log) {
			return fmt.Errorf("%s watched %d events, log has %d", rec.name, len(rec.watched), len(p.log))
		}
		for i, ev := range rec.watched {
			if !proto.Equal(ev, p.log[i]) {
				return fmt.Errorf("%s watched event %d = %v, log has %v", rec.name, i+1, ev, p.log[i])
			}
		}
		folded, err := foldCarc(opts, rec.watched)
		if err != nil {
			return fmt.Errorf("%s: folding the watch stream: %w", rec.name, err)
		}
		fin := rec.gets[len(rec.gets)-1]
		if fin.GetVersion() != last {
			return fmt.Errorf("%s's last GetMatch is at %d, the log ends at %d", rec.name, fin.GetVersion(), last)
		}
		if got, want := folded[last].View(rec.seat).(*carcassonnev1.State).GetNotation(), carcState(fin).GetNotation(); got != want {
			return fmt.Errorf("%s: the watch stream folds to\n%s\nthe server reports\n%s", rec.name, got, want)
		}
		watched += len(rec.watched)

		for _, m := range rec.gets {
			v := m.GetVersion()
			if v < 0 || v > last {
				return fmt.Errorf("%s: GetMatch at version %d of %d", rec.name, v, last)
			}
			st := carcState(m)
			if states[v] == nil {
				if st != nil {
					return fmt.Errorf("%s: a state at %d, before the start", rec.name, v)
				}
				continue
			}
			want := states[v].View(rec.seat).(*carcassonnev1.State)
			if !proto.Equal(st, want) {
				return fmt.Errorf("%s: GetMatch at %d:\n%v\nthe log folds to\n%v", rec.name, v, st, want)
			}
			if err := l.checkTiles(st, v, inBox); err != nil {
				return fmt.Errorf("%s: GetMatch: %w", rec.name, err)
			}
			if err := legalOnlyOnTurn(rec.seat, states[v], len(st.GetLegalMoves())); err != nil {
				return fmt.Errorf("%s: GetMatch at %d: %w", rec.name, v, err)
			}
		}
		for _, lm := range rec.legal {
			v := lm.GetVersion()
			if v < 1 || v > last || states[v] == nil {
				return fmt.Errorf("%s: ListLegalActions at %d", rec.name, v)
			}
			want := states[v].Legal(rec.seat)
			got := carcMoves(lm.GetActions())
			if len(want) != len(lm.GetActions()) || len(got) != len(want) {
				return fmt.Errorf("%s: ListLegalActions at %d has %d actions, the log's state %d moves", rec.name, v, len(lm.GetActions()), len(want))
			}
			for i := range want {
				if !proto.Equal(want[i], got[i]) {
					return fmt.Errorf("%s: ListLegalActions at %d: move %d = %v, want %v", rec.name, v, i, got[i], want[i])
				}
			}
			if err := legalOnlyOnTurn(rec.seat, states[v], len(lm.GetActions())); err != nil {
				return fmt.Errorf("%s: ListLegalActions at %d: %w", rec.name, v, err)
			}
		}
		if err := checkPayloads(rec); err != nil {
			return fmt.Errorf("%s: %w", rec.name, err)
		}
		for _, mr := range rec.moves {
			evs := mr.GetEvents()
			if len(evs) == 0 || evs[len(evs)-1].GetSeq() != mr.GetVersion() || mr.GetVersion() > last {
				return fmt.Errorf("%s: Act response at %d with %d events", rec.name, mr.GetVersion(), len(evs))
			}
			for _, ev := range evs {
				if !proto.Equal(ev, p.log[ev.GetSeq()-1]) {
					return fmt.Errorf("%s: Act response event %v, log has %v", rec.name, ev, p.log[ev.GetSeq()-1])
				}
			}
		}
		responses += len(rec.gets) + len(rec.legal) + len(rec.moves) + len(rec.games) + len(rec.boards)
		byNotation += rec.byNotation
		byFields += rec.byFields
	}
	tally.add(1, len(p.log), responses, watched, byNotation, byFields)
	return nil
}

// checkPayloads checks what ListGames told rec, and every Any rec was sent
// against it: the type ListGames names for its place, and bytes that are
// exactly that message's (re-marshalled, the same bytes: no unknown field,
// nothing a client decoding the type would not see).
func checkPayloads(rec *recipient) error {
	if len(rec.games) == 0 {
		return fmt.Errorf("no ListGames")
	}
	var info *hangarv1.GameInfo
	for _, lg := range rec.games {
		for _, g := range lg.GetGames() {
			if g.GetName() == "carcassonne" {
				info = g
			}
		}
		if !proto.Equal(lg, rec.games[0]) {
			return fmt.Errorf("ListGames answered %v, then %v", rec.games[0], lg)
		}
	}
	if info == nil || !info.GetHiddenInformation() || info.GetMinSeats() != 2 || info.GetMaxSeats() != 5 ||
		info.GetStateType() != "hangar.carcassonne.v1.State" || info.GetEventType() != "hangar.carcassonne.v1.Event" ||
		info.GetOptionsType() != "hangar.carcassonne.v1.Options" || info.GetBoardType() != "hangar.carcassonne.v1.Board" ||
		strings.Join(info.GetActionTypes(), ",") != "hangar.carcassonne.v1.Move" {
		return fmt.Errorf("ListGames describes Carcassonne as %v", info)
	}
	check := func(where string, a *anypb.Any, types ...string) error {
		if a == nil {
			return nil
		}
		name := strings.TrimPrefix(a.GetTypeUrl(), "type.googleapis.com/")
		if !slices.Contains(types, name) {
			return fmt.Errorf("%s holds %q; ListGames names %v there", where, a.GetTypeUrl(), types)
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
		if err != nil {
			return err
		}
		m := mt.New().Interface()
		if err := proto.Unmarshal(a.GetValue(), m); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if len(m.ProtoReflect().GetUnknown()) > 0 {
			return fmt.Errorf("%s: %s has bytes its type does not declare: %x", where, name, m.ProtoReflect().GetUnknown())
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil || !bytes.Equal(again, a.GetValue()) {
			return fmt.Errorf("%s: %s re-marshals to %x, was sent as %x", where, name, again, a.GetValue())
		}
		return nil
	}
	checkEvents := func(where string, evs []*hangarv1.Event) error {
		for _, ev := range evs {
			if err := check(where+" event", ev.GetGame(), info.GetEventType()); err != nil {
				return err
			}
			if err := check(where+" match_created options", ev.GetMatchCreated().GetOptions(), info.GetOptionsType()); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range rec.gets {
		if m.GetGame() != "carcassonne" {
			return fmt.Errorf("GetMatch names game %q", m.GetGame())
		}
		if err := check("GetMatch state", m.GetState(), info.GetStateType()); err != nil {
			return err
		}
		if err := check("GetMatch options", m.GetOptions(), info.GetOptionsType()); err != nil {
			return err
		}
	}
	for _, lm := range rec.legal {
		for _, a := range lm.GetActions() {
			if err := check("ListLegalActions", a, info.GetActionTypes()...); err != nil {
				return err
			}
		}
	}
	for _, mr := range rec.moves {
		if err := checkEvents("Act", mr.GetEvents()); err != nil {
			return err
		}
	}
	if err := checkEvents("WatchMatch", rec.watched); err != nil {
		return err
	}
	for _, b := range rec.boards {
		if err := check("GetBoard", b.GetBoard(), info.GetBoardType()); err != nil {
			return err
		}
	}
	return nil
}

// legalOnlyOnTurn: a spectator never has legal moves; a seat has them
// exactly when it is to play.
func legalOnlyOnTurn(seat int32, s game.State, n int) error {
	turn, ok := s.Turn()
	mine := seat >= 0 && ok && turn == seat
	if mine != (n > 0) {
		return fmt.Errorf("recipient %d (turn %d, over %v) has %d legal moves", seat, turn, !ok, n)
	}
	return nil
}

// TestCarcassonneLeaksNoTile plays 20 seeded matches, half on each store,
// concurrently on one node per store; TestLongCarcassonneLeaksNoTile plays
// 200 with the long tests (HANGAR_TEST_LONG=1).
func TestCarcassonneLeaksNoTile(t *testing.T) {
	t.Parallel()
	carcassonneLeaksNoTile(t, 10)
}

func TestLongCarcassonneLeaksNoTile(t *testing.T) {
	longTest(t)
	// 200 games, CPU-bound (about one a second on 2 CPUs, whatever the
	// concurrency), under a 6-minute deadline.
	oneCPUBound(t)
	carcassonneLeaksNoTile(t, 100)
}

func carcassonneLeaksNoTile(t *testing.T, perStore int) {
	var total leakTally
	t.Cleanup(func() {
		t.Logf("leak test: %d games, %d events, %d responses and %d watched events checked; %d moves sent by notation, %d by fields",
			total.games, total.events, total.responses, total.watched, total.byNotation, total.byFields)
	})
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		pool := carcClients(t, n.Addr(), "L", 12)
		// On a 2-CPU machine the 200 games take about 2.5 minutes (the node
		// plays about one Carcassonne game a second whatever the
		// concurrency); 20 take about 15 s.
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		sem := make(chan struct{}, 50)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		for i := range perStore {
			r := rand.New(rand.NewPCG(uint64(i), 99))
			seats := int32(2 + i%4)
			people := 0
			switch i % 4 { // half bots only (fast: no client in the loop)
			case 2: // people with bots
				people = 1 + r.IntN(int(seats)-1)
			case 3: // people only
				people = int(seats)
			}
			order := r.Perm(len(pool))
			var cs []*client
			for _, k := range order {
				cs = append(cs, pool[k])
			}
			spectators := 1
			if people == 0 {
				spectators = 2 // the observe-only creator and one more
			}
			var opts *anypb.Any
			if i%10 == 9 {
				opts = carcOptions(&carcassonnev1.Options{FlyingMachines: proto.Bool(false)})
			}
			s := carcSpec{seats: seats, people: cs[:people], spectators: cs[people : people+spectators], seed: uint64(i), every: 6, createdWith: opts}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				fail := func(err error) {
					mu.Lock()
					defer mu.Unlock()
					failures = append(failures, fmt.Sprintf("game %d (%d seats, %d people): %v", i, seats, people, err))
					cancel()
				}
				p, err := playCarc(ctx, s)
				if err != nil {
					fail(err)
					return
				}
				if err := checkCarcLog(p); err != nil {
					fail(err)
					return
				}
				if err := checkCarcRecipients(p, &total); err != nil {
					fail(err)
				}
			}()
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatal(strings.Join(failures[:min(5, len(failures))], "\n"))
		}
	})
}
