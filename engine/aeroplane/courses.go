package aeroplane

import "sync/atomic"

// Course tables.
//
// In most rule sets the course of an advance does not depend on the board: no stack blocks the
// walk, no capture sends the mover home, no stack closes the flight, and the landing after an
// overshoot depends on the landing square alone. There the courses of a unit are a function of
// its landing square q = from+die and of the options that shape courses (jumps, the flight,
// overshoot), and the generator and move look them up in a table instead of working them out
// with plan on every roll. A table is built on first use by the general generator and plan
// themselves, on a board with a single plane, so it cannot disagree with them.

// course is one way for a unit to go with a roll: the choices of its move, the plan they give
// and the square where the unit may stack with own planes (noPlane when it finishes).
type course struct {
	m  Move // an advance of plane 0 with the choices
	at int8
	pl plan
}

// courseSet holds the courses of one landing square, n of them, in the order of LegalMoves.
type courseSet struct {
	n uint8
	c [4]course
}

// find returns the course with the choices fly and nojump, or nil when there is none (the move
// is illegal).
func (cs *courseSet) find(fly, nojump bool) *course {
	for v := range cs.n {
		if c := &cs.c[v&3]; c.m.Fly == fly && c.m.NoJump == nojump {
			return c
		}
	}
	return nil
}

// courseTable holds the course sets of advances by landing square q = from+die (1..61), then
// the take-offs by rule (TakeoffRolls) and roll at takeoffRow+8*rule+die, and an empty row
// for the planes that do not move. The rows without a course have at = noPlane.
type courseTable [128]courseSet

const (
	takeoffRow = 64
	idleRow    = 127
)

// courseRules are the options that shape courses, JumpMandatory to JumpAfterShortcutEnd: one
// run of bits of rules, which with the overshoot rule makes the key of a table.
const (
	courseShift = 2
	courseBits  = rules(0x7F)
)

// The key bits, checked at compile time to be the options named above (an array length
// cannot be negative).
const keyed = rJumpMandatory | rJumpFromTurnIn | rJumpThenShortcut | rShortcutThenJump | rShortcutOptional |
	rDeclinedShortcutJumps | rJumpAfterShortcutEnd

var (
	_ [courseBits<<courseShift - keyed]struct{}
	_ [keyed - courseBits<<courseShift]struct{}
)

// noCourses are the options under which a course depends on the board: blocking stacks, a
// flight closed by a stack, and captures that can send the mover home.
const noCourses = rStackBlocks | rCrossingBlockedByStack | 3<<shStackCapture

// courseKey returns the key of r's course table plus one (the options that shape courses and
// the overshoot rule), or 0 when courses depend on the board: noCourses, or OvershootReverse,
// whose landing depends on the start square. pack stores it in the rules.
func (r rules) courseKey() rules {
	if r&noCourses != 0 || r.overshoot() == OvershootReverse {
		return 0
	}
	return 1 + (r>>courseShift&courseBits | rules(r.overshoot())<<7)
}

// courseTables holds the tables by key plus one; the first stays nil.
var courseTables [1024]atomic.Pointer[courseTable]

// courses returns the course table of the rule set, or nil when it has none. New and
// ParseState build the table of their rule set (see useCourses); nil for a rule set with a key
// means only that the courses are worked out with plan.
func (s *State) courses() *courseTable { return courseTables[s.r>>shCourses&1023].Load() }

// useCourses builds the course table of r unless it has none or it is built.
func useCourses(r rules) {
	k := r >> shCourses & 1023
	if k == 0 || courseTables[k].Load() != nil {
		return
	}
	t := new(courseTable)
	for i := range t {
		t[i].c[0].at = noPlane
	}
	for tr := range TakeoffFiveOrSix + 1 {
		for die := 1; die <= 6; die++ {
			if (r&^(3<<shTakeoffRolls) | rules(tr)<<shTakeoffRolls).takeoff(die) {
				cs := &t[takeoffRow+8*int(tr)+die]
				cs.n, cs.c[0].m = 1, Move{Kind: TakeOff}
			}
		}
	}
	for q := 1; q <= Finish-1+6; q++ {
		die := min(q, 6)
		from := q - die
		var s State
		s.r, s.seats = r, 1
		s.clearPlanes()
		s.pos[0][0] = int8(from)
		s.phase, s.turn, s.die = PhaseMove, 0, int8(die)
		var buf [maxMoves]Move
		cs := &t[q]
		for _, m := range s.appendGeneral(buf[:0]) {
			if m.Kind != Advance {
				continue // take-offs of the planes in the hangar
			}
			c := &cs.c[cs.n]
			cs.n++
			c.m = m
			s.plan(&c.pl, 0, 1, from, die, m.Fly, m.NoJump)
			c.at = int8(c.pl.final())
			if c.at == Finish {
				c.at = noPlane
			}
		}
	}
	courseTables[k].CompareAndSwap(nil, t) // or another goroutine built the same table first
}
