package aeroplane

import (
	"fmt"
	"math/bits"
	"strings"
	"sync"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
	"google.golang.org/protobuf/proto"
)

// layout is the board as drawn in the rules spec (§1.7, from IACJ/FlyingChess's square
// coordinates): two-digit numbers are loop squares, A*..D* the launch areas of seats 0..3,
// A1..D5 their home columns (p51..p55), ## the centre, and aa..dd the hangars, which the spec
// leaves off the board, in each seat's corner. Every token is two characters wide, so a
// character is one unit of the drawing grid and a square is two units wide and one high.
const layout = `
                                                  C*
      bb                  21  22  23  24  25                      cc
                      20                      26
                    19            C1            27
                    18            C2            28
  B*                  17          C3          29
          14  15                                      31  32
      13          16              C4              30          33
    12                            C5                            34
    11                                                          35
    10    B1  B2  B3  B4  B5      ##      D5  D4  D3  D2  D1    36
    09                                                          37
    08                            A5                            38
      07          04              A4              42          39
          06  05                                      41  40
                      03          A3          43                  D*
                    02            A2            44
                    01            A1            45
      aa              00                      46              dd
                          51  50  49  48  47
                  A*
`

var colours = [engine.MaxSeats]string{"red", "yellow", "blue", "green"}

// board is the Board message, built once from layout.
var board = sync.OnceValue(func() *aeroplanev1.Board {
	b, err := buildBoard(layout)
	if err != nil {
		panic("aeroplane board layout: " + err.Error())
	}
	return b
})

// Board implements game.Game: the squares of spec §1 on the layout's grid.
func (Game) Board() proto.Message { return proto.Clone(board()) }

func buildBoard(art string) (*aeroplanev1.Board, error) {
	b := &aeroplanev1.Board{}
	at := map[string][2]int32{} // token -> x, y
	for y, line := range strings.Split(strings.TrimPrefix(art, "\n"), "\n") {
		for x := 0; x < len(line); x++ {
			if line[x] == ' ' {
				continue
			}
			end := x + 1
			for end < len(line) && line[end] != ' ' {
				end++
			}
			tok := line[x:end]
			if _, dup := at[tok]; dup {
				return nil, fmt.Errorf("%q twice", tok)
			}
			if len(tok) != 2 {
				return nil, fmt.Errorf("%q is not two characters wide", tok)
			}
			// Character i spans [i, i+1) of the grid: a token at x is centred on x+1.
			at[tok] = [2]int32{int32(x + 1), int32(y)}
			b.Width = max(b.Width, int32(end))
			b.Height = int32(y + 1)
			x = end
		}
	}
	add := func(tok string, sq *aeroplanev1.Square) (int32, error) {
		pos, ok := at[tok]
		if !ok {
			return 0, fmt.Errorf("no square %q", tok)
		}
		delete(at, tok)
		sq.Index = int32(len(b.Squares))
		sq.X, sq.Y = pos[0], pos[1]
		b.Squares = append(b.Squares, sq)
		return sq.Index, nil
	}
	loop := make([]int32, engine.LoopLen)
	for l := range engine.LoopLen {
		sq := &aeroplanev1.Square{Kind: aeroplanev1.SquareKind_SQUARE_KIND_LOOP, Loop: int32(l),
			ColourSeat: int32(engine.ColourSeat(l)), EntrySeat: -1, CrossedBySeat: -1}
		owner := engine.ColourSeat(l)
		switch p := engine.PathIndex(owner, l); {
		case p == engine.TurnIn:
			sq.TurnIn = true
		case p == engine.ShortcutFrom:
			sq.FlightStart, sq.Jump = true, true
		case engine.OwnColour(p):
			sq.Jump = true
			sq.FlightEnd = p == engine.ShortcutTo
		}
		for s := range engine.MaxSeats {
			if engine.PathIndex(s, l) == 1 {
				sq.EntrySeat = int32(s)
			}
		}
		i, err := add(fmt.Sprintf("%02d", l), sq)
		if err != nil {
			return nil, err
		}
		loop[l] = i
	}
	centre, err := add("##", &aeroplanev1.Square{Kind: aeroplanev1.SquareKind_SQUARE_KIND_CENTRE,
		ColourSeat: -1, Loop: -1, EntrySeat: -1, CrossedBySeat: -1})
	if err != nil {
		return nil, err
	}
	for s := range engine.MaxSeats {
		letter := string(rune('A' + s))
		sq := func(kind aeroplanev1.SquareKind) *aeroplanev1.Square {
			return &aeroplanev1.Square{Kind: kind, ColourSeat: int32(s), Loop: -1, EntrySeat: -1, CrossedBySeat: -1}
		}
		seat := &aeroplanev1.SeatPath{Seat: int32(s), Colour: colours[s]}
		hangar, err := add(strings.Repeat(strings.ToLower(letter), 2), sq(aeroplanev1.SquareKind_SQUARE_KIND_HANGAR))
		if err != nil {
			return nil, err
		}
		launch, err := add(letter+"*", sq(aeroplanev1.SquareKind_SQUARE_KIND_LAUNCH))
		if err != nil {
			return nil, err
		}
		seat.Path = append(seat.Path, hangar, launch)
		for p := 1; p <= engine.LoopSteps; p++ {
			seat.Path = append(seat.Path, loop[engine.Loop(s, p)])
		}
		for p := engine.HomeFirst; p < engine.Finish; p++ {
			home := sq(aeroplanev1.SquareKind_SQUARE_KIND_HOME_COLUMN)
			if p == engine.CrossP {
				home.CrossedBySeat = int32(engine.Opposite(s))
			}
			i, err := add(fmt.Sprintf("%s%d", letter, p-engine.TurnIn), home)
			if err != nil {
				return nil, err
			}
			seat.Path = append(seat.Path, i)
		}
		seat.Path = append(seat.Path, centre)
		b.Seats = append(b.Seats, seat)
	}
	for tok := range at {
		return nil, fmt.Errorf("unknown square %q", tok)
	}
	return b, nil
}

// preview sets p, a new message, to what the legal move m of seat would do, and reports
// whether m has a preview (a pass has none): the state is a value, so the move is played on a
// copy and its events read back.
func preview(p *aeroplanev1.MovePreview, s engine.State, seat int, m engine.Move) bool {
	if m.Kind == engine.Pass {
		return false
	}
	var buf [16]engine.Event // more than a move makes
	_, evs, err := s.AppendMove(buf[:0], seat, m)
	if err != nil {
		return false
	}
	for _, e := range evs {
		switch e.Kind {
		case engine.EvTookOff:
			p.Planes = refs(e.Seat, e.Planes)
			p.From, p.To, p.Path = int32(e.From), int32(e.To), []int32{int32(e.To)}
		case engine.EvMoved:
			p.Planes = refs(e.Seat, e.Planes)
			p.From, p.To = int32(e.From), int32(e.To)
			p.Path = steps(int(e.From), int(e.To), int(e.Die))
		case engine.EvJumped:
			p.Jump, p.To = true, int32(e.To)
			p.Path = append(p.Path, int32(e.To))
		case engine.EvFlew:
			p.Flight, p.To = true, int32(e.To)
			p.Path = append(p.Path, int32(e.To))
		case engine.EvCaptured:
			for i := range 16 {
				if e.Captured&(1<<i) != 0 {
					p.Captures = append(p.Captures, &aeroplanev1.PlaneRef{Seat: int32(i / 4), Index: int32(i % 4)})
				}
			}
			p.Crossing = p.Crossing || e.Crossing
		case engine.EvStacked:
			p.Stacks = true
		case engine.EvFinished:
			p.Finishes = true
		}
	}
	return true
}

// refs are the planes of seat, made in one block.
func refs(seat int, planes uint8) []*aeroplanev1.PlaneRef {
	n := bits.OnesCount8(planes)
	if n == 0 {
		return nil
	}
	out := make([]*aeroplanev1.PlaneRef, 0, n)
	block := make([]aeroplanev1.PlaneRef, n)
	for i := range engine.PlanesPerSeat {
		if planes&(1<<i) != 0 {
			r := &block[len(out)]
			r.Seat, r.Index = int32(seat), int32(i)
			out = append(out, r)
		}
	}
	return out
}

// steps lists the path indices a unit enters walking die squares from from to to: forward,
// back down from the centre after a bounce (which may end below from: p54 rolling 6 walks
// 55, 56, 55, 54, 53, 52), or backwards when the roll reversed it (OvershootReverse).
func steps(from, to, die int) []int32 {
	// Room for the squares walked and for the jumps and the flight that the preview adds.
	out := make([]int32, 0, die+3)
	switch {
	case to < from && to != 2*engine.Finish-from-die: // reversed by the whole roll
		for p := from - 1; p >= to; p-- {
			out = append(out, int32(p))
		}
	default:
		p := from
		for ; p < engine.Finish && p < from+die; p++ {
			out = append(out, int32(p+1))
		}
		for p > to {
			p--
			out = append(out, int32(p))
		}
	}
	return out
}
