package aeroplane

import "math/bits"

// Phase is what the game waits for.
type Phase uint8

const (
	// PhaseStartRoll: with FirstHighestRoll, the seat Turn rolls to decide who starts.
	PhaseStartRoll Phase = iota
	// PhaseRoll: the seat Turn rolls the die (Roll).
	PhaseRoll
	// PhaseMove: the seat Turn chooses one of LegalMoves for the roll Die (Move).
	PhaseMove
	// PhaseOver: the game has ended; Ranking is complete.
	PhaseOver
)

var phaseNames = [...]string{"start", "roll", "move", "over"}

// String returns "start", "roll", "move" or "over".
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "?"
}

// State is a whole game: options, planes, whose turn and the pending roll. It is a small
// comparable value without pointers; copying it copies the game, and == compares games.
// The zero State is not a game; use New or ParseState.
type State struct {
	r          rules                         // the options, packed
	pos        [MaxSeats][PlanesPerSeat]int8 // path index, Hangar..Finish
	lead       [MaxSeats][PlanesPerSeat]int8 // lowest plane index of the plane's unit
	start      [MaxSeats]int8                // start rolls of the current round (PhaseStartRoll)
	rank       [MaxSeats]int8                // placed seats in order, -1 unused
	resignOrd  [MaxSeats]int8                // resigned seats in order of resigning, -1 unused
	seats      SeatMask                      // seats in play
	placed     SeatMask                      // seats that finished all planes
	resigned   SeatMask                      // seats that resigned
	pending    SeatMask                      // start phase: contenders still to roll this round
	contenders SeatMask                      // start phase: seats still in the running to start
	nRank      int8
	nResigned  int8
	phase      Phase
	turn       int8  // seat to act, -1 when over
	die        int8  // roll awaiting a move (PhaseMove), else 0
	sixes      int8  // 6s rolled in this turn, saturating at 3
	moved      uint8 // planes of the turn's seat moved by a 6 in this turn
}

// New returns the start of a game of players players (2 to 4) under o. It returns an error
// wrapping ErrBadOptions when o.Validate(players) fails.
func New(players int, o Options) (State, error) {
	if err := o.Validate(players); err != nil {
		return State{}, err
	}
	var s State
	s.r = pack(o)
	s.seats = o.Seats
	if s.seats == 0 {
		s.seats = DefaultSeats(players)
	}
	s.clearPlanes()
	s.rank = [MaxSeats]int8{-1, -1, -1, -1}
	s.resignOrd = s.rank
	first := lowestSeat(s.seats)
	switch o.FirstPlayer {
	case FirstHighestRoll:
		s.phase = PhaseStartRoll
		s.pending, s.contenders = s.seats, s.seats
	case FirstGiven:
		s.phase = PhaseRoll
		first = o.FirstSeat
	default:
		s.phase = PhaseRoll
	}
	s.turn = int8(first)
	return s, nil
}

func (s *State) clearPlanes() {
	for i := range MaxSeats {
		for j := range PlanesPerSeat {
			s.pos[i][j] = Hangar
			s.lead[i][j] = int8(j)
		}
	}
}

func lowestSeat(m SeatMask) int { return bits.TrailingZeros8(uint8(m)) }

// Options returns the rule set of the game.
func (s State) Options() Options { return s.r.unpack() }

// Players returns the number of seats in play.
func (s State) Players() int { return s.seats.Count() }

// SeatMask returns the seats in play.
func (s State) SeatMask() SeatMask { return s.seats }

// Seats returns the seats in play in play order (increasing seat number, which is clockwise).
func (s State) Seats() []int { return s.seats.Seats() }

// Phase returns what the game waits for.
func (s State) Phase() Phase { return s.phase }

// Turn returns the seat that must act now (roll or move), or -1 when the game is over.
func (s State) Turn() int { return int(s.turn) }

// Die returns the roll awaiting a move, or 0 if none.
func (s State) Die() int { return int(s.die) }

// Sixes returns how many 6s the seat to act has rolled in this turn (at most 3).
func (s State) Sixes() int { return int(s.sixes) }

// MovedBySixes returns the planes (bit i = plane i) of the seat to act that a 6 moved in this
// turn: the planes the third-six penalty returns.
func (s State) MovedBySixes() uint8 { return s.moved }

// StartRoll returns the start roll of seat in the current round of PhaseStartRoll, 0 if none.
func (s State) StartRoll(seat int) int {
	if seat < 0 || seat >= MaxSeats {
		return 0
	}
	return int(s.start[seat])
}

// Over reports whether the game has ended.
func (s State) Over() bool { return s.phase == PhaseOver }

// Ranking returns the seats in place order: complete once the game is over, the players placed
// so far (by finishing all their planes) before that.
func (s State) Ranking() []int {
	out := make([]int, s.nRank)
	for i := range out {
		out[i] = int(s.rank[i])
	}
	return out
}

// Active reports whether seat is in play and has neither finished nor resigned.
func (s State) Active(seat int) bool { return s.active().Has(seat) }

// Resigned reports whether seat resigned.
func (s State) Resigned(seat int) bool { return s.resigned.Has(seat) }

func (s *State) active() SeatMask { return s.seats &^ s.placed &^ s.resigned }

// PlaneState is one plane as seen from outside.
type PlaneState struct {
	// Pos is the path index of the plane relative to its owner: Hangar (-1), Launch (0), the
	// loop 1..50, the home column 51..55 or Finish (56).
	Pos int
	// Unit holds the planes (bit i = plane i) that move with this one as one unit, itself
	// included; more than one bit means a stack.
	Unit uint8
}

// Stacked reports whether the plane is part of a stack.
func (p PlaneState) Stacked() bool { return bits.OnesCount8(p.Unit) > 1 }

// Plane returns plane i (0..3) of seat; out-of-range arguments give a plane in the hangar with
// an empty unit.
func (s State) Plane(seat, i int) PlaneState {
	if seat < 0 || seat >= MaxSeats || i < 0 || i >= PlanesPerSeat {
		return PlaneState{Pos: Hangar}
	}
	return PlaneState{Pos: int(s.pos[seat][i]), Unit: s.unitOf(seat, i)}
}

// unitOf returns the planes of plane i's unit.
func (s *State) unitOf(seat, i int) uint8 {
	l := s.lead[seat][i]
	var m uint8
	for j := range PlanesPerSeat {
		if s.lead[seat][j] == l {
			m |= 1 << j
		}
	}
	return m
}

// ownAt returns the planes of seat standing on path index p.
func (s *State) ownAt(seat, p int) uint8 {
	var m uint8
	for j := range PlanesPerSeat {
		if int(s.pos[seat][j]) == p {
			m |= 1 << j
		}
	}
	return m
}

func (s *State) allFinished(seat int) bool {
	q := &s.pos[seat]
	return q[0] == Finish && q[1] == Finish && q[2] == Finish && q[3] == Finish
}

// progress is the sum over the seat's planes of pos+1 (hangar 0, finished 57), used to rank
// unfinished players when EndFirstFinisherEnds stops the game.
func (s *State) progress(seat int) int {
	n := 0
	for _, p := range s.pos[seat] {
		n += int(p) + 1
	}
	return n
}

// victimsAt returns the opposing planes (bit 4*seat+plane) on the loop square of seat's path
// index p, and how many there are.
func (s *State) victimsAt(seat, p int) (uint16, int) {
	var m uint16
	n := 0
	others := s.seats &^ (1 << seat)
	for others != 0 {
		o := bits.TrailingZeros8(uint8(others))
		others &= others - 1
		po := sameSquare(seat, o, p)
		if po == 0 {
			continue
		}
		q := &s.pos[o]
		for j := range PlanesPerSeat {
			if int(q[j]) == po {
				m |= 1 << (4*o + j)
				n++
			}
		}
	}
	return m, n
}

// stackAt reports whether seat o has a stack (two or more merged planes) on path index po.
func (s *State) stackAt(o, po int) bool {
	for j := range PlanesPerSeat {
		if int(s.pos[o][j]) == po {
			for k := j + 1; k < PlanesPerSeat; k++ {
				if s.lead[o][k] == s.lead[o][j] {
					return true
				}
			}
		}
	}
	return false
}

// opposingStackAt reports whether another seat has a stack on the loop square of seat's p.
func (s *State) opposingStackAt(seat, p int) bool {
	for o := range MaxSeats {
		if o == seat {
			continue
		}
		if po := sameSquare(seat, o, p); po != 0 && s.stackAt(o, po) {
			return true
		}
	}
	return false
}

// isolate makes every plane of mask a unit of its own; the planes left behind in their old
// units keep moving together under their lowest index.
func (s *State) isolate(seat int, mask uint8) {
	old := s.lead[seat]
	l := &s.lead[seat]
	for j := range PlanesPerSeat {
		if mask&(1<<j) != 0 {
			l[j] = int8(j)
		}
	}
	for j := range PlanesPerSeat {
		if mask&(1<<j) != 0 || mask&(1<<old[j]) == 0 {
			continue
		}
		for k := range PlanesPerSeat {
			if mask&(1<<k) == 0 && old[k] == old[j] {
				l[j] = int8(k)
				break
			}
		}
	}
}

func (s *State) setPos(seat int, mask uint8, p int) {
	for j := range PlanesPerSeat {
		if mask&(1<<j) != 0 {
			s.pos[seat][j] = int8(p)
		}
	}
}
