package aeroplane

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// EventKind says what happened.
type EventKind uint8

const (
	// EvRolled: Seat rolled Die (a start roll in PhaseStartRoll).
	EvRolled EventKind = iota + 1
	// EvPassed: Seat's roll Die went unused (no legal move, or a chosen pass).
	EvPassed
	// EvTookOff: plane Planes of Seat went from its hangar (From -1) to the launch area (To 0)
	// with roll Die.
	EvTookOff
	// EvMoved: the unit Planes of Seat walked from From to To with roll Die (To includes any
	// bounce); Rest lists every rest point of the whole move (To, then jump and flight ends).
	EvMoved
	// EvJumped: the unit Planes jumped from own-colour square From to To.
	EvJumped
	// EvFlew: the unit Planes flew the shortcut From (18) to To (30).
	EvFlew
	// EvCaptured: Seat's move sent the planes Captured home, at its rest point To, or at the
	// opposite seat's p53 when Crossing. Captured may hold Seat's own unit (StackCapture).
	EvCaptured
	// EvStacked: Seat's planes Planes on square To now form one stack.
	EvStacked
	// EvFinished: the planes Planes of Seat reached the centre.
	EvFinished
	// EvPlaced: Seat finished (or is the last player left) and takes place Place (1 = first).
	EvPlaced
	// EvPenalty: a third 6 sent Seat's planes Planes to the hangar (maybe none).
	EvPenalty
	// EvTurnPassed: Seat's turn ended; Next acts now.
	EvTurnPassed
	// EvGameOver: the game ended with Ranking (seats in place order, -1 unused).
	EvGameOver
	// EvResigned: Seat left the game; its planes on the board went to the hangar.
	EvResigned
	// EvStartTie: the highest start rolls were tied; Seats roll again.
	EvStartTie
	// EvFirstPlayer: Seat starts the game.
	EvFirstPlayer
)

var eventNames = [...]string{"", "rolled", "passed", "tookoff", "moved", "jumped", "flew", "captured",
	"stacked", "finished", "placed", "penalty", "turn", "over", "resigned", "tie", "first"}

// String returns the kind's name in the event notation ("rolled", "moved", …).
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "?" + strconv.Itoa(int(k))
}

// Event is one outcome of Roll, Move or Resign: a plain comparable value whose fields are
// described per kind (see the EventKind constants); the fields a kind does not use are zero.
type Event struct {
	Seat     int
	Kind     EventKind
	Die      int8
	Planes   uint8    // planes of Seat, bit i = plane i
	From, To int8     // path indices of Seat
	Rest     [3]int8  // EvMoved: rest points in order, 0 = unused
	Crossing bool     // EvCaptured: at the crossing square
	Captured uint16   // EvCaptured: bit 4*seat+plane
	Next     int8     // EvTurnPassed: the next seat
	Place    int8     // EvPlaced
	Seats    SeatMask // EvStartTie
	Ranking  [4]int8  // EvGameOver
}

// event notation keys per kind, in order.
var eventKeys = [...][]string{
	EvRolled:      {"seat", "die"},
	EvPassed:      {"seat", "die"},
	EvTookOff:     {"seat", "planes", "die"},
	EvMoved:       {"seat", "planes", "from", "to", "die", "rest"},
	EvJumped:      {"seat", "planes", "from", "to"},
	EvFlew:        {"seat", "planes", "from", "to"},
	EvCaptured:    {"seat", "at", "caps"},
	EvStacked:     {"seat", "planes", "at"},
	EvFinished:    {"seat", "planes"},
	EvPlaced:      {"seat", "place"},
	EvPenalty:     {"seat", "planes"},
	EvTurnPassed:  {"seat", "next"},
	EvGameOver:    {"ranking"},
	EvResigned:    {"seat"},
	EvStartTie:    {"seats"},
	EvFirstPlayer: {"seat"},
}

// String returns the event's notation: its kind name and the kind's fields as key=value,
// for example "moved seat=0 planes=01 from=12 to=18 die=6 rest=18,30",
// "captured seat=0 at=cross caps=20,21", "turn seat=0 next=2", "over ranking=20".
// Plane and seat sets are digit strings ("-" when empty); caps lists seat-plane digit pairs.
func (e Event) String() string {
	if e.Kind == 0 || int(e.Kind) >= len(eventKeys) {
		return e.Kind.String()
	}
	var buf [64]byte // longer than most events' notation: the string is the one allocation
	return string(e.appendNotation(buf[:0]))
}

// appendNotation appends the notation of e, a known kind, to b.
func (e Event) appendNotation(b []byte) []byte {
	b = append(b, e.Kind.String()...)
	for _, k := range eventKeys[e.Kind] {
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		switch k {
		case "seat":
			b = strconv.AppendInt(b, int64(e.Seat), 10)
		case "die":
			b = strconv.AppendInt(b, int64(e.Die), 10)
		case "planes":
			b = appendDigits(b, e.Planes)
		case "from":
			b = strconv.AppendInt(b, int64(e.From), 10)
		case "to", "at":
			if e.Kind == EvCaptured && e.Crossing {
				b = append(b, "cross"...)
			} else {
				b = strconv.AppendInt(b, int64(e.To), 10)
			}
		case "rest":
			for i, r := range e.Rest {
				if r == 0 {
					break
				}
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(r), 10)
			}
		case "caps":
			first := true
			for i := range 16 {
				if e.Captured&(1<<i) != 0 {
					if !first {
						b = append(b, ',')
					}
					first = false
					b = append(b, byte('0'+i/4), byte('0'+i%4))
				}
			}
			if first {
				b = append(b, '-')
			}
		case "next":
			b = strconv.AppendInt(b, int64(e.Next), 10)
		case "place":
			b = strconv.AppendInt(b, int64(e.Place), 10)
		case "ranking":
			for _, r := range e.Ranking {
				if r >= 0 {
					b = append(b, byte('0'+r))
				}
			}
		case "seats":
			b = appendDigits(b, uint8(e.Seats))
		}
	}
	return b
}

// ParseEvent parses the notation of Event.String. It returns an error wrapping ErrSyntax when s
// is not an event (unknown kind, keys missing, extra or out of order, values out of range).
func ParseEvent(s string) (Event, error) {
	bad := func() (Event, error) { return Event{}, fmt.Errorf("%w: event %q", ErrSyntax, s) }
	// The words of s, without strings.Split's allocation: no event has
	// more than a kind and six keys.
	var words [1 + 6]string
	f := words[:0]
	for rest, more := s, true; more; {
		if len(f) == len(words) {
			return bad()
		}
		var w string
		w, rest, more = strings.Cut(rest, " ")
		f = append(f, w)
	}
	var e Event
	for k := EvRolled; int(k) < len(eventNames); k++ {
		if eventNames[k] == f[0] {
			e.Kind = k
		}
	}
	if e.Kind == 0 || len(f)-1 != len(eventKeys[e.Kind]) {
		return bad()
	}
	num8 := func(v string, lo, hi int) (int8, bool) {
		n, ok := atoi(v, lo, hi)
		return int8(n), ok
	}
	for i, k := range eventKeys[e.Kind] {
		key, v, ok := strings.Cut(f[i+1], "=")
		if !ok || key != k {
			return bad()
		}
		switch k {
		case "seat":
			e.Seat, ok = atoi(v, 0, MaxSeats-1)
		case "die":
			e.Die, ok = num8(v, 1, 6)
		case "planes":
			e.Planes, ok = parseDigits(v, PlanesPerSeat)
		case "from":
			e.From, ok = num8(v, Hangar, Finish)
		case "to":
			e.To, ok = num8(v, Hangar, Finish)
		case "at":
			if e.Kind == EvCaptured && v == "cross" {
				e.Crossing = true
			} else {
				e.To, ok = num8(v, 1, Finish)
			}
		case "rest":
			parts := strings.Split(v, ",")
			if len(parts) > len(e.Rest) {
				return bad()
			}
			for j, p := range parts {
				if e.Rest[j], ok = num8(p, 1, Finish); !ok {
					break
				}
			}
		case "caps":
			if v == "-" {
				break
			}
			last := -1
			for _, p := range strings.Split(v, ",") {
				if len(p) != 2 || p[0] < '0' || p[0] > '3' || p[1] < '0' || p[1] > '3' {
					return bad()
				}
				bit := int(p[0]-'0')*4 + int(p[1]-'0')
				if bit <= last {
					return bad()
				}
				last = bit
				e.Captured |= 1 << bit
			}
		case "next":
			e.Next, ok = num8(v, 0, MaxSeats-1)
		case "place":
			e.Place, ok = num8(v, 1, MaxSeats)
		case "ranking":
			e.Ranking = [4]int8{-1, -1, -1, -1}
			var seen uint8
			if len(v) == 0 || len(v) > MaxSeats {
				return bad()
			}
			for j := 0; j < len(v); j++ {
				d := int(v[j]) - '0'
				if d < 0 || d >= MaxSeats || seen&(1<<d) != 0 {
					return bad()
				}
				seen |= 1 << d
				e.Ranking[j] = int8(d)
			}
		case "seats":
			var m uint8
			m, ok = parseDigits(v, MaxSeats)
			e.Seats = SeatMask(m)
		}
		if !ok {
			return bad()
		}
	}
	if e.Kind == EvTookOff {
		e.From, e.To = Hangar, Launch
	}
	return e, nil
}

// emit folds e into s and appends it to dst: the engine changes its state only through the
// events it reports, so folding them elsewhere gives the same state.
func (s *State) emit(dst []Event, e Event) []Event {
	dst = append(dst, e)
	s.fold(&dst[len(dst)-1])
	return dst
}

// The emitters below write the fields of the frequent events straight into dst: building the
// event on the stack and copying it would make the copy wait for the byte-sized stores.

// emitUnit emits a roll, pass or a unit's event (take-off, walk, jump, flight, finish, stack).
func (s *State) emitUnit(dst []Event, kind EventKind, seat int, planes uint8, from, to, die int) []Event {
	dst = append(dst, Event{})
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Planes, e.From, e.To, e.Die = seat, kind, planes, int8(from), int8(to), int8(die)
	s.fold(e)
	return dst
}

// emitCapture emits a capture by seat at its path index to, or at the crossing.
func (s *State) emitCapture(dst []Event, seat int, caps uint16, to int, crossing bool) []Event {
	dst = append(dst, Event{})
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Captured, e.To, e.Crossing = seat, EvCaptured, caps, int8(to), crossing
	s.fold(e)
	return dst
}

// emitTurn emits the hand-over from seat to next.
func (s *State) emitTurn(dst []Event, seat, next int) []Event {
	dst = append(dst, Event{})
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Next = seat, EvTurnPassed, int8(next)
	s.foldTurn(e.Next)
	return dst
}

// The most frequent events (a roll of the turn, a unit's walk, jumps and flights, take-offs and
// the hand-over) are emitted and folded by emitters of their own (applyPlan writes the walk),
// which call fold's code for their kind directly instead of going through its switch. fold
// uses the same helpers, so the two cannot drift.

// emitRolled emits seat's roll die of the turn (PhaseRoll, not a start roll).
func (s *State) emitRolled(dst []Event, seat, die int) []Event {
	dst = append(dst, Event{})
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Die = seat, EvRolled, int8(die)
	s.foldRolled(e.Die)
	return dst
}

// emitTookOff emits the take-off of seat's planes planes (one plane) with roll die.
func (s *State) emitTookOff(dst []Event, seat int, planes uint8, die int) []Event {
	dst = append(dst, Event{})
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Planes, e.From, e.To, e.Die = seat, EvTookOff, planes, Hangar, Launch, int8(die)
	s.foldTookOff(seat, planes)
	return dst
}

// emitHop emits a jump or a flight (kind) of unit (planes of seat) from from to to.
func (s *State) emitHop(dst []Event, kind EventKind, seat int, unit uint8, from, to int) []Event {
	dst = append(dst, Event{})
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Planes, e.From, e.To = seat, kind, unit, int8(from), int8(to)
	s.setPos(seat, unit, to) // fold's code for both kinds
	return dst
}

// foldTookOff folds a take-off of seat's planes planes.
func (s *State) foldTookOff(seat int, planes uint8) {
	s.consume(planes)
	s.setPos(seat, planes, Launch)
}

// foldRolled folds a roll of the turn.
func (s *State) foldRolled(die int8) {
	s.die = die
	s.phase = PhaseMove
	if die == 6 && s.sixes < 3 {
		s.sixes++
	}
}

// foldMoved folds the walk of the planes unit of seat to path index to; part says whether unit
// may be part of a unit only.
func (s *State) foldMoved(seat int, unit uint8, to int8, part bool) {
	s.consume(unit)
	if l := &s.lead[seat&3]; part && unit != match(word(l), l[bits.TrailingZeros8(unit)&3]) {
		s.isolate(seat, unit)
	}
	q := &s.pos[seat&3] // setPos, inline
	bm := byteMask[unit&0xF]
	putWord(q, word(q)&^bm|uint32(uint8(to))*0x01010101&bm)
}

// foldTurn folds the hand-over to seat next.
func (s *State) foldTurn(next int8) {
	s.turn = next
	s.die, s.sixes, s.moved = 0, 0, 0
	if s.phase != PhaseStartRoll {
		s.phase = PhaseRoll
	}
}

// consume ends the use of the pending roll; planes are the planes it moved.
func (s *State) consume(planes uint8) {
	if s.die == 6 {
		s.moved |= planes
	}
	s.die = 0
	s.phase = PhaseRoll
}

// fold applies e to s without checking it.
func (s *State) fold(e *Event) {
	seat := e.Seat
	switch e.Kind {
	case EvRolled:
		if s.phase == PhaseStartRoll {
			s.start[seat] = e.Die
			s.pending &^= 1 << seat
			return
		}
		s.foldRolled(e.Die)
	case EvPassed:
		s.consume(0)
	case EvTookOff:
		s.foldTookOff(seat, e.Planes)
	case EvMoved:
		s.foldMoved(seat, e.Planes, e.To, true)
	case EvJumped, EvFlew:
		s.setPos(seat, e.Planes, int(e.To))
	case EvCaptured:
		for o := range MaxSeats {
			if m := uint8(e.Captured>>(4*o)) & 0xF; m != 0 {
				s.isolate(o, m)
				s.setPos(o, m, Hangar)
			}
		}
	case EvStacked:
		l := int8(bits.TrailingZeros8(e.Planes))
		for j := range PlanesPerSeat {
			if e.Planes&(1<<j) != 0 {
				s.lead[seat][j] = l
			}
		}
	case EvFinished:
		s.isolate(seat, e.Planes)
	case EvPlaced:
		s.placed |= 1 << seat
		s.rank[s.nRank] = int8(seat)
		s.nRank++
	case EvPenalty:
		s.isolate(seat, e.Planes)
		s.setPos(seat, e.Planes, Hangar)
	case EvTurnPassed:
		s.foldTurn(e.Next)
	case EvGameOver:
		s.phase = PhaseOver
		s.turn, s.die, s.sixes, s.moved = -1, 0, 0, 0
		s.rank = e.Ranking
		s.nRank = 0
		for _, r := range e.Ranking {
			if r >= 0 {
				s.nRank++
			}
		}
		s.placed = s.seats &^ s.resigned
		s.start, s.pending, s.contenders = [MaxSeats]int8{}, 0, 0
	case EvResigned:
		s.resigned |= 1 << seat
		s.resignOrd[s.nResigned] = int8(seat)
		s.nResigned++
		var on uint8
		for j := range PlanesPerSeat {
			if p := s.pos[seat][j]; p >= Launch && p < Finish {
				on |= 1 << j
			}
		}
		s.isolate(seat, on)
		s.setPos(seat, on, Hangar)
		s.pending &^= 1 << seat
		s.contenders &^= 1 << seat
		s.start[seat] = 0
	case EvStartTie:
		s.contenders, s.pending = e.Seats, e.Seats
		s.start = [MaxSeats]int8{}
	case EvFirstPlayer:
		s.phase = PhaseRoll
		s.turn = int8(seat)
		s.start, s.pending, s.contenders = [MaxSeats]int8{}, 0, 0
	}
}

// Apply folds one event onto s and returns the result. Events must come in the order Roll,
// Move and Resign reported them; folding the events of s.Roll, s.Move or s.Resign onto s gives
// the state they returned. It returns an error wrapping ErrBadEvent when e does not fit s (wrong
// seat or phase, planes not where the event says, values out of range).
func (s State) Apply(e Event) (State, error) {
	if err := s.checkEvent(&e); err != nil {
		return s, err
	}
	s.fold(&e)
	return s, nil
}

// Fold applies the events in order (see Apply). On error it returns the state before the
// offending event and an error wrapping ErrBadEvent that names the event's index.
func (s State) Fold(evs []Event) (State, error) {
	for i := range evs {
		if err := s.checkEvent(&evs[i]); err != nil {
			return s, fmt.Errorf("event %d: %w", i, err)
		}
		s.fold(&evs[i])
	}
	return s, nil
}

// checkEvent reports whether e can be folded onto s.
func (s *State) checkEvent(e *Event) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrBadEvent, e, why) }
	if s.phase == PhaseOver {
		return bad("game over")
	}
	if e.Kind == EvGameOver || e.Kind == EvStartTie {
		if e.Seat != 0 {
			return bad("seat set")
		}
	} else if !s.seats.Has(e.Seat) {
		return bad("seat not in play")
	}
	seat := e.Seat
	turn := e.Seat == int(s.turn)
	planesAt := func(p int) bool {
		if e.Planes == 0 || e.Planes > 0xF {
			return false
		}
		for j := range PlanesPerSeat {
			if e.Planes&(1<<j) != 0 && int(s.pos[seat][j]) != p {
				return false
			}
		}
		return true
	}
	switch e.Kind {
	case EvRolled:
		if e.Die < 1 || e.Die > 6 || !turn {
			return bad("not the roller's turn")
		}
		if s.phase == PhaseStartRoll {
			if !s.pending.Has(seat) {
				return bad("seat has rolled")
			}
		} else if s.phase != PhaseRoll {
			return bad("no roll due")
		}
	case EvPassed:
		if s.phase != PhaseMove || !turn || e.Die != s.die {
			return bad("no such roll to pass")
		}
	case EvTookOff:
		if s.phase != PhaseMove || !turn || e.Die != s.die || bits.OnesCount8(e.Planes) != 1 ||
			!planesAt(Hangar) || e.From != Hangar || e.To != Launch {
			return bad("no such take-off")
		}
	case EvMoved:
		if s.phase != PhaseMove || !turn || e.Die != s.die || e.From < Launch || e.From >= Finish ||
			e.To < 1 || e.To > Finish || !planesAt(int(e.From)) {
			return bad("no such move")
		}
		l := bits.TrailingZeros8(e.Planes)
		if u := s.unitOf(seat, l); e.Planes != u && bits.OnesCount8(e.Planes) != 1 {
			return bad("not a unit")
		}
	case EvJumped, EvFlew:
		if s.phase != PhaseRoll || !turn || e.From < 1 || e.To <= e.From || e.To > Finish || !planesAt(int(e.From)) {
			return bad("no such jump or flight")
		}
	case EvCaptured:
		if s.phase != PhaseRoll || !turn || e.Captured == 0 {
			return bad("no capture due")
		}
		for i := range 16 {
			if e.Captured&(1<<i) != 0 {
				if p := s.pos[i/4][i%4]; p < 1 || p >= Finish {
					return bad("captured plane not on the board")
				}
			}
		}
	case EvStacked:
		if s.phase != PhaseRoll || !turn || bits.OnesCount8(e.Planes) < 2 || e.To < 1 || e.To >= Finish ||
			!planesAt(int(e.To)) {
			return bad("no such stack")
		}
	case EvFinished:
		if !planesAt(Finish) {
			return bad("planes not at the centre")
		}
	case EvPlaced:
		if s.placed.Has(seat) || s.resigned.Has(seat) || int(e.Place) != int(s.nRank)+1 || int(s.nRank) >= MaxSeats {
			return bad("cannot place")
		}
	case EvPenalty:
		if s.phase != PhaseMove || s.sixes < 3 || !turn || e.Planes > 0xF || (e.Planes != 0 && !s.penaltyFits(seat, e.Planes)) {
			return bad("no such penalty")
		}
	case EvTurnPassed:
		if !turn || !s.active().Has(int(e.Next)) {
			return bad("no such turn")
		}
		if s.phase == PhaseStartRoll && !s.pending.Has(int(e.Next)) {
			return bad("next seat has rolled")
		}
	case EvGameOver:
		var m SeatMask
		for i, r := range e.Ranking {
			switch {
			case r < 0:
				continue
			case r >= MaxSeats || m.Has(int(r)) || (i > 0 && e.Ranking[i-1] < 0):
				return bad("bad ranking")
			}
			m |= 1 << r
		}
		if m != s.seats {
			return bad("ranking is not the seats in play")
		}
		for i := range int(s.nRank) {
			if e.Ranking[i] != s.rank[i] {
				return bad("ranking changes places already given")
			}
		}
	case EvResigned:
		if s.placed.Has(seat) || s.resigned.Has(seat) || int(s.nResigned) >= MaxSeats {
			return bad("player already done")
		}
	case EvStartTie:
		if s.phase != PhaseStartRoll || e.Seats.Count() < 2 || e.Seats&^s.active() != 0 {
			return bad("no such tie")
		}
	case EvFirstPlayer:
		if s.phase != PhaseStartRoll || !s.active().Has(seat) {
			return bad("no start phase")
		}
	default:
		return bad("unknown kind")
	}
	return nil
}

// penaltyFits reports whether planes (non-empty) are all off the hangar.
func (s *State) penaltyFits(seat int, planes uint8) bool {
	for j := range PlanesPerSeat {
		if planes&(1<<j) != 0 && s.pos[seat][j] == Hangar {
			return false
		}
	}
	return true
}
