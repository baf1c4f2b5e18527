package aeroplane

// rules is a validated Options packed into one word, so that a State stays a small value that
// is cheap to copy: seventeen flags, nine two-bit enumerations, the seats and the first seat,
// and, worked out from them, which course table the rule set uses.
type rules uint64

const (
	rBonusOnSix rules = 1 << iota
	rThirdSixReturnsFinished
	rJumpMandatory
	rJumpFromTurnIn
	rJumpThenShortcut
	rShortcutThenJump
	rShortcutOptional
	rDeclinedShortcutJumps
	rJumpAfterShortcutEnd
	rCrossingCapture
	rCrossingBlockedByStack
	rStackSplit
	rStackBlocks
	rLaunchAreaSafe
	rMustMove
	rAutoPass
	rBonusNeedsMove
)

// bit offsets of the enumerations (two bits each), the seats (four) and the first seat (two).
const (
	shFirstPlayer = 20 + 2*iota
	shTakeoffRolls
	shTakeoffTarget
	shThirdSix
	shOvershoot
	shCaptureMode
	shStackOptional
	shStackCapture
	shEndRule
	shSeats     // 38
	shFirstSeat = shSeats + 4
	shCourses   = 48 // the key of the course table plus one, 0 for none (see courses)
)

func bit(b bool, f rules) rules {
	if b {
		return f
	}
	return 0
}

// pack packs o, which must have passed Validate.
func pack(o Options) rules {
	r := bit(o.BonusOnSix, rBonusOnSix) | bit(o.ThirdSixReturnsFinished, rThirdSixReturnsFinished) |
		bit(o.JumpMandatory, rJumpMandatory) | bit(o.JumpFromTurnIn, rJumpFromTurnIn) |
		bit(o.JumpThenShortcut, rJumpThenShortcut) | bit(o.ShortcutThenJump, rShortcutThenJump) |
		bit(o.ShortcutOptional, rShortcutOptional) | bit(o.DeclinedShortcutJumps, rDeclinedShortcutJumps) |
		bit(o.JumpAfterShortcutEnd, rJumpAfterShortcutEnd) | bit(o.CrossingCapture, rCrossingCapture) |
		bit(o.CrossingBlockedByStack, rCrossingBlockedByStack) | bit(o.StackSplit, rStackSplit) |
		bit(o.StackBlocks, rStackBlocks) | bit(o.LaunchAreaSafe, rLaunchAreaSafe) |
		bit(o.MustMove, rMustMove) | bit(o.AutoPass, rAutoPass) | bit(o.BonusNeedsMove, rBonusNeedsMove)
	r |= rules(o.FirstPlayer)<<shFirstPlayer | rules(o.TakeoffRolls)<<shTakeoffRolls |
		rules(o.TakeoffTarget)<<shTakeoffTarget | rules(o.ThirdSix)<<shThirdSix | rules(o.Overshoot)<<shOvershoot |
		rules(o.CaptureMode)<<shCaptureMode | rules(o.StackOptional)<<shStackOptional |
		rules(o.StackCapture)<<shStackCapture | rules(o.EndRule)<<shEndRule
	r |= rules(o.Seats)<<shSeats | rules(o.FirstSeat&3)<<shFirstSeat
	return r | r.courseKey()<<shCourses
}

// unpack returns the Options that pack packed.
func (r rules) unpack() Options {
	return Options{
		Seats:                   SeatMask(r>>shSeats) & 0xF,
		FirstPlayer:             FirstPlayer(r.enum(shFirstPlayer)),
		FirstSeat:               int(r>>shFirstSeat) & 3,
		TakeoffRolls:            TakeoffRolls(r.enum(shTakeoffRolls)),
		TakeoffTarget:           TakeoffTarget(r.enum(shTakeoffTarget)),
		BonusOnSix:              r.has(rBonusOnSix),
		ThirdSix:                r.thirdSix(),
		ThirdSixReturnsFinished: r.has(rThirdSixReturnsFinished),
		Overshoot:               r.overshoot(),
		JumpMandatory:           r.has(rJumpMandatory),
		JumpFromTurnIn:          r.has(rJumpFromTurnIn),
		JumpThenShortcut:        r.has(rJumpThenShortcut),
		ShortcutThenJump:        r.has(rShortcutThenJump),
		ShortcutOptional:        r.has(rShortcutOptional),
		DeclinedShortcutJumps:   r.has(rDeclinedShortcutJumps),
		JumpAfterShortcutEnd:    r.has(rJumpAfterShortcutEnd),
		CrossingCapture:         r.has(rCrossingCapture),
		CrossingBlockedByStack:  r.has(rCrossingBlockedByStack),
		CaptureMode:             CaptureMode(r.enum(shCaptureMode)),
		StackOptional:           r.stacking(),
		StackSplit:              r.has(rStackSplit),
		StackBlocks:             r.has(rStackBlocks),
		StackCapture:            r.stackCapture(),
		LaunchAreaSafe:          r.has(rLaunchAreaSafe),
		MustMove:                r.has(rMustMove),
		AutoPass:                r.has(rAutoPass),
		BonusNeedsMove:          r.has(rBonusNeedsMove),
		EndRule:                 r.endRule(),
	}
}

func (r rules) has(f rules) bool           { return r&f != 0 }
func (r rules) enum(sh uint) uint8         { return uint8(r>>sh) & 3 }
func (r rules) thirdSix() ThirdSix         { return ThirdSix(r.enum(shThirdSix)) }
func (r rules) overshoot() Overshoot       { return Overshoot(r.enum(shOvershoot)) }
func (r rules) passOver() bool             { return CaptureMode(r.enum(shCaptureMode)) == CapturePassOver }
func (r rules) stacking() Stacking         { return Stacking(r.enum(shStackOptional)) }
func (r rules) stackCapture() StackCapture { return StackCapture(r.enum(shStackCapture)) }
func (r rules) endRule() EndRule           { return EndRule(r.enum(shEndRule)) }

// takeoff reports whether roll die lets a hangar plane take off.
func (r rules) takeoff(die int) bool {
	switch TakeoffRolls(r.enum(shTakeoffRolls)) {
	case TakeoffSixOnly:
		return die == 6
	case TakeoffFiveOrSix:
		return die >= 5
	}
	return die&1 == 0
}

// stackOK reports whether the stacking choice fits own planes waiting on the final square.
func (r rules) stackOK(own uint8, stack bool) bool {
	if stack {
		return r.stackings(own)&stackMerged != 0
	}
	return r.stackings(own)&stackApart != 0
}

// The ends a unit may choose with own planes waiting on its final square: staying apart and
// merging with them.
const (
	stackApart  = 1
	stackMerged = 2
)

// stackEnds holds stackings by Stacking: StackByChoice either, StackAuto merged, StackNever
// apart.
var stackEnds = [4]uint8{StackByChoice: stackApart | stackMerged, StackAuto: stackMerged, StackNever: stackApart}

// stackings returns the ends (stackApart, stackMerged) a unit may choose with own planes own
// on its final square: with none it stays apart.
func (r rules) stackings(own uint8) uint8 {
	if own == 0 {
		return stackApart
	}
	return stackEnds[r.stacking()&3]
}

// choicesFit reports whether m's flight and jump choices are the ones plan pl made.
func (r rules) choicesFit(m Move, pl *plan) bool {
	return m.Fly == pl.flew && (!m.NoJump || (pl.sawJump && !r.has(rJumpMandatory)))
}
