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
	useCourses(s.r)
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

// Due returns Phase and Turn together. Called through a pointer it reads them in place, where
// the value methods would copy the State first: it is for loops that play in place (StepRoll,
// StepMove).
func (s *State) Due() (Phase, int) { return s.phase, int(s.turn) }

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
	l := &s.lead[seat]
	return match(word(l), l[i])
}

// ownAt returns the planes of seat standing on path index p.
func (s *State) ownAt(seat, p int) uint8 { return match(word(&s.pos[seat]), int8(p)) }

// The four planes of a seat are four bytes: word reads them as one little-endian word and
// putWord writes it back, so that the helpers below handle all four at once (the compiler
// turns each into a single load or store).

func word(a *[PlanesPerSeat]int8) uint32 {
	return uint32(uint8(a[0])) | uint32(uint8(a[1]))<<8 | uint32(uint8(a[2]))<<16 | uint32(uint8(a[3]))<<24
}

func putWord(a *[PlanesPerSeat]int8, w uint32) {
	a[0], a[1], a[2], a[3] = int8(w), int8(w>>8), int8(w>>16), int8(w>>24)
}

// match returns the planes (bit j = byte j) whose byte in w equals b.
func match(w uint32, b int8) uint8 {
	x := w ^ uint32(uint8(b))*0x01010101
	// the high bit of each byte is set where the byte of x is zero (exact: no borrow between
	// bytes, since the low seven bits are added separately)
	z := ^((x&0x7f7f7f7f + 0x7f7f7f7f) | x) & 0x80808080
	// gather the four high bits into bits 0..3 (no carries: the partial sums stay below 16)
	return uint8((z >> 7) * 0x01020408 >> 24)
}

// onBoard reports whether a byte of w, the path indices of a seat's planes, is on the board
// (Launch..Finish-1): unsigned, below Finish (the hangar's -1 is 255). The test is exact for
// "some byte": a borrow can only start at a byte that is itself below Finish.
func onBoard(w uint32) bool { return (w-Finish*0x01010101)&^w&0x80808080 != 0 }

// byteMask[m] has the bytes of the planes in m (bit j = byte j) all ones.
var byteMask = func() (t [16]uint32) {
	for m := range t {
		for j := range PlanesPerSeat {
			if m&(1<<j) != 0 {
				t[m] |= 0xFF << (8 * j)
			}
		}
	}
	return t
}()

func (s *State) allFinished(seat int) bool { return word(&s.pos[seat]) == Finish*0x01010101 }

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
// index p (1..50), and how many there are.
func (s *State) victimsAt(seat, p int) (uint16, int) {
	m := s.victims(seat, p)
	return m, bits.OnesCount16(m)
}

// victims is victimsAt without the count, for callers that need only the planes.
func (s *State) victims(seat, p int) uint16 {
	q := &s.pos
	t := &victimWords[seat&3][p&63]
	// All sixteen planes as two words of eight bytes, seats 0 and 2, seats 1 and 3: read as
	// four words of four bytes, like setPos writes them, and not as two eight-byte words
	// (adjacent seats), which would have to wait for a move's store to reach the cache.
	lo := uint64(word(&q[0])) | uint64(word(&q[2]))<<32
	hi := uint64(word(&q[1])) | uint64(word(&q[3]))<<32
	x := uint16(zeroBytes(lo^t[0])) | uint16(zeroBytes(hi^t[1]))<<8 // seats 0, 2, 1, 3
	return (x&0xF00F | x&0x00F0<<4 | x&0x0F00>>4) & seatPlanes[s.seats&0xF]
}

// zeroBytes returns the bytes of x that are zero (bit k = byte k); see match.
func zeroBytes(x uint64) uint8 {
	z := ^((x&0x7f7f7f7f7f7f7f7f + 0x7f7f7f7f7f7f7f7f) | x) & 0x8080808080808080
	return uint8((z >> 7) * 0x0102040810204080 >> 56)
}

// noPlane is a byte value that no plane's path index takes.
const noPlane = 0x7F

// victimWords[s][p] holds, byte for byte like the words of victims, the path index at which
// the planes of each other seat stand on the loop square of seat s's path index p: noPlane for
// s itself, for the seats that never stand there, and for p off the loop.
var victimWords = func() (t [MaxSeats][64][2]uint64) {
	for s := range MaxSeats {
		for p := range 64 {
			for o := range MaxSeats {
				po := uint64(noPlane)
				if o != s && onLoop(p) {
					if q := sameSquare(s, o, p); q != 0 {
						po = uint64(q)
					}
				}
				t[s][p][o%2] |= po * 0x01010101 << (32 * (o / 2))
			}
		}
	}
	return t
}()

// seatPlanes[m] holds the planes (bit 4*seat+plane) of the seats in m.
var seatPlanes = func() (t [16]uint16) {
	for m := range t {
		for o := range MaxSeats {
			if m&(1<<o) != 0 {
				t[m] |= 0xF << (4 * o)
			}
		}
	}
	return t
}()

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
		if po := int(sameSq[seat][o][p&63]); po != 0 && s.stackAt(o, po) {
			return true
		}
	}
	return false
}

// isolate makes every plane of mask a unit of its own; the planes left behind in their old
// units keep moving together under their lowest index.
func (s *State) isolate(seat int, mask uint8) {
	if mask&(mask-1) == 0 && match(word(&s.lead[seat&3]), int8(bits.TrailingZeros8(mask))) == mask {
		return // a single plane that is a unit of its own already: the most frequent case
	}
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

// setPos puts the planes mask of seat on path index p.
func (s *State) setPos(seat int, mask uint8, p int) {
	q := &s.pos[seat&3]
	bm := byteMask[mask&0xF]
	putWord(q, word(q)&^bm|uint32(uint8(p))*0x01010101&bm)
}
