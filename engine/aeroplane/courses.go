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
// and the square where the unit may stack with own planes (noPlane when it finishes or takes
// off).
type course struct {
	m  Move // an advance of plane 0 with the choices, or a take-off
	at int8
	n  uint8 // in the first course of a set: how many courses the set has
	pl plan
}

// courseSet holds the courses of one landing square in the order of LegalMoves; c[0].n says
// how many. Four courses of 32 bytes make 128, a shift to index.
type courseSet struct {
	c [4]course
}

// find returns the course with the choices fly and nojump, or nil when there is none (the move
// is illegal).
func (cs *courseSet) find(fly, nojump bool) *course {
	if c := &cs.c[0]; c.n != 0 && c.m.Fly == fly && c.m.NoJump == nojump {
		return c // the first, most often the only one
	}
	for v := range cs.c[0].n {
		if c := &cs.c[v&3]; c.m.Fly == fly && c.m.NoJump == nojump {
			return c
		}
	}
	return nil
}

// courseTable holds the course sets of advances by landing square q = from+die (1..61), then
// the take-offs by roll at takeoffRow+die and an empty set for the planes that do not move;
// the sets without a course have at = noPlane. row[die][p+1] is the set of a plane on path
// index p (Hangar..Finish) for roll die: the generator's one index for every plane.
type courseTable struct {
	sets [128]courseSet
	row  [8][64]uint8
}

const (
	takeoffRow = 64
	idleRow    = 127
)

// The options that shape courses, JumpMandatory to JumpAfterShortcutEnd, are one run of bits
// of rules; with the overshoot rule and the take-off rolls they make the key of a table.
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

// courseKey returns the key of r's course table plus one (the options that shape courses, the
// overshoot rule and the take-off rolls), or 0 when courses depend on the board: noCourses, or
// OvershootReverse, whose landing depends on the start square. pack stores it in the rules.
func (r rules) courseKey() rules {
	if r&noCourses != 0 || r.overshoot() == OvershootReverse {
		return 0
	}
	return 1 + (r>>courseShift&courseBits | rules(r.overshoot())<<7 | rules(r.enum(shTakeoffRolls))<<9)
}

// courseTables holds the tables by key plus one; the first stays nil.
var courseTables [2048]atomic.Pointer[courseTable]

// courses returns the course table of the rule set, or nil when it has none. New and
// ParseState build the table of their rule set (see useCourses); nil for a rule set with a key
// means only that the courses are worked out with plan.
func (s *State) courses() *courseTable { return courseTables[s.r>>shCourses&2047].Load() }

// useCourses builds the course table of r unless it has none or it is built.
func useCourses(r rules) {
	k := r >> shCourses & 2047
	if k == 0 || courseTables[k].Load() != nil {
		return
	}
	t := new(courseTable)
	for i := range t.sets {
		t.sets[i].c[0].at = noPlane
	}
	for die := 1; die <= 6; die++ {
		if r.takeoff(die) {
			c := &t.sets[takeoffRow+die].c[0]
			c.n, c.m = 1, Move{Kind: TakeOff}
		}
		t.row[die][0] = takeoffRow + uint8(die) // Hangar
		for p := Launch; p < Finish; p++ {
			t.row[die][p+1] = uint8(p + die)
		}
		t.row[die][Finish+1] = idleRow
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
		cs := &t.sets[q]
		for _, m := range s.appendGeneral(buf[:0]) {
			if m.Kind != Advance {
				continue // take-offs of the planes in the hangar
			}
			c := &cs.c[cs.c[0].n]
			cs.c[0].n++
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
