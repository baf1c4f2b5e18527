package carcassonne

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustState(t *testing.T, text string) State {
	t.Helper()
	s, err := ParseState(text)
	if err != nil {
		t.Fatalf("ParseState(%q): %v", text, err)
	}
	return s
}

// run plays moves (notation) for the seat to move and returns the final state, every event
// in notation, and the error of the first move that failed (playing stops there).
func run(t *testing.T, s State, moves ...string) (State, []string, error) {
	t.Helper()
	var out []string
	for _, ms := range moves {
		m, err := ParseMove(ms)
		if err != nil {
			t.Fatalf("ParseMove(%q): %v", ms, err)
		}
		n, evs, err := s.Play(s.Turn(), m)
		if err != nil {
			return s, out, err
		}
		for _, e := range evs {
			out = append(out, e.String())
		}
		s = n
	}
	return s, out, nil
}

const stack = "stack=U5"

// Each case starts from a state in notation, plays moves, and checks the events (all of them,
// in order), the error of the last move, or the state after.
var ruleCases = []struct {
	name   string // the rule exercised
	before string
	moves  []string
	events []string // nil: not checked
	err    error
	after  string // "": not checked
}{
	// §2.3 placement
	{
		name:   "placement must touch a tile orthogonally (diagonal contact does not count)",
		before: "players=2 opts=- phase=place turn=0 tile=B scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 1,1 r0"},
		err:    ErrPlacement,
	},
	{
		name:   "placement on a taken cell",
		before: "players=2 opts=- phase=place turn=0 tile=B scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 0,0 r0"},
		err:    ErrPlacement,
	},
	{
		name:   "every touching side must match: a field side against the start tile's road",
		before: "players=2 opts=- phase=place turn=0 tile=B scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r0"},
		err:    ErrPlacement,
	},
	{
		name:   "a cell between two tiles must match both: K r1 fits the field to the south, not the one to the west",
		before: "players=2 opts=- phase=place turn=0 tile=K scores=0,0 " + stack + " board=D@0,0r0;E@0,-1r2;U@1,0r0 followers=-",
		moves:  []string{"place 1,-1 r1"},
		err:    ErrPlacement,
	},
	{
		name:   "placing is the drawn tile's owner's move",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"pass"},
		err:    ErrWrongPhase,
	},
	{
		name:   "a legal placement, then the follower step",
		before: "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"draw U", "place 1,0 r2"},
		events: []string{"drew 1 U", "placed 1 U 1,0 r2"},
		after:  "players=2 opts=- phase=follower turn=1 tile=- scores=0,0 stack=U4 board=D@0,0r0;U@1,0r2 followers=-",
	},
	{
		name:   "a tile not in the stack cannot be drawn",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"draw B"},
		err:    ErrNotInStack,
	},
	// §2.3 / decision 4: discard and redraw
	{
		name:   "a tile that fits nowhere is discarded and the same player draws again",
		before: "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 stack=C1,U1 board=D@0,0r0;E@0,-1r2 followers=-",
		moves:  []string{"draw C"},
		events: []string{"drew 1 C", "discarded 1 C"},
		after:  "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 stack=U1 board=D@0,0r0;E@0,-1r2 followers=-",
	},
	{
		name:   "a discard that empties the stack ends the game with final scoring",
		before: "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 stack=C1 board=D@0,0r0;F@0,-1r1;E@0,-2r2 followers=0@0,0f1",
		moves:  []string{"draw C"},
		events: []string{"drew 1 C", "discarded 1 C", "scored 0 1 road 0,0 f1 final", "ended 1"},
		after:  "players=2 opts=- phase=over turn=1 tile=- scores=1,0 stack=- board=D@0,0r0;F@0,-1r1;E@0,-2r2 followers=0@0,0f1",
	},
	// §2.4 followers
	{
		name:   "the follower options of U next to the start tile: road (joined, free), both fields, pass",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r0", "deploy f0"},
		events: []string{"placed 0 U 1,0 r0", "deployed 0 1,0 f0", "turn 1"},
	},
	{
		name:   "a road joined to an occupied road is occupied",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 followers=1@0,0f1",
		moves:  []string{"place 1,0 r0", "deploy f0"},
		err:    ErrOccupied,
	},
	{
		name:   "own followers block too",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 followers=0@0,0f3",
		moves:  []string{"place 0,1 r0", "deploy f1"},
		err:    ErrOccupied,
	},
	{
		name:   "a farmer on a free field of the placed tile",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 followers=0@0,0f2",
		moves:  []string{"place 1,0 r0", "deploy f2"},
		events: []string{"placed 0 U 1,0 r0", "deployed 0 1,0 f2", "turn 1"},
	},
	{
		name:   "no farmers when they are switched off",
		before: "players=2 opts=nofarmers phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r0", "deploy f2"},
		err:    ErrNoFarmers,
	},
	{
		name:   "a monk on the cloister",
		before: "players=2 opts=- phase=place turn=0 tile=B scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 0,1 r0", "deploy f0"},
		events: []string{"placed 0 B 0,1 r0", "deployed 0 0,1 f0", "turn 1"},
	},
	{
		name:   "only features of the placed tile",
		before: "players=2 opts=- phase=place turn=0 tile=B scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 0,1 r0", "deploy f2"},
		err:    ErrNoSpot,
	},
	{
		name: "with an empty supply and no flying machine the placement ends the turn",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 " + stack + " board=D@0,0r0 " +
			"followers=0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f1;0@0,0f2;0@0,0f3",
		moves:  []string{"place 1,0 r0"},
		events: []string{"placed 0 U 1,0 r0", "passed 0", "turn 1"},
	},
	// §2.6 completion and scoring
	{
		name:   "a road closed at both ends by junctions scores 1 per tile; a tie shares the full points",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5,W1 board=D@0,0r0;W@-1,0r0 followers=0@-1,0f0;1@0,0f1",
		moves:  []string{"draw W", "place 1,0 r0", "pass"},
		events: []string{"drew 0 W", "placed 0 W 1,0 r0", "passed 0", "scored 0 3 road 0,0 f1", "scored 1 3 road 0,0 f1",
			"returned 0 -1,0 f0", "returned 1 0,0 f1", "turn 1"},
		after: "players=2 opts=- phase=draw turn=1 tile=- scores=3,3 stack=U5 board=D@0,0r0;W@-1,0r0;W@1,0r0 followers=-",
	},
	{
		name:   "the majority takes all; the minority scores nothing but gets its follower back",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5,W1 board=D@0,0r0;W@-1,0r0 followers=0@-1,0f0;0@0,0f1;1@0,0f1",
		moves:  []string{"draw W", "place 1,0 r0", "pass"},
		events: []string{"drew 0 W", "placed 0 W 1,0 r0", "passed 0", "scored 0 3 road 0,0 f1",
			"returned 0 -1,0 f0", "returned 0 0,0 f1", "returned 1 0,0 f1", "turn 1"},
	},
	{
		name:   "a city of three tiles with a pennant scores 2 per tile + 2 per pennant; joining it is occupied",
		before: "players=2 opts=- phase=place turn=0 tile=E scores=0,0 " + stack + " board=D@0,0r0;F@0,-1r1 followers=1@0,-1f0",
		moves:  []string{"place 0,-2 r2", "deploy f0"},
		err:    ErrOccupied,
	},
	{
		name:   "city completion scores for the other player",
		before: "players=2 opts=- phase=place turn=0 tile=E scores=0,0 " + stack + " board=D@0,0r0;F@0,-1r1 followers=1@0,-1f0",
		moves:  []string{"place 0,-2 r2", "pass"},
		events: []string{"placed 0 E 0,-2 r2", "passed 0", "scored 1 8 city 0,0 f0", "returned 1 0,-1 f0", "turn 1"},
	},
	{
		name:   "a follower put on a feature this tile completes scores and returns the same turn",
		before: "players=2 opts=- phase=place turn=0 tile=E scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 0,-1 r2", "deploy f0"},
		events: []string{"placed 0 E 0,-1 r2", "deployed 0 0,-1 f0", "scored 0 4 city 0,0 f0", "returned 0 0,-1 f0", "turn 1"},
		after:  "players=2 opts=- phase=draw turn=1 tile=- scores=4,0 stack=U5 board=D@0,0r0;E@0,-1r2 followers=-",
	},
	{
		name:   "a completed feature without followers scores nothing",
		before: "players=2 opts=- phase=place turn=0 tile=E scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 0,-1 r2", "pass"},
		events: []string{"placed 0 E 0,-1 r2", "passed 0", "turn 1"},
	},
	{
		name: "a cloister surrounded on all 8 cells scores 9; two monks tie and both get 9",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5,V1 board=D@0,0r0;U@-1,0r0;U@1,0r0;B@0,1r0;B@-1,1r0;B@1,1r0;B@-1,2r0;V@0,2r3 " +
			"followers=0@0,1f0;1@0,1f0",
		moves: []string{"draw V", "place 1,2 r0", "pass"},
		events: []string{"drew 0 V", "placed 0 V 1,2 r0", "passed 0", "scored 0 9 cloister 0,1 f0", "scored 1 9 cloister 0,1 f0",
			"returned 0 0,1 f0", "returned 1 0,1 f0", "turn 1"},
	},
	{
		name:   "a road loop without ends is complete: four curves score 4",
		before: "players=2 opts=- phase=place turn=1 tile=V scores=0,0 " + stack + " board=D@0,0r0;V@0,1r3;V@1,1r0;V@0,2r2 followers=0@1,1f0",
		moves:  []string{"place 1,2 r1", "pass"},
		events: []string{"placed 1 V 1,2 r1", "passed 1", "scored 0 4 road 0,1 f0", "returned 0 1,1 f0", "turn 0"},
	},
	{
		name: "a tile with two segments of one city counts once: a ring through both cities of I scores 5 tiles",
		before: "players=2 opts=- phase=place turn=1 tile=I scores=0,0 " + stack + " board=D@0,0r0;R@0,-1r1;N@0,-2r2;N@1,-2r3 " +
			"followers=0@0,0f0",
		moves:  []string{"place 1,-1 r0", "pass"},
		events: []string{"placed 1 I 1,-1 r0", "passed 1", "scored 0 10 city 0,0 f0", "returned 0 0,0 f0", "turn 0"},
	},
	// §3 flights (the spec's worked example and each outcome)
	{
		name:   "a flier tile offers deploy, fly and pass",
		before: "players=2 opts=- phase=place turn=0 tile=FE scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r0", "fly 1"},
		events: []string{"placed 0 FE 1,0 r0", "flew 0 1 0,0"},
		after:  "players=2 opts=- phase=landing turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=- target=0,0",
	},
	{
		name:   "landing is mandatory: pass is refused",
		before: "players=2 opts=- phase=landing turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;FE@1,0r0 followers=- target=0,0",
		moves:  []string{"pass"},
		err:    ErrMustLand,
	},
	{
		name:   "never on a field",
		before: "players=2 opts=- phase=landing turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;FE@1,0r0 followers=- target=0,0",
		moves:  []string{"land f2"},
		err:    ErrNoSpot,
	},
	{
		name:   "landing on an occupied road is allowed",
		before: "players=2 opts=- phase=landing turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;FE@1,0r0 followers=1@0,0f1 target=0,0",
		moves:  []string{"land f1"},
		events: []string{"landed 0 0,0 f1", "turn 1"},
		after:  "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=1@0,0f1;0@0,0f1",
	},
	{
		name:   "a flight to an empty cell keeps the follower in supply and ends the follower step",
		before: "players=2 opts=- phase=follower turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;FE@1,0r0 followers=-",
		moves:  []string{"fly 2"},
		events: []string{"flew 0 2 -1,0", "turn 1"},
		after:  "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=-",
	},
	{
		name:   "a flight to a tile with only completed features and fields lands nowhere",
		before: "players=2 opts=- phase=place turn=0 tile=FB scores=0,0 " + stack + " board=D@0,0r0;E@0,-1r2 followers=-",
		moves:  []string{"place 1,-1 r0", "fly 1"},
		events: []string{"placed 0 FB 1,-1 r0", "flew 0 1 0,-1", "turn 1"},
	},
	{
		name:   "the machine turns with the tile: FD (west) at r1 points north",
		before: "players=2 opts=- phase=place turn=0 tile=FD scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r1", "fly 3"},
		events: []string{"placed 0 FD 1,0 r1", "flew 0 3 1,-3", "turn 1"},
	},
	{
		name:   "FA at r1 points north-east",
		before: "players=2 opts=- phase=place turn=0 tile=FA scores=0,0 " + stack + " board=D@0,0r0 followers=-",
		moves:  []string{"place 0,1 r1", "fly 1"},
		events: []string{"placed 0 FA 0,1 r1", "flew 0 1 1,0", "turn 1"},
	},
	{
		name: "a feature the flier tile completes is no landing target; the completed road scores as usual",
		before: "players=2 opts=- phase=place turn=0 tile=FH scores=0,0 " + stack + " board=D@0,0r0;W@-1,0r0;U@0,1r0;X@1,1r0 " +
			"followers=1@-1,0f0",
		moves:  []string{"place 1,0 r0", "fly 1", "land f1"},
		err:    ErrNoSpot,
		events: []string{"placed 0 FH 1,0 r0", "flew 0 1 0,0"},
	},
	{
		name: "landing on the open city next to a completed road",
		before: "players=2 opts=- phase=place turn=0 tile=FH scores=0,0 " + stack + " board=D@0,0r0;W@-1,0r0;U@0,1r0;X@1,1r0 " +
			"followers=1@-1,0f0",
		moves: []string{"place 1,0 r0", "fly 1", "land f0"},
		events: []string{"placed 0 FH 1,0 r0", "flew 0 1 0,0", "landed 0 0,0 f0", "scored 1 4 road 0,0 f1",
			"returned 1 -1,0 f0", "turn 1"},
	},
	{
		name:   "a monk flown onto an occupied cloister",
		before: "players=2 opts=- phase=place turn=1 tile=FB scores=0,0 " + stack + " board=D@0,0r0;B@0,1r0 followers=0@0,1f0",
		moves:  []string{"place 1,1 r0", "fly 1", "land f0"},
		events: []string{"placed 1 FB 1,1 r0", "flew 1 1 0,1", "landed 1 0,1 f0", "turn 0"},
	},
	{
		name: "no flight without a follower in supply: with nothing else to decide the turn ends",
		before: "players=2 opts=- phase=place turn=0 tile=FE scores=0,0 " + stack + " board=D@0,0r0 " +
			"followers=0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f1;0@0,0f2;0@0,0f3",
		moves:  []string{"place 1,0 r0"},
		events: []string{"placed 0 FE 1,0 r0", "passed 0", "turn 1"},
	},
	{
		name:   "the flight options are listed with the normal spots",
		before: "players=2 opts=- phase=follower turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;FE@1,0r0 followers=-",
		moves:  []string{"deploy f1"},
		events: []string{"deployed 0 1,0 f1", "turn 1"},
	},
	{
		name:   "fly needs a roll of 1 to 3",
		before: "players=2 opts=- phase=follower turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;FE@1,0r0 followers=-",
		moves:  []string{"fly 4"},
		err:    ErrRoll,
	},
	{
		name:   "only a flier tile flies",
		before: "players=2 opts=- phase=follower turn=0 tile=- scores=0,0 " + stack + " board=D@0,0r0;U@1,0r0 followers=-",
		moves:  []string{"fly 1"},
		err:    ErrNoMachine,
	},
	// §2.7 end of game
	{
		name: "final scoring: incomplete city 1 per tile + 1 per pennant, road 1 per tile, cloister 1 + neighbours; a farm without completed cities gives nothing",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=10,4 stack=U1 board=D@0,0r0;F@0,-1r1;B@0,1r0 " +
			"followers=0@0,-1f0;1@0,0f1;1@0,1f0;0@0,-1f1",
		moves: []string{"draw U", "place 1,0 r0", "pass"},
		events: []string{"drew 0 U", "placed 0 U 1,0 r0", "passed 0", "scored 0 3 city 0,0 f0 final",
			"scored 1 3 cloister 0,1 f0 final", "scored 1 2 road 0,0 f1 final", "ended 0"},
		after: "players=2 opts=- phase=over turn=0 tile=- scores=13,9 stack=- board=D@0,0r0;F@0,-1r1;B@0,1r0;U@1,0r0 " +
			"followers=0@0,-1f0;1@0,0f1;1@0,1f0;0@0,-1f1",
	},
	{
		name: "farms: 3 per completed city bordering the farm, each city once per farm; tied farmers share",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=B1 board=D@0,0r0;H@0,1r1;E@1,1r3;E@-1,1r1;U@1,0r0 " +
			"followers=0@0,0f3;1@1,1f1",
		moves:  []string{"draw B", "place 0,2 r0", "pass"},
		events: []string{"drew 0 B", "placed 0 B 0,2 r0", "passed 0", "scored 0 6 farm 0,0 f3 final", "scored 1 6 farm 0,0 f3 final", "ended 0"},
	},
	{
		name: "farms: a city bordering two farms counts for each; farmer majority",
		before: "players=3 opts=- phase=draw turn=2 tile=- scores=0,0,0 stack=U1 board=D@0,0r0;E@0,-1r2 " +
			"followers=0@0,0f2;2@0,0f2;2@0,0f2;1@0,-1f1",
		moves:  []string{"draw U", "place 1,0 r0", "pass"},
		events: []string{"drew 2 U", "placed 2 U 1,0 r0", "passed 2", "scored 1 3 farm 0,-1 f1 final", "scored 2 3 farm 0,0 f2 final", "ended 2"},
	},
	{
		name:   "farms score nothing when farmers are off",
		before: "players=2 opts=nofarmers phase=draw turn=0 tile=- scores=0,0 stack=U1 board=D@0,0r0;E@0,-1r2 followers=-",
		moves:  []string{"draw U", "place 1,0 r0", "pass"},
		events: []string{"drew 0 U", "placed 0 U 1,0 r0", "passed 0", "ended 0"},
	},
	{
		name:   "no move after the end",
		before: "players=2 opts=- phase=over turn=0 tile=- scores=0,0 stack=- board=D@0,0r0 followers=-",
		moves:  []string{"draw U"},
		err:    ErrGameOver,
	},
}

func TestRules(t *testing.T) {
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			s := mustState(t, c.before)
			if got := s.String(); got != c.before {
				t.Fatalf("notation does not round-trip:\n got %s\nwant %s", got, c.before)
			}
			after, evs, err := run(t, s, c.moves...)
			if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if c.events != nil && !slices.Equal(evs, c.events) {
				t.Errorf("events\n got %s\nwant %s", strings.Join(evs, " | "), strings.Join(c.events, " | "))
			}
			if c.after != "" && after.String() != c.after {
				t.Errorf("after\n got %s\nwant %s", after, c.after)
			}
		})
	}
}

func TestFollowerOptionsListing(t *testing.T) {
	s := mustState(t, "players=2 opts=- phase=follower turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=1@0,0f1")
	// FE: P:W f0, R:EW f1 (joined to the occupied start road), fields f2 (north) and f3 (south).
	// Options follow the feature order, Pass last.
	want := []FollowerMove{{Fly, 0}, {Deploy, 2}, {Deploy, 3}, {Pass, 0}}
	if got := s.LegalFollowerMoves(); !slices.Equal(got, want) {
		t.Errorf("options %v, want %v", got, want)
	}
}
