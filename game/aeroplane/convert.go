package aeroplane

import (
	"fmt"
	"math/bits"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
	"github.com/hangarhq/hangar/game"
)

// This file is the one converter between the API's hangar.aeroplane.v1
// messages and engine/aeroplane.

// engineOptions converts API options to the engine's, starting from its
// defaults: an unset field keeps the default rule.
func engineOptions(p *aeroplanev1.Options) (engine.Options, error) {
	o := engine.DefaultOptions()
	if p == nil {
		return o, nil
	}
	enum := func(v int32, max int32, name string) (int32, error) {
		if v < 0 || v > max {
			return 0, fmt.Errorf("%w: %s %d is not a known value", game.ErrInvalid, name, v)
		}
		return v, nil
	}
	var err error
	set := func(dst any, v int32, max int32, name string) {
		if err != nil || v == 0 {
			return
		}
		var n int32
		if n, err = enum(v, max, name); err != nil {
			return
		}
		n-- // API enums count from 1; the engine's from 0
		switch d := dst.(type) {
		case *engine.TakeoffRolls:
			*d = engine.TakeoffRolls(n)
		case *engine.ThirdSix:
			*d = engine.ThirdSix(n)
		case *engine.Overshoot:
			*d = engine.Overshoot(n)
		case *engine.Stacking:
			*d = engine.Stacking(n)
		case *engine.StackCapture:
			*d = engine.StackCapture(n)
		case *engine.CaptureMode:
			*d = engine.CaptureMode(n)
		case *engine.EndRule:
			*d = engine.EndRule(n)
		case *engine.FirstPlayer:
			*d = engine.FirstPlayer(n)
		}
	}
	set(&o.TakeoffRolls, int32(p.GetTakeoffRolls()), 3, "takeoff_rolls")
	set(&o.ThirdSix, int32(p.GetThirdSix()), 4, "third_six")
	set(&o.Overshoot, int32(p.GetOvershoot()), 4, "overshoot")
	set(&o.StackOptional, int32(p.GetStackMode()), 3, "stack_mode")
	set(&o.StackCapture, int32(p.GetStackCapture()), 4, "stack_capture")
	set(&o.CaptureMode, int32(p.GetCaptureMode()), 2, "capture_mode")
	set(&o.EndRule, int32(p.GetEndRule()), 2, "end_rule")
	set(&o.FirstPlayer, int32(p.GetFirstPlayer()), 3, "first_player")
	if err != nil {
		return o, err
	}
	o.FirstSeat = int(p.GetFirstSeat())
	bools := []struct {
		v   *bool
		dst *bool
	}{
		{p.BonusOnSix, &o.BonusOnSix},
		{p.ThirdSixReturnsFinished, &o.ThirdSixReturnsFinished},
		{p.JumpMandatory, &o.JumpMandatory},
		{p.JumpFromTurnIn, &o.JumpFromTurnIn},
		{p.JumpThenShortcut, &o.JumpThenShortcut},
		{p.ShortcutThenJump, &o.ShortcutThenJump},
		{p.ShortcutOptional, &o.ShortcutOptional},
		{p.DeclinedShortcutJumps, &o.DeclinedShortcutJumps},
		{p.JumpAfterShortcutEnd, &o.JumpAfterShortcutEnd},
		{p.CrossingCapture, &o.CrossingCapture},
		{p.CrossingBlockedByStack, &o.CrossingBlockedByStack},
		{p.StackSplit, &o.StackSplit},
		{p.StackBlocks, &o.StackBlocks},
		{p.LaunchAreaSafe, &o.LaunchAreaSafe},
		{p.MustMove, &o.MustMove},
		{p.AutoPass, &o.AutoPass},
		{p.BonusNeedsMove, &o.BonusNeedsMove},
	}
	for _, b := range bools {
		if b.v != nil {
			*b.dst = *b.v
		}
	}
	for _, s := range p.GetSeats() {
		if s < 0 || s >= engine.MaxSeats || o.Seats.Has(int(s)) {
			return o, fmt.Errorf("%w: seats must be distinct seats 0 to 3", game.ErrInvalid)
		}
		o.Seats |= 1 << s
	}
	return o, nil
}

// optionsProto is the complete API form of o.
func optionsProto(o engine.Options) *aeroplanev1.Options {
	b := func(v bool) *bool { return &v }
	p := &aeroplanev1.Options{
		TakeoffRolls:            aeroplanev1.TakeoffRolls(o.TakeoffRolls + 1),
		ThirdSix:                aeroplanev1.ThirdSix(o.ThirdSix + 1),
		Overshoot:               aeroplanev1.Overshoot(o.Overshoot + 1),
		StackMode:               aeroplanev1.StackMode(o.StackOptional + 1),
		StackCapture:            aeroplanev1.StackCapture(o.StackCapture + 1),
		CaptureMode:             aeroplanev1.CaptureMode(o.CaptureMode + 1),
		EndRule:                 aeroplanev1.EndRule(o.EndRule + 1),
		FirstPlayer:             aeroplanev1.FirstPlayer(o.FirstPlayer + 1),
		FirstSeat:               int32(o.FirstSeat),
		BonusOnSix:              b(o.BonusOnSix),
		ThirdSixReturnsFinished: b(o.ThirdSixReturnsFinished),
		JumpMandatory:           b(o.JumpMandatory),
		JumpFromTurnIn:          b(o.JumpFromTurnIn),
		JumpThenShortcut:        b(o.JumpThenShortcut),
		ShortcutThenJump:        b(o.ShortcutThenJump),
		ShortcutOptional:        b(o.ShortcutOptional),
		DeclinedShortcutJumps:   b(o.DeclinedShortcutJumps),
		JumpAfterShortcutEnd:    b(o.JumpAfterShortcutEnd),
		CrossingCapture:         b(o.CrossingCapture),
		CrossingBlockedByStack:  b(o.CrossingBlockedByStack),
		StackSplit:              b(o.StackSplit),
		StackBlocks:             b(o.StackBlocks),
		LaunchAreaSafe:          b(o.LaunchAreaSafe),
		MustMove:                b(o.MustMove),
		AutoPass:                b(o.AutoPass),
		BonusNeedsMove:          b(o.BonusNeedsMove),
		Notation:                o.String(),
	}
	for _, s := range o.Seats.Seats() {
		p.Seats = append(p.Seats, int32(s))
	}
	return p
}

func engineMove(p *aeroplanev1.Move) (engine.Move, error) {
	if p.GetNotation() != "" {
		return engine.ParseMove(p.GetNotation())
	}
	m := engine.Move{Plane: int(p.GetPlane()), Fly: p.GetFly(), NoJump: p.GetNoJump(), Stack: p.GetStack(), Split: p.GetSplit()}
	switch p.GetKind() {
	case aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF:
		m.Kind = engine.TakeOff
	case aeroplanev1.MoveKind_MOVE_KIND_ADVANCE:
		m.Kind = engine.Advance
	case aeroplanev1.MoveKind_MOVE_KIND_PASS:
		m.Kind = engine.Pass
	default:
		return m, fmt.Errorf("%w: move kind is required", game.ErrInvalid)
	}
	if m.Plane < 0 || m.Plane >= engine.PlanesPerSeat {
		return m, fmt.Errorf("%w: plane must be 0 to 3", game.ErrInvalid)
	}
	return m, nil
}

func moveProto(m engine.Move) *aeroplanev1.Move {
	p := &aeroplanev1.Move{}
	setMove(p, m)
	return p
}

// setMove sets p, a new message, to the API form of m.
func setMove(p *aeroplanev1.Move, m engine.Move) {
	kind := moveKinds[m.Kind]
	p.Kind, p.Plane, p.Fly, p.Stack, p.NoJump, p.Split, p.Notation = kind, int32(m.Plane), m.Fly, m.Stack, m.NoJump,
		m.Split, m.String()
}

// moveKinds are the API's move kinds by the engine's (a move listed among
// the legal ones is set for each, so the table is made once).
var moveKinds = map[engine.MoveKind]aeroplanev1.MoveKind{
	engine.TakeOff: aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF,
	engine.Advance: aeroplanev1.MoveKind_MOVE_KIND_ADVANCE,
	engine.Pass:    aeroplanev1.MoveKind_MOVE_KIND_PASS,
}

// EventProto is the API (and stored) form of an engine event; the kinds are numbered
// alike (TestEnumsPinned).
func EventProto(e engine.Event) *aeroplanev1.Event {
	p := &aeroplanev1.Event{}
	setEvent(p, e)
	return p
}

// setEvent sets p, a new message, to the API form of e; its plane
// references are made in one block.
func setEvent(p *aeroplanev1.Event, e engine.Event) {
	p.Kind, p.Seat, p.Die, p.From = aeroplanev1.EventKind(e.Kind), int32(e.Seat), int32(e.Die), int32(e.From)
	p.To, p.Crossing, p.NextSeat, p.Place, p.Notation = int32(e.To), e.Crossing, int32(e.Next), int32(e.Place), e.String()
	if n := bits.OnesCount8(e.Planes&(1<<engine.PlanesPerSeat-1)) + bits.OnesCount16(e.Captured); n > 0 {
		p.Planes = make([]*aeroplanev1.PlaneRef, 0, n)
		block := make([]aeroplanev1.PlaneRef, n)
		for i := range engine.PlanesPerSeat {
			if e.Planes&(1<<i) != 0 {
				r := &block[len(p.Planes)]
				r.Seat, r.Index = int32(e.Seat), int32(i)
				p.Planes = append(p.Planes, r)
			}
		}
		for i := range 16 {
			if e.Captured&(1<<i) != 0 {
				r := &block[len(p.Planes)]
				r.Seat, r.Index = int32(i/4), int32(i%4)
				p.Planes = append(p.Planes, r)
			}
		}
	}
	for _, r := range e.Rest {
		if r != 0 {
			p.RestPoints = append(p.RestPoints, int32(r))
		}
	}
	if e.Kind == engine.EvGameOver {
		for _, r := range e.Ranking {
			if r >= 0 {
				p.Ranking = append(p.Ranking, int32(r))
			}
		}
	}
	for _, s := range e.Seats.Seats() {
		p.Seats = append(p.Seats, int32(s))
	}
}
