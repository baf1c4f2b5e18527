package aeroplane

import (
	"fmt"
	"math/bits"
	"slices"
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
	dst, err := s.StepRoll(dst, seat, die) // s is the receiver's copy
	return s, dst, err
}

// StepRoll is AppendRoll changing s in place instead of returning the next state; s is
// unchanged when it returns an error. Loops that play many actions (self-play, search) use
// it to save copying the State into and out of every call.
func (s *State) StepRoll(dst []Event, seat, die int) ([]Event, error) {
	if !s.isActor(seat) || uint(die-1) > 5 || s.phase != PhaseRoll {
		return s.stepRollOther(dst, seat, die)
	}
	dst = s.emitRolled(dst, seat, die)
	if die == 6 && s.sixes >= 3 && s.r.thirdSix() != ThirdSixNone {
		dst = s.emit(dst, Event{Kind: EvPenalty, Seat: seat, Planes: s.penaltyPlanes(seat)})
		return s.passTurn(dst), nil
	}
	if s.r.has(rAutoPass) {
		// Without blocking rules a plane on the board can use any roll: that settles most
		// rolls here, where hasMove is a call (this is its test, too costly to inline).
		anyBoard := onBoard(word(&s.pos[seat&3])) && s.r&rStackBlocks == 0 && s.r.overshoot() != OvershootBlock
		if !anyBoard && !s.hasMove() {
			dst = s.emitUnit(dst, EvPassed, seat, 0, 0, 0, die)
			dst = s.afterAction(dst, seat, die, false)
		}
	}
	return dst, nil
}

// stepRollOther is StepRoll for the start rolls and the errors.
func (s *State) stepRollOther(dst []Event, seat, die int) ([]Event, error) {
	switch {
	case !s.isActor(seat):
		return dst, s.actorError(seat)
	case die < 1 || die > 6:
		return dst, fmt.Errorf("%w: %d", ErrBadDie, die)
	case s.phase == PhaseStartRoll:
		dst = s.emitUnit(dst, EvRolled, seat, 0, 0, 0, die)
		return s.settleStart(dst), nil
	}
	return dst, fmt.Errorf("%w: a move is due", ErrWrongPhase)
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
	dst, err := s.StepMove(dst, seat, m) // s is the receiver's copy
	return s, dst, err
}

// StepMove is AppendMove changing s in place instead of returning the next state; s is
// unchanged when it returns an error (see StepRoll).
func (s *State) StepMove(dst []Event, seat int, m Move) ([]Event, error) {
	if !s.isActor(seat) {
		return dst, s.actorError(seat)
	}
	if err := m.check(); err != nil {
		return dst, err
	}
	if s.phase != PhaseMove {
		return dst, fmt.Errorf("%w: a roll is due", ErrWrongPhase)
	}
	if out, ok := s.move(dst, seat, m); ok {
		return out, nil
	}
	return dst, fmt.Errorf("%w: %s with %d", ErrIllegalMove, m, s.die)
}

// move plays m, which passed check, for seat, the seat to act in PhaseMove. It returns false
// when m is not legal, before it changes s or appends an event.
func (s *State) move(dst []Event, seat int, m Move) ([]Event, bool) {
	return s.moveWith(dst, seat, &m, s.courses())
}

// moveWith is move taking the course table of the rule set, or nil to work out the course
// with plan.
func (s *State) moveWith(dst []Event, seat int, m *Move, t *courseTable) ([]Event, bool) {
	die := int(s.die)
	switch m.Kind {
	case Pass:
		if s.r.has(rMustMove) && s.hasMove() {
			return dst, false
		}
		dst = s.emitUnit(dst, EvPassed, seat, 0, 0, 0, die)
		return s.afterAction(dst, seat, die, false), true
	case TakeOff:
		if s.pos[seat][m.Plane] != Hangar || !s.r.takeoff(die) {
			return dst, false
		}
		dst = s.emitTookOff(dst, seat, 1<<m.Plane, die)
		return s.afterAction(dst, seat, die, true), true
	}
	from := int(s.pos[seat][m.Plane])
	if from < Launch || from >= Finish {
		return dst, false
	}
	l := &s.lead[seat]
	unit := match(word(l), l[m.Plane]) // unitOf, which does not inline
	if m.Split {
		if !s.r.has(rStackSplit) || bits.OnesCount8(unit) < 2 {
			return dst, false
		}
		unit = 1 << m.Plane
	}
	var pl *plan  // the table's, read in place, or worked out into local
	var own uint8 // ownAfter
	var local plan
	if t != nil {
		c := t.sets[(from+die)&63].find(m.Fly, m.NoJump)
		if c == nil {
			return dst, false
		}
		pl = &c.pl
		own = s.ownAt(seat, int(c.at)) &^ unit
	} else if pl = &local; s.plan(pl, seat, unit, from, die, m.Fly, m.NoJump) && s.r.choicesFit(*m, pl) {
		own = s.ownAfter(seat, unit, pl)
	} else {
		return dst, false
	}
	if !s.r.stackOK(own, m.Stack) {
		return dst, false
	}
	dst = s.applyPlan(dst, seat, unit, from, die, pl)
	if m.Stack {
		dst = s.emitUnit(dst, EvStacked, seat, unit|own, 0, pl.final(), 0)
	}
	if die != 6 && !s.allFinished(seat) { // afterAction's most frequent case, inline
		return s.emitTurn(dst, seat, s.nextActive(seat)), true
	}
	return s.afterAction(dst, seat, die, true), true
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

// isActor reports whether seat may roll or move now. It is small enough to be inlined into
// Roll and Move; actorError says why not.
func (s *State) isActor(seat int) bool {
	return seat == int(s.turn) && s.phase != PhaseOver && s.seats&(1<<(seat&3)) != 0
}

// actorError is the error for a seat that isActor rejects.
func (s *State) actorError(seat int) error {
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
	if m.Kind == Advance && uint(m.Plane) < PlanesPerSeat {
		return nil
	}
	return m.checkSlow()
}

// checkSlow is check for the moves other than a well-formed advance.
func (m Move) checkSlow() error {
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
func (s State) AppendLegalMoves(dst []Move) []Move { return s.appendLegal(dst) }

// appendLegal is AppendLegalMoves; kept apart so that AppendLegalMoves inlines and a call
// through a *State does not copy the State.
func (s *State) appendLegal(dst []Move) []Move {
	if s.phase != PhaseMove {
		return dst
	}
	n0 := len(dst)
	dst = s.appendMoves(dst)
	return s.r.appendPass(dst, len(dst) == n0)
}

// appendPass appends "pass" to the moves of a roll when it is legal: when the roll has no other
// move (none), or always without MustMove.
func (r rules) appendPass(dst []Move, none bool) []Move {
	if none || !r.has(rMustMove) {
		dst = append(dst, Move{})
		dst[len(dst)-1].Kind = Pass // written in place, not built and copied
	}
	return dst
}

// appendMoves appends the take-offs and advances for the pending roll: from the course table
// of the rule set when it has one (see courses), else worked out by appendGeneral.
func (s *State) appendMoves(dst []Move) []Move { return s.appendMovesWith(dst, s.courses()) }

// appendMovesWith is appendMoves given the course table of the rule set, or nil.
//
// With the table, the outcome of a roll for a plane is random, and so would be every branch
// on it: each plane's course set comes from one index (row: a take-off set for the hangar, an
// empty one for the planes that cannot move), and its first move is written whatever it is and
// counted by the set's size. Only a plane with a choice (several courses, or own planes on its
// final square) takes the loop of putStacking. Moves are copied whole from the table and their
// plane written in place: a Move built in a local and copied would be read back as one word
// right after its byte-sized stores, which stalls the processor.
func (s *State) appendMovesWith(dst []Move, t *courseTable) []Move {
	if t == nil || s.r.has(rStackSplit) {
		return s.appendGeneral(dst)
	}
	dst = slices.Grow(dst, maxMoves)
	n0 := len(dst)
	buf := (*[maxMoves]Move)(dst[n0 : n0+maxMoves])
	seat, die := int(s.turn)&3, int(s.die)
	w, lw := word(&s.pos[seat]), word(&s.lead[seat])
	rows := &t.row[die&7]
	stacked := ^match(lw^0x03020100, 0) & 0xF // planes moving with a lower plane, rarely any
	n := 0
	for i := range PlanesPerSeat {
		x := rows[(int(s.pos[seat][i])+1)&63] // one index, no branch on the plane's state
		if stacked != 0 && stacked&(1<<i) != 0 {
			x = idleRow
		}
		cs := &t.sets[x&127]
		c := &cs.c[0]
		buf[n&63] = c.m
		buf[n&63].Plane = i
		own := match(w, c.at)
		if own != 0 {
			own &^= match(lw, int8(i))
		}
		if own == 0 && c.n <= 1 {
			n += int(c.n)
			continue
		}
		for v := range c.n { // a flight choice, or own planes to stack with
			c := &cs.c[v&3]
			m := c.m
			m.Plane = i
			n = s.r.putStacking(buf, n, m, match(w, c.at)&^match(lw, int8(i)))
		}
	}
	return dst[:n0+n]
}

// appendGeneral is appendMoves working out every advance with plan: for the rule sets without
// a course table, and to build the tables.
//
// Go keeps no register across a call, so every value live across the calls of plan in the
// loop is spilled and reloaded: the loop keeps few of them and tests the options on s.r where
// it uses them.
func (s *State) appendGeneral(dst []Move) []Move {
	seat, die := int(s.turn)&3, int(s.die)
	for i := range PlanesPerSeat {
		p := int(s.pos[seat][i])
		switch {
		case p == Hangar:
			if s.r.takeoff(die) {
				dst = append(dst, Move{Kind: TakeOff, Plane: i})
			}
			continue
		case p == Finish:
			continue
		}
		lead := s.lead[seat][i]
		split := s.r.has(rStackSplit)
		if int(lead) != i && !split {
			continue // moves with its stack's lowest plane
		}
		unit := match(word(&s.lead[seat]), lead)
		if int(lead) == i {
			dst = s.appendAdvances(dst, seat, i, unit, p, die, false)
		}
		if split && unit&(unit-1) != 0 {
			dst = s.appendAdvances(dst, seat, i, 1<<i, p, die, true)
		}
	}
	return dst
}

// appendAdvances appends every variant of moving unit (named by plane) from p: one per
// combination of the flight and jump choices that the move meets, times the stacking choice.
func (s *State) appendAdvances(dst []Move, seat, plane int, unit uint8, p, die int, split bool) []Move {
	var p0 plan
	if !s.plan(&p0, seat, unit, p, die, false, false) {
		return dst
	}
	return s.appendVariants(dst, seat, plane, unit, p, die, split, &p0)
}

// appendVariants is appendAdvances given the plan p0 of the move without choices.
func (s *State) appendVariants(dst []Move, seat, plane int, unit uint8, p, die int, split bool, p0 *plan) []Move {
	r := s.r
	if r.has(rJumpMandatory) && (!p0.flightChoice || !r.has(rShortcutOptional)) {
		// no choice but stacking
		m := Move{Kind: Advance, Plane: plane, Fly: p0.flew, Split: split}
		return r.appendStacking(dst, m, s.ownAfter(seat, unit, p0))
	}
	for f := range 2 {
		if f == 1 && (!p0.flightChoice || !r.has(rShortcutOptional)) {
			break // no flight on the way, or flying is not a choice (p0 already flew)
		}
		for nj := range 2 {
			if nj == 1 && r.has(rJumpMandatory) {
				break
			}
			m := Move{Kind: Advance, Plane: plane, Fly: f == 1, NoJump: nj == 1, Split: split}
			pl := p0
			var pn plan
			if f|nj != 0 {
				pl = &pn
				s.plan(pl, seat, unit, p, die, m.Fly, m.NoJump)
			}
			if f == 0 {
				m.Fly = pl.flew // a forced flight
			}
			if !r.choicesFit(m, pl) {
				continue
			}
			dst = r.appendStacking(dst, m, s.ownAfter(seat, unit, pl))
		}
	}
	return dst
}

// ownAfter returns the own planes that unit (of seat) would find on its final square after pl:
// the planes it may stack with.
func (s *State) ownAfter(seat int, unit uint8, pl *plan) uint8 {
	if f := pl.final(); pl.alive && f != Finish {
		return s.ownAt(seat, f) &^ unit
	}
	return 0
}

// appendStacking appends m with the stacking choices offered by own planes own on its final
// square.
func (r rules) appendStacking(dst []Move, m Move, own uint8) []Move {
	ends := r.stackings(own)
	if ends&stackApart != 0 {
		dst = append(dst, m)
	}
	if ends&stackMerged != 0 {
		m.Stack = true
		dst = append(dst, m)
	}
	return dst
}

// putStacking is appendStacking writing into buf at n; it returns the new count.
func (r rules) putStacking(buf *[maxMoves]Move, n int, m Move, own uint8) int {
	ends := r.stackings(own)
	if ends == stackApart|stackMerged { // both: first the move that stays apart
		buf[n&63] = m
		n++
	}
	m.Stack = ends&stackMerged != 0
	buf[n&63] = m
	return n + 1
}

// hasMove reports whether the pending roll has a take-off or an advance.
func (s *State) hasMove() bool {
	seat, die := int(s.turn)&3, int(s.die)
	w := word(&s.pos[seat]) // the four planes at once
	hangar := match(w, Hangar)
	if hangar != 0 && s.r.takeoff(die) {
		return true
	}
	if hangar|match(w, Finish) == 0xF {
		return false // no plane on the board
	}
	// Without blocking rules every unit on the board can use every roll.
	if s.r.overshoot() != OvershootBlock && !s.r.has(rStackBlocks) {
		return true
	}
	var buf [maxMoves]Move
	return len(s.appendMoves(buf[:0])) > 0
}

// landing returns where a unit of seat on from stops walking die steps (bounces included), the
// last loop square it walks over forwards, and false if it may not use the roll.
func (s *State) landing(seat, from, die int) (q, passHi int, ok bool) {
	q = from + die
	passHi = q - 1
	if s.r.has(rStackBlocks) && from < TurnIn {
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
		switch s.r.overshoot() {
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
	return !s.r.has(rCrossingBlockedByStack) || !s.stackAt(Opposite(seat), CrossP)
}

// plan is the course of one advance (spec §2.4): the rest points and what happened there.
// Computing it reads the state but changes nothing, so the legal-move generator and the
// validation of a move share it with applyPlan.
type plan struct {
	q, passHi    int8    // die landing (bounces included), last loop square walked over
	rest         [3]int8 // rest points in order
	n            int8    // number of rest points
	flyIdx       int8    // index in rest of the flight's landing, -1 if no flight
	alive        bool    // false: the unit was sent home at rest[n-1]
	flew         bool    // the unit flew the shortcut
	flightChoice bool    // the unit stood on p18 with the flight open
	sawJump      bool    // the unit met an own-colour jump (taken or declined)
}

func (p *plan) final() int {
	if !p.alive {
		return Hangar
	}
	return int(p.rest[p.n-1])
}

// plan works out into p the advance of unit (planes of seat) from from by die with the flight
// and jump choices fly and nojump. It returns false when the unit may not use the roll.
func (s *State) plan(p *plan, seat int, unit uint8, from, die int, fly, nojump bool) bool {
	r := s.r
	q, passHi := from+die, from+die-1
	if q > Finish || r.has(rStackBlocks) { // bounces and blocks
		var ok bool
		if q, passHi, ok = s.landing(seat, from, die); !ok {
			*p = plan{}
			return false
		}
	}
	*p = plan{q: int8(q), passHi: int8(passHi), flyIdx: -1, alive: true}
	size := 0 // 0: no capture can send the unit home (StackCaptureAll), step skips the check
	if r.stackCapture() != StackCaptureAll {
		size = bits.OnesCount8(unit)
	}
	p.rest[0], p.n = int8(q), 1 // the first step, inline
	if !onLoop(q) {
		return true
	}
	if size != 0 && s.dies(seat, size, q) {
		p.alive = false
		return true
	}
	if q%4 != 2 { // every square where the course goes on (p18, p30, own colour) has q%4 == 2
		return true
	}
	takeJump := r.has(rJumpMandatory) || !nojump
	switch {
	case q == ShortcutFrom:
		if s.flightOpen(seat) {
			p.flightChoice = true
			if fly || !r.has(rShortcutOptional) {
				p.flew, p.flyIdx = true, p.n
				if p.step(s, seat, ShortcutTo, size) && r.has(rShortcutThenJump) {
					p.sawJump = true
					if takeJump {
						p.step(s, seat, ShortcutTo+JumpLen, size)
					}
				}
				break
			}
		}
		if r.has(rDeclinedShortcutJumps) {
			p.sawJump = true
			if takeJump {
				p.step(s, seat, q+JumpLen, size)
			}
		}
	case q == ShortcutTo:
		if r.has(rJumpAfterShortcutEnd) {
			p.sawJump = true
			if takeJump {
				p.step(s, seat, q+JumpLen, size)
			}
		}
	case OwnColour(q) && (q < TurnIn || r.has(rJumpFromTurnIn)):
		p.sawJump = true
		if takeJump && p.step(s, seat, q+JumpLen, size) && q+JumpLen == ShortcutFrom && r.has(rJumpThenShortcut) &&
			s.flightOpen(seat) {
			p.flightChoice = true
			if fly || !r.has(rShortcutOptional) {
				p.flew, p.flyIdx = true, p.n
				p.step(s, seat, ShortcutTo, size)
			}
		}
	}
	return true
}

// step adds rest point x and reports whether the unit, size planes, survives it; size 0 means
// that it cannot be sent home.
func (p *plan) step(s *State, seat, x, size int) bool {
	p.rest[p.n] = int8(x)
	p.n++
	if size != 0 && onLoop(x) {
		p.alive = !s.dies(seat, size, x)
	}
	return p.alive
}

// dies reports whether a unit of seat, size planes, resting on its path index x goes home.
func (s *State) dies(seat, size, x int) bool {
	_, dies := s.captures(seat, 0, size, x)
	return dies
}

// captures returns the planes a unit of seat (its planes unit, size of them) sends home by
// resting on its path index x, and whether the unit itself is among them (spec §2.5,
// StackCapture).
func (s *State) captures(seat int, unit uint8, size, x int) (uint16, bool) {
	caps, n := s.victimsAt(seat, x)
	if n == 0 {
		return 0, false
	}
	self := uint16(unit) << (4 * seat)
	switch s.r.stackCapture() {
	case StackCaptureAttackerReturns:
		if n >= 2 {
			return self, true
		}
	case StackCaptureMutual:
		if n >= 2 {
			return caps | self, true
		}
	case StackCaptureByCount:
		if size < n {
			return caps | self, true
		}
	}
	return caps, false
}

// applyPlan moves unit along pl, emitting the walk, jumps, flight, captures and finishing.
func (s *State) applyPlan(dst []Event, seat int, unit uint8, from, die int, pl *plan) []Event {
	dst = append(dst, Event{}) // the walk, emitted here to spare a call
	e := &dst[len(dst)-1]
	e.Seat, e.Kind, e.Planes, e.From, e.To, e.Die = seat, EvMoved, unit, int8(from), pl.q, int8(die)
	e.Rest = pl.rest
	s.foldMoved(seat, unit, pl.q, s.r.has(rStackSplit)) // only a split moves part of a unit
	if s.r.passOver() {
		dst = s.passOver(dst, seat, from+1, int(pl.passHi), int(pl.q))
	}
	prev := int(pl.q) // rest[0], the landing, which ends most moves
	if onLoop(prev) {
		if s.r.stackCapture() == StackCaptureAll { // captureAt without its call
			if caps := s.victims(seat, prev); caps != 0 {
				dst = s.emitCapture(dst, seat, caps, prev, false)
			}
		} else {
			dst = s.captureAt(dst, seat, unit, prev)
		}
	}
	for i := 1; i < int(pl.n); i++ {
		x := int(pl.rest[i])
		if i == int(pl.flyIdx) {
			dst = s.emitHop(dst, EvFlew, seat, unit, ShortcutFrom, ShortcutTo)
			opp := Opposite(seat)
			if s.r.has(rCrossingCapture) && s.seats.Has(opp) {
				if m := s.ownAt(opp, CrossP); m != 0 {
					dst = s.emitCapture(dst, seat, uint16(m)<<(4*opp), 0, true)
				}
			}
		} else {
			dst = s.emitHop(dst, EvJumped, seat, unit, prev, x)
			if s.r.passOver() {
				dst = s.passOver(dst, seat, prev+1, x-1, -1)
			}
		}
		if onLoop(x) {
			dst = s.captureAt(dst, seat, unit, x)
		}
		prev = x
	}
	if pl.alive && pl.final() == Finish {
		dst = s.emitUnit(dst, EvFinished, seat, unit, 0, 0, 0)
	}
	return dst
}

// captureAt emits the captures of unit (of seat) resting on its loop square x, if any.
func (s *State) captureAt(dst []Event, seat int, unit uint8, x int) []Event {
	var caps uint16
	if s.r.stackCapture() == StackCaptureAll { // captures without its call
		caps = s.victims(seat, x)
	} else {
		caps, _ = s.captures(seat, unit, bits.OnesCount8(unit), x)
	}
	if caps != 0 {
		dst = s.emitCapture(dst, seat, caps, x, false)
	}
	return dst
}

// passOver captures on the loop squares lo..hi of seat's path except skip (CapturePassOver).
// The callers check the option first: the check inlines, the loop does not.
func (s *State) passOver(dst []Event, seat, lo, hi, skip int) []Event {
	for sq := lo; sq <= min(hi, TurnIn); sq++ {
		if sq == skip {
			continue
		}
		if caps, n := s.victimsAt(seat, sq); n > 0 {
			dst = s.emitCapture(dst, seat, caps, sq, false)
		}
	}
	return dst
}

// penaltyPlanes returns the planes the third 6 sends home (spec §2.7, option ThirdSix).
func (s *State) penaltyPlanes(seat int) uint8 {
	var m uint8
	for j, p := range s.pos[seat] {
		var back bool
		switch s.r.thirdSix() {
		case ThirdSixReturnMovedBySixes:
			back = s.moved&(1<<j) != 0 && p != Hangar && (p != Finish || s.r.has(rThirdSixReturnsFinished))
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
		dst = s.emit(dst, Event{Kind: EvPlaced, Seat: seat, Place: s.nRank + 1})
		if s.r.endRule() == EndFirstFinisherEnds || s.active().Count() <= 1 {
			return s.gameOver(dst)
		}
		return s.passTurn(dst)
	}
	if die == 6 && s.r.has(rBonusOnSix) && (moved || !s.r.has(rBonusNeedsMove)) {
		return dst
	}
	return s.emitTurn(dst, seat, s.nextActive(seat)) // passTurn, inline
}

// passTurn hands the turn to the next active seat in play order.
func (s *State) passTurn(dst []Event) []Event {
	return s.emitTurn(dst, int(s.turn), s.nextActive(int(s.turn)))
}

// nextActive returns the next active seat after from in play order, or from if there is none.
func (s *State) nextActive(from int) int { return int(nextSeat[s.active()&0xF][from&3]) }

// nextSeat[m][from] is the first seat of m after from in play order, or from if there is none.
var nextSeat = func() (t [16][MaxSeats]int8) {
	for m := range t {
		for from := range MaxSeats {
			t[m][from] = int8(from)
			for k := 1; k <= MaxSeats; k++ {
				if c := (from + k) & 3; m&(1<<c) != 0 {
					t[m][from] = int8(c)
					break
				}
			}
		}
	}
	return t
}()

// gameOver places the last active player, if one is left alone, and ends the game: placed
// players, then the other active players by progress (EndFirstFinisherEnds; ties in play order
// after the winner), then resigned players in reverse order of resigning.
func (s *State) gameOver(dst []Event) []Event {
	act := s.active()
	if act.Count() == 1 {
		dst = s.emit(dst, Event{Kind: EvPlaced, Seat: lowestSeat(act), Place: s.nRank + 1})
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
	if s.pending != 0 && s.start == [MaxSeats]int8{} {
		next = lowestSeat(s.pending) // a new round starts with the lowest seat
	}
	if next != int(s.turn) {
		dst = s.emitTurn(dst, int(s.turn), next)
	}
	return dst
}
