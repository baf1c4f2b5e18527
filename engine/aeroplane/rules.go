package aeroplane

import (
	"fmt"
	"math/bits"
)

// maxMoves bounds the legal moves of one roll: four planes, each with up to eight variants
// (flight, jump, stack choices) as a whole stack or split off, plus a pass.
const maxMoves = 64

// Roll rolls die (1..6) for seat: a start roll in PhaseStartRoll, else the roll of the turn.
// It returns the next state and the events: the roll, then what follows without a choice (the
// third-six penalty, an automatic pass, the hand-over, who starts). It returns an error wrapping
// ErrNoSuchSeat or ErrBadDie for malformed arguments, ErrGameOver, ErrNotYourTurn, or
// ErrWrongPhase when a move is due.
func (s State) Roll(seat, die int) (State, []Event, error) { return s.AppendRoll(nil, seat, die) }

// AppendRoll is Roll appending the events to dst; with a dst of enough capacity it does not
// allocate.
func (s State) AppendRoll(dst []Event, seat, die int) (State, []Event, error) {
	if err := s.checkActor(seat); err != nil {
		return s, dst, err
	}
	if die < 1 || die > 6 {
		return s, dst, fmt.Errorf("%w: %d", ErrBadDie, die)
	}
	if s.phase != PhaseRoll && s.phase != PhaseStartRoll {
		return s, dst, fmt.Errorf("%w: a move is due", ErrWrongPhase)
	}
	ns := s
	dst = ns.emit(dst, Event{Kind: EvRolled, Seat: seat, Die: die})
	if s.phase == PhaseStartRoll {
		return ns, ns.settleStart(dst), nil
	}
	if die == 6 && ns.sixes >= 3 && ns.opt.ThirdSix != ThirdSixNone {
		dst = ns.emit(dst, Event{Kind: EvPenalty, Seat: seat, Planes: ns.penaltyPlanes(seat)})
		return ns, ns.passTurn(dst), nil
	}
	if ns.opt.AutoPass && !ns.hasMove() {
		dst = ns.emit(dst, Event{Kind: EvPassed, Seat: seat, Die: die})
		dst = ns.afterAction(dst, seat, die, false)
	}
	return ns, dst, nil
}

// Move plays m for seat with the pending roll. m must be one of LegalMoves (for a stack any
// plane of it names the unit). It returns the next state and the events: the move's outcome
// (take-off or walk, jumps, flight, captures, stacking, finishing), then the hand-over or the
// bonus roll, placings and the end of the game. It returns an error wrapping ErrNoSuchSeat,
// ErrNoSuchPlane or ErrBadMove for malformed arguments, ErrGameOver, ErrNotYourTurn,
// ErrWrongPhase when a roll is due, or ErrIllegalMove.
func (s State) Move(seat int, m Move) (State, []Event, error) { return s.AppendMove(nil, seat, m) }

// AppendMove is Move appending the events to dst; with a dst of enough capacity it does not
// allocate.
func (s State) AppendMove(dst []Event, seat int, m Move) (State, []Event, error) {
	if err := s.checkActor(seat); err != nil {
		return s, dst, err
	}
	if err := m.check(); err != nil {
		return s, dst, err
	}
	if s.phase != PhaseMove {
		return s, dst, fmt.Errorf("%w: a roll is due", ErrWrongPhase)
	}
	die := int(s.die)
	n0 := len(dst)
	ns := s
	illegal := func() (State, []Event, error) {
		return s, dst[:n0], fmt.Errorf("%w: %s with %d", ErrIllegalMove, m, die)
	}
	switch m.Kind {
	case Pass:
		if s.opt.MustMove && s.hasMove() {
			return illegal()
		}
		dst = ns.emit(dst, Event{Kind: EvPassed, Seat: seat, Die: die})
		return ns, ns.afterAction(dst, seat, die, false), nil
	case TakeOff:
		if s.pos[seat][m.Plane] != Hangar || !s.opt.takeoff(die) {
			return illegal()
		}
		dst = ns.emit(dst, Event{Kind: EvTookOff, Seat: seat, Die: die, Planes: 1 << m.Plane, From: Hangar, To: Launch})
		return ns, ns.afterAction(dst, seat, die, true), nil
	}
	from := int(s.pos[seat][m.Plane])
	if from < Launch || from >= Finish {
		return illegal()
	}
	unit := s.unitOf(seat, m.Plane)
	if m.Split {
		if !s.opt.StackSplit || bits.OnesCount8(unit) < 2 {
			return illegal()
		}
		unit = 1 << m.Plane
	}
	var ok bool
	if dst, _, ok = ns.advance(dst, seat, unit, from, die, m, true); !ok {
		return illegal()
	}
	return ns, ns.afterAction(dst, seat, die, true), nil
}

// Resign takes seat out of the game: its planes on the board go to the hangar, its turns are
// skipped, and it is ranked after every player who did not resign (resigned players in reverse
// order of resigning). If it was seat's turn the turn passes; if one active player is left the
// game ends. It returns an error wrapping ErrNoSuchSeat, ErrGameOver, or ErrPlayerDone when
// seat has already finished or resigned.
func (s State) Resign(seat int) (State, []Event, error) { return s.AppendResign(nil, seat) }

// AppendResign is Resign appending the events to dst.
func (s State) AppendResign(dst []Event, seat int) (State, []Event, error) {
	if !s.seats.Has(seat) {
		return s, dst, fmt.Errorf("%w: %d", ErrNoSuchSeat, seat)
	}
	if s.phase == PhaseOver {
		return s, dst, ErrGameOver
	}
	if !s.active().Has(seat) {
		return s, dst, fmt.Errorf("%w: seat %d", ErrPlayerDone, seat)
	}
	ns := s
	dst = ns.emit(dst, Event{Kind: EvResigned, Seat: seat})
	switch {
	case ns.active().Count() <= 1:
		dst = ns.gameOver(dst)
	case ns.phase == PhaseStartRoll:
		dst = ns.settleStart(dst)
	case int(ns.turn) == seat:
		dst = ns.passTurn(dst)
	}
	return ns, dst, nil
}

// checkActor checks the seat of a roll or move against the game.
func (s *State) checkActor(seat int) error {
	switch {
	case !s.seats.Has(seat):
		return fmt.Errorf("%w: %d", ErrNoSuchSeat, seat)
	case s.phase == PhaseOver:
		return ErrGameOver
	case seat != int(s.turn):
		return fmt.Errorf("%w: seat %d, turn %d", ErrNotYourTurn, seat, s.turn)
	}
	return nil
}

// check rejects moves that are malformed whatever the state.
func (m Move) check() error {
	switch m.Kind {
	case Pass:
		if m != (Move{Kind: Pass}) {
			return fmt.Errorf("%w: %+v", ErrBadMove, m)
		}
		return nil
	case TakeOff, Advance:
	default:
		return fmt.Errorf("%w: kind %d", ErrBadMove, m.Kind)
	}
	if m.Plane < 0 || m.Plane >= PlanesPerSeat {
		return fmt.Errorf("%w: %d", ErrNoSuchPlane, m.Plane)
	}
	if m.Kind == TakeOff && (m.Fly || m.NoJump || m.Stack || m.Split) {
		return fmt.Errorf("%w: a take-off has no choices", ErrBadMove)
	}
	return nil
}

// LegalMoves returns the moves of the pending roll (nil unless PhaseMove): take-offs and
// advances in plane order, each choice of an advance a move of its own, and "pass" when it is
// allowed. It allocates; see AppendLegalMoves.
func (s State) LegalMoves() []Move { return s.AppendLegalMoves(nil) }

// AppendLegalMoves appends the legal moves to dst (see LegalMoves).
func (s State) AppendLegalMoves(dst []Move) []Move {
	if s.phase != PhaseMove {
		return dst
	}
	n0 := len(dst)
	dst = s.appendMoves(dst)
	if len(dst) == n0 || !s.opt.MustMove {
		dst = append(dst, Move{Kind: Pass})
	}
	return dst
}

// appendMoves appends the take-offs and advances for the pending roll.
func (s *State) appendMoves(dst []Move) []Move {
	seat, die := int(s.turn), int(s.die)
	o := &s.opt
	for i := range PlanesPerSeat {
		p := int(s.pos[seat][i])
		switch {
		case p == Hangar:
			if o.takeoff(die) {
				dst = append(dst, Move{Kind: TakeOff, Plane: i})
			}
			continue
		case p == Finish:
			continue
		}
		unit := s.unitOf(seat, i)
		if int(s.lead[seat][i]) == i {
			dst = s.appendAdvances(dst, seat, i, unit, p, die, false)
		}
		if o.StackSplit && unit&(unit-1) != 0 {
			dst = s.appendAdvances(dst, seat, i, 1<<i, p, die, true)
		}
	}
	return dst
}

// appendAdvances appends every variant of moving unit (named by plane) from p.
func (s *State) appendAdvances(dst []Move, seat, plane int, unit uint8, p, die int, split bool) []Move {
	o := &s.opt
	q, _, ok := s.landing(seat, p, die)
	if !ok {
		return dst
	}
	flys, nojumps := 1, 1
	if q == ShortcutFrom || q == ShortcutFrom-JumpLen {
		flys = 2
	}
	if !o.JumpMandatory {
		nojumps = 2
	}
	for f := range flys {
		for nj := range nojumps {
			m := Move{Kind: Advance, Plane: plane, Fly: f == 1, NoJump: nj == 1, Split: split}
			_, own, ok := s.advance(nil, seat, unit, p, die, m, false)
			if !ok {
				continue
			}
			switch {
			case own == 0 || o.StackOptional == StackNever:
				dst = append(dst, m)
			case o.StackOptional == StackAuto:
				m.Stack = true
				dst = append(dst, m)
			default:
				dst = append(dst, m)
				m.Stack = true
				dst = append(dst, m)
			}
		}
	}
	return dst
}

// hasMove reports whether the pending roll has a take-off or an advance.
func (s *State) hasMove() bool {
	seat, die := int(s.turn), int(s.die)
	// Without blocking rules every unit on the board can use every roll.
	simple := s.opt.Overshoot != OvershootBlock && !s.opt.StackBlocks
	canTake := s.opt.takeoff(die)
	slow := false
	for _, p := range s.pos[seat] {
		switch {
		case p == Hangar:
			if canTake {
				return true
			}
		case p == Finish:
		case simple:
			return true
		default:
			slow = true
		}
	}
	if !slow {
		return false
	}
	var buf [maxMoves]Move
	return len(s.appendMoves(buf[:0])) > 0
}

// landing returns where a unit of seat on from stops walking die steps (bounces included), the
// last loop square it walks over forwards, and false if it may not use the roll.
func (s *State) landing(seat, from, die int) (q, passHi int, ok bool) {
	q = from + die
	passHi = q - 1
	if s.opt.StackBlocks && from < TurnIn {
		end := min(q-1, TurnIn)
		for b := from + 1; b <= end; b++ {
			if s.opposingStackAt(seat, b) {
				q = 2*b - q
				if q <= from {
					return 0, 0, false
				}
				return q, b - 1, true
			}
		}
	}
	if q > Finish {
		switch s.opt.Overshoot {
		case OvershootBlock:
			return 0, 0, false
		case OvershootReverse:
			q = from - die
		case OvershootFinish:
			q = Finish
		default:
			q = 2*Finish - q
		}
	}
	return q, passHi, true
}

// flightOpen reports whether seat may fly its shortcut now.
func (s *State) flightOpen(seat int) bool {
	return !s.opt.CrossingBlockedByStack || !s.stackAt(Opposite(seat), CrossP)
}

// walk is one advance being resolved (or only checked when !apply).
type walk struct {
	s     *State
	dst   []Event
	seat  int
	unit  uint8
	size  int
	apply bool
	alive bool
	at    int
	nrest int
	rest  [3]int8
}

func (w *walk) emit(e Event) { w.dst = w.s.emit(w.dst, e) }

// restAt stops the unit on p and resolves the captures there.
func (w *walk) restAt(p int) {
	w.at = p
	if w.nrest < len(w.rest) {
		w.rest[w.nrest] = int8(p)
		w.nrest++
	}
	if !onLoop(p) {
		return
	}
	o := &w.s.opt
	if o.StackCapture == StackCaptureAll && !w.apply {
		return
	}
	caps, n := w.s.victimsAt(w.seat, p)
	if n == 0 {
		return
	}
	self := uint16(w.unit) << (4 * w.seat)
	switch o.StackCapture {
	case StackCaptureAttackerReturns:
		if n >= 2 {
			caps, w.alive = self, false
		}
	case StackCaptureMutual:
		if n >= 2 {
			caps, w.alive = caps|self, false
		}
	case StackCaptureByCount:
		if w.size < n {
			caps, w.alive = caps|self, false
		}
	}
	if w.apply {
		w.emit(Event{Kind: EvCaptured, Seat: w.seat, Captured: caps, To: p})
	}
}

// passOver captures on the loop squares lo..hi except skip (CapturePassOver).
func (w *walk) passOver(lo, hi, skip int) {
	if !w.apply || w.s.opt.CaptureMode != CapturePassOver {
		return
	}
	for sq := lo; sq <= min(hi, TurnIn); sq++ {
		if sq == skip {
			continue
		}
		if caps, n := w.s.victimsAt(w.seat, sq); n > 0 {
			w.emit(Event{Kind: EvCaptured, Seat: w.seat, Captured: caps, To: sq})
		}
	}
}

func (w *walk) jump(a, b int) {
	if w.apply {
		w.emit(Event{Kind: EvJumped, Seat: w.seat, Planes: w.unit, From: a, To: b})
		w.passOver(a+1, b-1, -1)
	}
	w.restAt(b)
}

func (w *walk) fly() {
	if w.apply {
		w.emit(Event{Kind: EvFlew, Seat: w.seat, Planes: w.unit, From: ShortcutFrom, To: ShortcutTo})
		opp := Opposite(w.seat)
		if w.s.opt.CrossingCapture && w.s.seats.Has(opp) {
			if m := w.s.ownAt(opp, CrossP); m != 0 {
				w.emit(Event{Kind: EvCaptured, Seat: w.seat, Captured: uint16(m) << (4 * opp), Crossing: true})
			}
		}
	}
	w.restAt(ShortcutTo)
}

// advance resolves the unit of seat on from walking die steps with the choices of m (spec
// §2.4). With apply it changes s and appends the events to dst; without, s is untouched and
// the stacking choice is left to the caller. It returns the own planes waiting on the final
// square and false when the unit may not use the roll or m's choices do not fit the move
// (with apply, s and dst must then be dropped).
func (s *State) advance(dst []Event, seat int, unit uint8, from, die int, m Move, apply bool) ([]Event, uint8, bool) {
	o := &s.opt
	q, passHi, ok := s.landing(seat, from, die)
	if !ok {
		return dst, 0, false
	}
	w := walk{s: s, dst: dst, seat: seat, unit: unit, size: bits.OnesCount8(unit), apply: apply, alive: true}
	mi := len(dst)
	if apply {
		w.emit(Event{Kind: EvMoved, Seat: seat, Planes: unit, From: from, To: q, Die: die})
		w.passOver(from+1, passHi, q)
	}
	sawFlight, sawJump := false, false
	takeJump := o.JumpMandatory || !m.NoJump
	w.restAt(q)
	if w.alive && onLoop(q) {
		switch {
		case q == ShortcutFrom:
			if s.flightOpen(seat) && (m.Fly || !o.ShortcutOptional) {
				sawFlight = true
				w.fly()
				if w.alive && o.ShortcutThenJump {
					sawJump = true
					if takeJump {
						w.jump(ShortcutTo, ShortcutTo+JumpLen)
					}
				}
			} else if o.DeclinedShortcutJumps {
				sawJump = true
				if takeJump {
					w.jump(q, q+JumpLen)
				}
			}
		case q == ShortcutTo:
			if o.JumpAfterShortcutEnd {
				sawJump = true
				if takeJump {
					w.jump(q, q+JumpLen)
				}
			}
		case OwnColour(q) && (q < TurnIn || o.JumpFromTurnIn):
			sawJump = true
			if takeJump {
				w.jump(q, q+JumpLen)
				if w.alive && w.at == ShortcutFrom && o.JumpThenShortcut && s.flightOpen(seat) &&
					(m.Fly || !o.ShortcutOptional) {
					sawFlight = true
					w.fly()
				}
			}
		}
	}
	if m.Fly != sawFlight || (m.NoJump && (!sawJump || o.JumpMandatory)) {
		return w.dst, 0, false
	}
	var own uint8
	if w.alive && w.at != Finish {
		own = s.ownAt(seat, w.at) &^ unit
	}
	if !apply {
		return w.dst, own, true
	}
	if !o.stackOK(own, m.Stack) {
		return w.dst, 0, false
	}
	w.dst[mi].Rest = w.rest
	switch {
	case !w.alive:
	case w.at == Finish:
		w.emit(Event{Kind: EvFinished, Seat: seat, Planes: unit})
	case m.Stack:
		w.emit(Event{Kind: EvStacked, Seat: seat, Planes: unit | own, To: w.at})
	}
	return w.dst, own, true
}

// stackOK reports whether the stacking choice fits own planes waiting on the final square.
func (o *Options) stackOK(own uint8, stack bool) bool {
	switch {
	case own == 0 || o.StackOptional == StackNever:
		return !stack
	case o.StackOptional == StackAuto:
		return stack
	}
	return true
}

// penaltyPlanes returns the planes the third 6 sends home (spec §2.7, option ThirdSix).
func (s *State) penaltyPlanes(seat int) uint8 {
	var m uint8
	for j, p := range s.pos[seat] {
		var back bool
		switch s.opt.ThirdSix {
		case ThirdSixReturnMovedBySixes:
			back = s.moved&(1<<j) != 0 && p != Hangar && (p != Finish || s.opt.ThirdSixReturnsFinished)
		case ThirdSixReturnAllActive:
			back = p != Hangar && p != Finish
		case ThirdSixReturnAllInclFinished:
			back = p != Hangar
		}
		if back {
			m |= 1 << j
		}
	}
	return m
}

// afterAction ends a used or passed roll: placing, end of game, bonus roll or hand-over.
func (s *State) afterAction(dst []Event, seat, die int, moved bool) []Event {
	if !s.placed.Has(seat) && s.allFinished(seat) {
		dst = s.emit(dst, Event{Kind: EvPlaced, Seat: seat, Place: int(s.nRank) + 1})
		if s.opt.EndRule == EndFirstFinisherEnds || s.active().Count() <= 1 {
			return s.gameOver(dst)
		}
		return s.passTurn(dst)
	}
	if die == 6 && s.opt.BonusOnSix && (moved || !s.opt.BonusNeedsMove) {
		return dst
	}
	return s.passTurn(dst)
}

// passTurn hands the turn to the next active seat in play order.
func (s *State) passTurn(dst []Event) []Event {
	return s.emit(dst, Event{Kind: EvTurnPassed, Seat: int(s.turn), Next: s.nextActive(int(s.turn))})
}

func (s *State) nextActive(from int) int {
	act := s.active()
	for k := 1; k <= MaxSeats; k++ {
		if c := (from + k) & 3; act.Has(c) {
			return c
		}
	}
	return from
}

// gameOver places the last active player, if one is left alone, and ends the game: placed
// players, then the other active players by progress (EndFirstFinisherEnds; ties in play order
// after the winner), then resigned players in reverse order of resigning.
func (s *State) gameOver(dst []Event) []Event {
	act := s.active()
	if act.Count() == 1 {
		dst = s.emit(dst, Event{Kind: EvPlaced, Seat: lowestSeat(act), Place: int(s.nRank) + 1})
		act = 0
	}
	r := [MaxSeats]int8{-1, -1, -1, -1}
	n := copy(r[:], s.rank[:s.nRank])
	if act != 0 {
		after := 0
		if n > 0 {
			after = int(r[n-1]) + 1
		}
		first := n
		for k := range MaxSeats {
			if c := (after + k) & 3; act.Has(c) {
				r[n] = int8(c)
				n++
			}
		}
		for i := first + 1; i < n; i++ { // insertion sort by progress, stable
			for j := i; j > first && s.progress(int(r[j])) > s.progress(int(r[j-1])); j-- {
				r[j], r[j-1] = r[j-1], r[j]
			}
		}
	}
	for i := int(s.nResigned) - 1; i >= 0; i-- {
		r[n] = s.resignOrd[i]
		n++
	}
	return s.emit(dst, Event{Kind: EvGameOver, Ranking: r})
}

// settleStart moves the start phase on: next roller, a re-roll of the tied, or the first player.
func (s *State) settleStart(dst []Event) []Event {
	if s.contenders.Count() == 1 {
		return s.emit(dst, Event{Kind: EvFirstPlayer, Seat: lowestSeat(s.contenders)})
	}
	if s.contenders == 0 { // every contender resigned: the others roll again
		dst = s.emit(dst, Event{Kind: EvStartTie, Seats: s.active()})
	} else if s.pending == 0 {
		var best int8
		var tied SeatMask
		for c := range MaxSeats {
			switch r := s.start[c]; {
			case !s.contenders.Has(c) || r < best:
			case r > best:
				best, tied = r, 1<<c
			default:
				tied |= 1 << c
			}
		}
		if tied.Count() == 1 {
			return s.emit(dst, Event{Kind: EvFirstPlayer, Seat: lowestSeat(tied)})
		}
		dst = s.emit(dst, Event{Kind: EvStartTie, Seats: tied})
	}
	next := int(s.turn)
	for k := range MaxSeats {
		if c := (int(s.turn) + k) & 3; s.pending.Has(c) {
			next = c
			break
		}
	}
	if s.pending.Has(lowestSeat(s.pending)) && s.start == [MaxSeats]int8{} {
		next = lowestSeat(s.pending) // a new round starts with the lowest seat
	}
	if next != int(s.turn) {
		dst = s.emit(dst, Event{Kind: EvTurnPassed, Seat: int(s.turn), Next: next})
	}
	return dst
}
