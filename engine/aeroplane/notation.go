package aeroplane

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// String returns the state's one-line notation: one token per seat in play, then key=value
// fields.
//
//	0:h,h,0,14 2:20*0,20*0,h,56 turn=2 phase=move die=6 sixes=1 moved=- rank=- resigned=- opts=default
//
// A seat token lists its four planes: "h" for the hangar, else the path index (0 launch area,
// 1..50 loop, 51..55 home column, 56 finished), followed by "*<lead>" when the plane is part of
// a stack whose lowest plane is <lead>. turn is the seat to act ("-" when over); phase is
// start, roll, move or over; die the roll awaiting a move (0 if none); sixes the 6s of this
// turn; moved the planes a 6 moved this turn; rank the placed seats in order; resigned the
// resigned seats in order of resigning; in the start phase, start (the four seats' start
// rolls), pending (seats still to roll) and contenders (seats still in the running) follow;
// opts is Options.String.
func (s State) String() string {
	var b strings.Builder
	for seat := range MaxSeats {
		if !s.seats.Has(seat) {
			continue
		}
		b.WriteByte(byte('0' + seat))
		b.WriteByte(':')
		for j := range PlanesPerSeat {
			if j > 0 {
				b.WriteByte(',')
			}
			p := s.pos[seat][j]
			if p == Hangar {
				b.WriteByte('h')
			} else {
				b.WriteString(strconv.Itoa(int(p)))
			}
			if u := s.unitOf(seat, j); u&(u-1) != 0 {
				b.WriteByte('*')
				b.WriteByte(byte('0' + s.lead[seat][j]))
			}
		}
		b.WriteByte(' ')
	}
	turn := "-"
	if s.turn >= 0 {
		turn = strconv.Itoa(int(s.turn))
	}
	fmt.Fprintf(&b, "turn=%s phase=%s die=%d sixes=%d moved=%s rank=%s resigned=%s", turn, s.phase, s.die,
		s.sixes, digits(s.moved), seatList(s.rank[:s.nRank]), seatList(s.resignOrd[:s.nResigned]))
	if s.phase == PhaseStartRoll {
		fmt.Fprintf(&b, " start=%d,%d,%d,%d pending=%s contenders=%s", s.start[0], s.start[1], s.start[2], s.start[3],
			s.pending, s.contenders)
	}
	b.WriteString(" opts=")
	b.WriteString(s.r.unpack().String())
	return b.String()
}

func seatList(l []int8) string {
	if len(l) == 0 {
		return "-"
	}
	b := make([]byte, len(l))
	for i, v := range l {
		b[i] = byte('0' + v)
	}
	return string(b)
}

// ParseState parses the notation of State.String. It returns an error wrapping ErrSyntax when
// s does not parse, ErrBadOptions when the options are not valid, or ErrBadState when the
// state could not arise in a game (planes out of place, a broken stack, two seats on one loop
// square, a turn, phase or ranking that does not fit).
func ParseState(str string) (State, error) {
	bad := func(why string) (State, error) {
		return State{}, fmt.Errorf("%w: state %q: %s", ErrSyntax, str, why)
	}
	var s State
	s.clearPlanes()
	s.rank = [MaxSeats]int8{-1, -1, -1, -1}
	s.resignOrd = s.rank
	f := strings.Split(str, " ")
	i := 0
	for ; i < len(f) && len(f[i]) > 1 && f[i][1] == ':'; i++ {
		seat := int(f[i][0]) - '0'
		if seat < 0 || seat >= MaxSeats || s.seats.Has(seat) || (s.seats != 0 && seat < bits.Len8(uint8(s.seats))) {
			return bad("seat token " + f[i])
		}
		s.seats |= 1 << seat
		planes := strings.Split(f[i][2:], ",")
		if len(planes) != PlanesPerSeat {
			return bad("seat token " + f[i])
		}
		for j, t := range planes {
			p, lead, stacked := strings.Cut(t, "*")
			if p == "h" {
				s.pos[seat][j] = Hangar
			} else if n, ok := atoi(p, Launch, Finish); ok {
				s.pos[seat][j] = int8(n)
			} else {
				return bad("plane " + t)
			}
			if stacked {
				l, ok := atoi(lead, 0, PlanesPerSeat-1)
				if !ok {
					return bad("plane " + t)
				}
				s.lead[seat][j] = int8(l)
			}
		}
	}
	keys := []string{"turn", "phase", "die", "sixes", "moved", "rank", "resigned", "start", "pending", "contenders", "opts"}
	for _, k := range keys {
		if i >= len(f) {
			return bad("missing " + k)
		}
		key, v, ok := strings.Cut(f[i], "=")
		if !ok {
			return bad("field " + f[i])
		}
		if key != k {
			if k == "start" || k == "pending" || k == "contenders" {
				continue
			}
			return bad("field " + f[i] + ", want " + k)
		}
		i++
		switch k {
		case "turn":
			if v == "-" {
				s.turn = -1
			} else if n, ok2 := atoi(v, 0, MaxSeats-1); ok2 {
				s.turn = int8(n)
			} else {
				ok = false
			}
		case "phase":
			ok = false
			for p, name := range phaseNames {
				if name == v {
					s.phase, ok = Phase(p), true
				}
			}
		case "die":
			var n int
			n, ok = atoi(v, 0, 6)
			s.die = int8(n)
		case "sixes":
			var n int
			n, ok = atoi(v, 0, 3)
			s.sixes = int8(n)
		case "moved":
			s.moved, ok = parseDigits(v, PlanesPerSeat)
		case "rank":
			s.nRank, ok = parseSeatList(v, &s.rank)
		case "resigned":
			s.nResigned, ok = parseSeatList(v, &s.resignOrd)
		case "start":
			parts := strings.Split(v, ",")
			ok = len(parts) == MaxSeats
			for c := 0; ok && c < MaxSeats; c++ {
				var n int
				n, ok = atoi(parts[c], 0, 6)
				s.start[c] = int8(n)
			}
		case "pending", "contenders":
			var m uint8
			m, ok = parseDigits(v, MaxSeats)
			if k == "pending" {
				s.pending = SeatMask(m)
			} else {
				s.contenders = SeatMask(m)
			}
		case "opts":
			o, err := ParseOptions(v)
			if err != nil {
				return State{}, err
			}
			if err := o.Validate(max(2, s.seats.Count())); err != nil {
				return State{}, err
			}
			s.r = pack(o)
			useCourses(s.r)
		}
		if !ok {
			return bad("field " + k + "=" + v)
		}
	}
	if i != len(f) {
		return bad("trailing " + f[i])
	}
	for _, r := range s.resignOrd[:s.nResigned] {
		s.resigned |= 1 << r
	}
	for _, r := range s.rank[:s.nRank] {
		if !s.resigned.Has(int(r)) {
			s.placed |= 1 << r
		}
	}
	if err := s.check(); err != nil {
		return State{}, err
	}
	if got := s.String(); got != str {
		return bad("not canonical, want " + got)
	}
	return s, nil
}

func atoi(v string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi || strconv.Itoa(n) != v {
		return 0, false
	}
	return n, true
}

func parseSeatList(v string, dst *[MaxSeats]int8) (int8, bool) {
	if v == "-" {
		return 0, true
	}
	if len(v) == 0 || len(v) > MaxSeats {
		return 0, false
	}
	var seen uint8
	for i := 0; i < len(v); i++ {
		d := int(v[i]) - '0'
		if d < 0 || d >= MaxSeats || seen&(1<<d) != 0 {
			return 0, false
		}
		seen |= 1 << d
		dst[i] = int8(d)
	}
	return int8(len(v)), true
}

// check verifies the invariants of a reachable state.
func (s *State) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadState}, a...)...)
	}
	n := s.seats.Count()
	if n < 2 {
		return bad("fewer than two seats")
	}
	o := s.r.unpack()
	if err := o.Validate(n); err != nil {
		return err
	}
	if o.Seats != 0 && o.Seats != s.seats {
		return bad("seats differ from Options.Seats")
	}
	var loop [LoopLen]int8 // seat+1 standing on each loop square
	for seat := range MaxSeats {
		in := s.seats.Has(seat)
		for j := range PlanesPerSeat {
			p, l := int(s.pos[seat][j]), int(s.lead[seat][j])
			if !in && (p != Hangar || l != j) {
				return bad("planes of seat %d not in play", seat)
			}
			if p < Hangar || p > Finish || l < 0 || l > j || s.lead[seat][l] != int8(l) || int(s.pos[seat][l]) != p {
				return bad("plane %d of seat %d", j, seat)
			}
			if u := s.unitOf(seat, j); u&(u-1) != 0 && (p < 1 || p >= Finish || s.r.stacking() == StackNever) {
				return bad("stack of seat %d on %d", seat, p)
			}
			if s.resigned.Has(seat) && p != Hangar && p != Finish {
				return bad("resigned seat %d on the board", seat)
			}
			if onLoop(p) {
				l := Loop(seat, p)
				if loop[l] != 0 && int(loop[l]) != seat+1 {
					return bad("two seats on loop square %d", l)
				}
				loop[l] = int8(seat + 1)
			}
		}
	}
	if s.placed&^s.seats != 0 || s.resigned&^s.seats != 0 || s.placed&s.resigned != 0 {
		return bad("placed or resigned seats not in play")
	}
	if s.moved > 0xF || (s.moved != 0 && s.sixes == 0) {
		return bad("moved planes without a 6")
	}
	act := s.active()
	switch s.phase {
	case PhaseOver:
		if s.turn != -1 || s.die != 0 || s.sixes != 0 || s.moved != 0 || int(s.nRank) != n {
			return bad("finished game with a turn or an incomplete ranking")
		}
		var m SeatMask
		for _, r := range s.rank[:n] {
			m |= 1 << r
		}
		if m != s.seats {
			return bad("ranking is not the seats in play")
		}
	case PhaseStartRoll, PhaseRoll, PhaseMove:
		if !act.Has(int(s.turn)) || act.Count() < 2 {
			return bad("turn %d is not an active seat, or the game should be over", s.turn)
		}
		if (s.phase == PhaseMove) != (s.die != 0) {
			return bad("die %d in phase %s", s.die, s.phase)
		}
		for _, r := range s.rank[:s.nRank] {
			if !s.allFinished(int(r)) {
				return bad("placed seat %d has planes to go", r)
			}
		}
		for c := range MaxSeats {
			if act.Has(c) && s.allFinished(c) {
				return bad("seat %d finished but not placed", c)
			}
		}
		if s.r.endRule() == EndFirstFinisherEnds && s.nRank > 0 {
			return bad("a player finished, the game should be over")
		}
		if s.r.thirdSix() != ThirdSixNone && s.sixes > 2 {
			return bad("third six not penalised")
		}
	default:
		return bad("phase %d", s.phase)
	}
	if s.phase == PhaseStartRoll {
		if s.pending&^s.contenders != 0 || s.contenders&^act != 0 || !s.pending.Has(int(s.turn)) || s.contenders.Count() < 2 ||
			s.sixes != 0 || s.nRank != 0 {
			return bad("start phase")
		}
		for c := range MaxSeats {
			rolled := s.contenders.Has(c) && !s.pending.Has(c)
			if (s.start[c] != 0) != rolled {
				return bad("start roll of seat %d", c)
			}
			for j := range PlanesPerSeat {
				if s.pos[c][j] != Hangar {
					return bad("planes moved before the start")
				}
			}
		}
	} else if s.start != [MaxSeats]int8{} || s.pending != 0 || s.contenders != 0 {
		return bad("start rolls outside the start phase")
	}
	return nil
}
