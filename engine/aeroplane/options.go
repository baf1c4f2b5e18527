package aeroplane

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// SeatMask is a set of seats: bit s stands for seat s.
type SeatMask uint8

// Has reports whether seat is in the set.
func (m SeatMask) Has(seat int) bool { return seat >= 0 && seat < MaxSeats && m&(1<<seat) != 0 }

// Count returns the number of seats in the set.
func (m SeatMask) Count() int { return bits.OnesCount8(uint8(m)) }

// Seats returns the seats of the set in increasing order.
func (m SeatMask) Seats() []int {
	var out []int
	for s := range MaxSeats {
		if m.Has(s) {
			out = append(out, s)
		}
	}
	return out
}

// String returns the seats as digits in increasing order ("02"), or "-" for the empty set.
func (m SeatMask) String() string { return digits(uint8(m)) }

// DefaultSeats returns the seats used by a game of players players when Options.Seats is 0:
// 0,1,2,3 for 4 players, 0,1,2 for 3, and the opposite seats 0 and 2 for 2 (spec §2.1).
func DefaultSeats(players int) SeatMask {
	switch players {
	case 2:
		return 0b0101
	case 3:
		return 0b0111
	case 4:
		return 0b1111
	}
	return 0
}

// FirstPlayer says who rolls first (spec §2.1).
type FirstPlayer uint8

const (
	// FirstHighestRoll: every player rolls once in seat order; the highest roll starts, tied
	// highest players roll again. The start rolls are Roll calls in PhaseStartRoll.
	FirstHighestRoll FirstPlayer = iota
	// FirstSeat0: the lowest seat in play starts (seat 0 with the default seats).
	FirstSeat0
	// FirstGiven: Options.FirstSeat starts.
	FirstGiven
)

// TakeoffRolls is the set of rolls that let a hangar plane take off.
type TakeoffRolls uint8

const (
	TakeoffEven      TakeoffRolls = iota // 2, 4, 6
	TakeoffSixOnly                       // 6
	TakeoffFiveOrSix                     // 5, 6 (a 5 gives no bonus roll)
)

// TakeoffTarget is where a plane goes when it takes off; the launch area is the only rule.
type TakeoffTarget uint8

// LaunchArea: the plane moves to its launch area (p0) and the roll is used up.
const LaunchArea TakeoffTarget = 0

// ThirdSix is the penalty for the third 6 in one turn (spec §2.7).
type ThirdSix uint8

const (
	ThirdSixReturnMovedBySixes    ThirdSix = iota // planes moved by the first two 6s go home
	ThirdSixReturnAllActive                       // every unfinished plane of the player goes home
	ThirdSixReturnAllInclFinished                 // all four planes go home, finished ones too
	ThirdSixNone                                  // no penalty: the third 6 is played and rolls go on
)

// Overshoot says what a roll past the centre does (spec §2.4 step 2).
type Overshoot uint8

const (
	OvershootBounce  Overshoot = iota // walk the excess back from the centre
	OvershootBlock                    // the unit may not use this roll
	OvershootReverse                  // move back by the whole roll (possibly onto the loop)
	OvershootFinish                   // the unit finishes anyway
)

// CaptureMode says where captures happen besides the crossing square.
type CaptureMode uint8

const (
	// CaptureRestPointsOnly: on every rest point of the move.
	CaptureRestPointsOnly CaptureMode = iota
	// CapturePassOver: on every rest point, and also on every loop square the unit walks over
	// forwards during the die walk or a jump (never the flight).
	CapturePassOver
)

// Stacking says whether a unit merges with own planes on its final square (option
// StackOptional, spec §2.6).
type Stacking uint8

const (
	StackByChoice Stacking = iota // the player chooses (separate legal moves)
	StackAuto                     // always merge
	StackNever                    // never merge; planes share the square but move singly
)

// StackCapture says what happens when a unit lands on two or more opposing planes (spec §2.6).
type StackCapture uint8

const (
	StackCaptureAll             StackCapture = iota // the planes are all captured
	StackCaptureAttackerReturns                     // the mover goes home instead, the planes stay
	StackCaptureMutual                              // mover and planes all go home
	StackCaptureByCount                             // capture if the mover has at least as many planes, else mutual
)

// EndRule says when the game ends (spec §2.8).
type EndRule uint8

const (
	EndPlayToLast        EndRule = iota // play on until one player is left
	EndFirstFinisherEnds                // the game ends when the first player finishes
)

// Options is the rule set of one game: spec §2.1 (Seats, FirstPlayer) and every variant of §3.
// Start from DefaultOptions: the zero Options is not a valid rule set (LaunchAreaSafe must be
// true). An Options value is comparable.
type Options struct {
	Seats       SeatMask    // seats in play; 0 = DefaultSeats(players)
	FirstPlayer FirstPlayer // who starts (default FirstHighestRoll)
	FirstSeat   int         // the starting seat when FirstPlayer is FirstGiven, else 0

	TakeoffRolls  TakeoffRolls  // default TakeoffEven
	TakeoffTarget TakeoffTarget // always LaunchArea
	BonusOnSix    bool          // a 6 earns another roll (default true)

	ThirdSix                ThirdSix // default ThirdSixReturnMovedBySixes
	ThirdSixReturnsFinished bool     // with ReturnMovedBySixes, finished planes go home too (default false)

	Overshoot Overshoot // default OvershootBounce

	JumpMandatory         bool // the own-colour jump is forced; false makes it a choice (default true)
	JumpFromTurnIn        bool // landing on p50 jumps into the home column to p54 (default false)
	JumpThenShortcut      bool // a jump ending on p18 may continue with the flight (default true)
	ShortcutThenJump      bool // a flight from a direct landing on p18 is followed by the jump p30 -> p34 (default false)
	ShortcutOptional      bool // the flight is a choice; false flies whenever possible (default true)
	DeclinedShortcutJumps bool // a direct landing on p18 without flight jumps to p22 (default true)
	JumpAfterShortcutEnd  bool // a direct landing on p30 jumps to p34 (default true)

	CrossingCapture        bool        // a flight sends the opposite seat's planes on its p53 home (default true)
	CrossingBlockedByStack bool        // an opposing stack on the crossing square forbids the flight (default false)
	CaptureMode            CaptureMode // default CaptureRestPointsOnly

	StackOptional Stacking     // default StackByChoice
	StackSplit    bool         // a plane of a stack may also move alone (default false)
	StackBlocks   bool         // an opposing stack cannot be passed during the die walk (default false)
	StackCapture  StackCapture // default StackCaptureAll

	LaunchAreaSafe bool    // always true: nothing can land in a launch area
	MustMove       bool    // a player with a legal move must move; false allows a pass (default true)
	AutoPass       bool    // a roll with no legal move is passed automatically; false waits for a Pass move (default true)
	BonusNeedsMove bool    // a 6 earns the bonus roll only if it was used for a move (default false)
	EndRule        EndRule // default EndPlayToLast
}

// DefaultOptions returns the default rule set of spec §2 (the bold column of §3), with the
// first player chosen by the highest roll.
func DefaultOptions() Options {
	return Options{
		BonusOnSix:            true,
		JumpMandatory:         true,
		JumpThenShortcut:      true,
		ShortcutOptional:      true,
		DeclinedShortcutJumps: true,
		JumpAfterShortcutEnd:  true,
		CrossingCapture:       true,
		LaunchAreaSafe:        true,
		MustMove:              true,
		AutoPass:              true,
	}
}

// Validate checks that the options describe a game of players players. It returns an error
// wrapping ErrBadOptions when players is not 2 to 4, an enumerated option is out of range,
// Seats is not 0 or a set of exactly players seats, FirstSeat is set without FirstGiven (or
// names a seat not in play with it), TakeoffTarget is not LaunchArea, LaunchAreaSafe is false,
// or an option is set that can never take effect: ThirdSixReturnsFinished without
// ThirdSixReturnMovedBySixes; StackSplit, StackBlocks or CrossingBlockedByStack with
// StackNever; BonusNeedsMove or a third-six penalty without BonusOnSix.
func (o Options) Validate(players int) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadOptions}, a...)...)
	}
	if players < 2 || players > MaxSeats {
		return bad("players must be 2 to 4, not %d", players)
	}
	switch {
	case o.FirstPlayer > FirstGiven:
		return bad("FirstPlayer %d", o.FirstPlayer)
	case o.TakeoffRolls > TakeoffFiveOrSix:
		return bad("TakeoffRolls %d", o.TakeoffRolls)
	case o.TakeoffTarget != LaunchArea:
		return bad("TakeoffTarget must be LaunchArea")
	case o.ThirdSix > ThirdSixNone:
		return bad("ThirdSix %d", o.ThirdSix)
	case o.Overshoot > OvershootFinish:
		return bad("Overshoot %d", o.Overshoot)
	case o.CaptureMode > CapturePassOver:
		return bad("CaptureMode %d", o.CaptureMode)
	case o.StackOptional > StackNever:
		return bad("StackOptional %d", o.StackOptional)
	case o.StackCapture > StackCaptureByCount:
		return bad("StackCapture %d", o.StackCapture)
	case o.EndRule > EndFirstFinisherEnds:
		return bad("EndRule %d", o.EndRule)
	case !o.LaunchAreaSafe:
		return bad("LaunchAreaSafe must be true: no move can reach a launch area")
	case o.ThirdSixReturnsFinished && o.ThirdSix != ThirdSixReturnMovedBySixes:
		return bad("ThirdSixReturnsFinished needs ThirdSix ReturnMovedBySixes")
	case o.StackOptional == StackNever && (o.StackSplit || o.StackBlocks || o.CrossingBlockedByStack):
		return bad("StackSplit, StackBlocks and CrossingBlockedByStack need stacks (StackOptional is Never)")
	case !o.BonusOnSix && (o.BonusNeedsMove || o.ThirdSix != ThirdSixNone):
		return bad("without BonusOnSix there is no bonus roll: BonusNeedsMove must be false and ThirdSix None")
	}
	seats := o.Seats
	if seats == 0 {
		seats = DefaultSeats(players)
	} else if seats > 0b1111 || seats.Count() != players {
		return bad("Seats %s does not hold %d seats", seats, players)
	}
	if o.FirstPlayer == FirstGiven {
		if !seats.Has(o.FirstSeat) {
			return bad("FirstSeat %d is not in play", o.FirstSeat)
		}
	} else if o.FirstSeat != 0 {
		return bad("FirstSeat needs FirstPlayer Given")
	}
	return nil
}

// option notation --------------------------------------------------------------------------

type optField struct {
	name  string
	names []string // value names for enumerations, nil for booleans and special fields
	get   func(o *Options) int
	set   func(o *Options, v int)
}

func boolField(name string, p func(o *Options) *bool) optField {
	return optField{name: name, names: []string{"false", "true"},
		get: func(o *Options) int { return b2i(*p(o)) },
		set: func(o *Options, v int) { *p(o) = v != 0 }}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var optFields = []optField{
	{name: "Seats", get: func(o *Options) int { return int(o.Seats) }, set: func(o *Options, v int) { o.Seats = SeatMask(v) }},
	{name: "FirstPlayer", names: []string{"HighestRoll", "Seat0", "Given"},
		get: func(o *Options) int { return int(o.FirstPlayer) }, set: func(o *Options, v int) { o.FirstPlayer = FirstPlayer(v) }},
	{name: "FirstSeat", get: func(o *Options) int { return o.FirstSeat }, set: func(o *Options, v int) { o.FirstSeat = v }},
	{name: "TakeoffRolls", names: []string{"Even", "SixOnly", "FiveOrSix"},
		get: func(o *Options) int { return int(o.TakeoffRolls) }, set: func(o *Options, v int) { o.TakeoffRolls = TakeoffRolls(v) }},
	{name: "TakeoffTarget", names: []string{"LaunchArea"},
		get: func(o *Options) int { return int(o.TakeoffTarget) }, set: func(o *Options, v int) { o.TakeoffTarget = TakeoffTarget(v) }},
	boolField("BonusOnSix", func(o *Options) *bool { return &o.BonusOnSix }),
	{name: "ThirdSix", names: []string{"ReturnMovedBySixes", "ReturnAllActive", "ReturnAllInclFinished", "None"},
		get: func(o *Options) int { return int(o.ThirdSix) }, set: func(o *Options, v int) { o.ThirdSix = ThirdSix(v) }},
	boolField("ThirdSixReturnsFinished", func(o *Options) *bool { return &o.ThirdSixReturnsFinished }),
	{name: "Overshoot", names: []string{"Bounce", "Block", "Reverse", "Finish"},
		get: func(o *Options) int { return int(o.Overshoot) }, set: func(o *Options, v int) { o.Overshoot = Overshoot(v) }},
	boolField("JumpMandatory", func(o *Options) *bool { return &o.JumpMandatory }),
	boolField("JumpFromTurnIn", func(o *Options) *bool { return &o.JumpFromTurnIn }),
	boolField("JumpThenShortcut", func(o *Options) *bool { return &o.JumpThenShortcut }),
	boolField("ShortcutThenJump", func(o *Options) *bool { return &o.ShortcutThenJump }),
	boolField("ShortcutOptional", func(o *Options) *bool { return &o.ShortcutOptional }),
	boolField("DeclinedShortcutJumps", func(o *Options) *bool { return &o.DeclinedShortcutJumps }),
	boolField("JumpAfterShortcutEnd", func(o *Options) *bool { return &o.JumpAfterShortcutEnd }),
	boolField("CrossingCapture", func(o *Options) *bool { return &o.CrossingCapture }),
	boolField("CrossingBlockedByStack", func(o *Options) *bool { return &o.CrossingBlockedByStack }),
	{name: "CaptureMode", names: []string{"RestPointsOnly", "PassOver"},
		get: func(o *Options) int { return int(o.CaptureMode) }, set: func(o *Options, v int) { o.CaptureMode = CaptureMode(v) }},
	{name: "StackOptional", names: []string{"true", "Auto", "Never"},
		get: func(o *Options) int { return int(o.StackOptional) }, set: func(o *Options, v int) { o.StackOptional = Stacking(v) }},
	boolField("StackSplit", func(o *Options) *bool { return &o.StackSplit }),
	boolField("StackBlocks", func(o *Options) *bool { return &o.StackBlocks }),
	{name: "StackCapture", names: []string{"All", "AttackerReturns", "Mutual", "ByCount"},
		get: func(o *Options) int { return int(o.StackCapture) }, set: func(o *Options, v int) { o.StackCapture = StackCapture(v) }},
	boolField("LaunchAreaSafe", func(o *Options) *bool { return &o.LaunchAreaSafe }),
	boolField("MustMove", func(o *Options) *bool { return &o.MustMove }),
	boolField("AutoPass", func(o *Options) *bool { return &o.AutoPass }),
	boolField("BonusNeedsMove", func(o *Options) *bool { return &o.BonusNeedsMove }),
	{name: "EndRule", names: []string{"PlayToLast", "FirstFinisherEnds"},
		get: func(o *Options) int { return int(o.EndRule) }, set: func(o *Options, v int) { o.EndRule = EndRule(v) }},
}

func (f *optField) format(v int) string {
	switch {
	case f.name == "Seats":
		return SeatMask(v).String()
	case f.names == nil || v < 0 || v >= len(f.names):
		return strconv.Itoa(v)
	}
	return f.names[v]
}

func (f *optField) parse(s string) (int, bool) {
	if f.name == "Seats" {
		m, ok := parseDigits(s, MaxSeats)
		return int(m), ok
	}
	if f.names == nil {
		v, err := strconv.Atoi(s)
		return v, err == nil
	}
	for i, n := range f.names {
		if n == s {
			return i, true
		}
	}
	return 0, false
}

// String returns the options that differ from DefaultOptions as "Name:Value" pairs joined by
// commas in declaration order (for example "TakeoffRolls:SixOnly,ThirdSix:None"), or "default".
// Enumerated values use the spec's names; booleans are true/false; Seats is a digit string.
func (o Options) String() string {
	def := DefaultOptions()
	var b strings.Builder
	for i := range optFields {
		f := &optFields[i]
		v := f.get(&o)
		if v == f.get(&def) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.name)
		b.WriteByte(':')
		b.WriteString(f.format(v))
	}
	if b.Len() == 0 {
		return "default"
	}
	return b.String()
}

// ParseOptions parses the notation of Options.String: "default", or comma-separated
// "Name:Value" pairs applied to DefaultOptions. It returns an error wrapping ErrSyntax for an
// unknown name or value or a repeated name; it does not call Validate.
func ParseOptions(s string) (Options, error) {
	o := DefaultOptions()
	if s == "default" {
		return o, nil
	}
	if s == "" {
		return o, fmt.Errorf("%w: empty options", ErrSyntax)
	}
	var seen uint64
	for _, kv := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(kv, ":")
		if !ok {
			return o, fmt.Errorf("%w: option %q", ErrSyntax, kv)
		}
		found := false
		for i := range optFields {
			f := &optFields[i]
			if f.name != name {
				continue
			}
			if seen&(1<<i) != 0 {
				return o, fmt.Errorf("%w: option %s repeated", ErrSyntax, name)
			}
			seen |= 1 << i
			v, ok := f.parse(val)
			if !ok {
				return o, fmt.Errorf("%w: option %s value %q", ErrSyntax, name, val)
			}
			f.set(&o, v)
			found = true
			break
		}
		if !found {
			return o, fmt.Errorf("%w: unknown option %q", ErrSyntax, name)
		}
	}
	return o, nil
}

// digits writes the set bits of m as digits ("013"), or "-" if m is 0.
func digits(m uint8) string {
	var b [8]byte
	return string(appendDigits(b[:0], m))
}

// appendDigits appends the notation of digits to b.
func appendDigits(b []byte, m uint8) []byte {
	if m == 0 {
		return append(b, '-')
	}
	for i := range 8 {
		if m&(1<<i) != 0 {
			b = append(b, byte('0'+i))
		}
	}
	return b
}

// parseDigits parses the notation of digits: "-" or strictly increasing digits below limit.
func parseDigits(s string, limit int) (uint8, bool) {
	if s == "-" {
		return 0, true
	}
	if s == "" {
		return 0, false
	}
	var m uint8
	last := -1
	for i := 0; i < len(s); i++ {
		d := int(s[i]) - '0'
		if d < 0 || d >= limit || d <= last {
			return 0, false
		}
		m |= 1 << d
		last = d
	}
	return m, true
}
