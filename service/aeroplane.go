package service

import (
	"fmt"
	"math/rand/v2"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/engine/aeroplane"
	"github.com/hangarhq/hangar/engine/aeroplane/bot"
)

// This file is the one converter between the API's hangar.aeroplane.v1
// messages and engine/aeroplane.

// aeroplaneRules adapts engine/aeroplane to the service.
type aeroplaneRules struct{}

// engineOptions converts API options to the engine's, starting from its
// defaults: an unset field keeps the default rule.
func engineOptions(p *aeroplanev1.Options) (aeroplane.Options, error) {
	o := aeroplane.DefaultOptions()
	if p == nil {
		return o, nil
	}
	enum := func(v int32, max int32, name string) (int32, error) {
		if v < 0 || v > max {
			return 0, fmt.Errorf("%w: %s %d is not a known value", errInvalid, name, v)
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
		case *aeroplane.TakeoffRolls:
			*d = aeroplane.TakeoffRolls(n)
		case *aeroplane.ThirdSix:
			*d = aeroplane.ThirdSix(n)
		case *aeroplane.Overshoot:
			*d = aeroplane.Overshoot(n)
		case *aeroplane.Stacking:
			*d = aeroplane.Stacking(n)
		case *aeroplane.StackCapture:
			*d = aeroplane.StackCapture(n)
		case *aeroplane.CaptureMode:
			*d = aeroplane.CaptureMode(n)
		case *aeroplane.EndRule:
			*d = aeroplane.EndRule(n)
		case *aeroplane.FirstPlayer:
			*d = aeroplane.FirstPlayer(n)
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
		if s < 0 || s >= aeroplane.MaxSeats || o.Seats.Has(int(s)) {
			return o, fmt.Errorf("%w: seats must be distinct seats 0 to 3", errInvalid)
		}
		o.Seats |= 1 << s
	}
	return o, nil
}

// optionsProto is the complete API form of o.
func optionsProto(o aeroplane.Options) *aeroplanev1.Options {
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

func (aeroplaneRules) normalize(g *hangarv1.GameOptions, seatCount int) (*hangarv1.GameOptions, error) {
	if g != nil && g.GetGame() != nil && g.GetAeroplane() == nil {
		return nil, fmt.Errorf("%w: options are for another game", errInvalid)
	}
	if seatCount < 2 || seatCount > aeroplane.MaxSeats {
		return nil, fmt.Errorf("%w: seat_count must be 2 to 4 for Aeroplane Chess", errInvalid)
	}
	o, err := engineOptions(g.GetAeroplane())
	if err != nil {
		return nil, err
	}
	if o.Seats == 0 {
		o.Seats = aeroplane.DefaultSeats(seatCount)
	}
	if err := o.Validate(seatCount); err != nil {
		return nil, err
	}
	return &hangarv1.GameOptions{Game: &hangarv1.GameOptions_Aeroplane{Aeroplane: optionsProto(o)}}, nil
}

func (aeroplaneRules) seats(g *hangarv1.GameOptions, seatCount int) []int32 {
	var out []int32
	out = append(out, g.GetAeroplane().GetSeats()...)
	if len(out) != seatCount { // options from before normalisation: the defaults
		out = out[:0]
		for _, s := range aeroplane.DefaultSeats(seatCount).Seats() {
			out = append(out, int32(s))
		}
	}
	return out
}

func (aeroplaneRules) start(g *hangarv1.GameOptions, seats []int32) (game, error) {
	o, err := engineOptions(g.GetAeroplane())
	if err != nil {
		return nil, err
	}
	// A lobby started early plays with the seats actually taken.
	o.Seats = 0
	for _, s := range seats {
		o.Seats |= 1 << s
	}
	if o.FirstPlayer == aeroplane.FirstGiven && !o.Seats.Has(o.FirstSeat) {
		o.FirstPlayer, o.FirstSeat = aeroplane.FirstSeat0, 0
	}
	st, err := aeroplane.New(len(seats), o)
	if err != nil {
		return nil, err
	}
	return aeroplaneGame{st}, nil
}

// aeroplaneGame is a game in play of Aeroplane Chess.
type aeroplaneGame struct{ s aeroplane.State }

func (g aeroplaneGame) turn() int32 { return int32(g.s.Turn()) }
func (g aeroplaneGame) needsRoll() bool {
	return g.s.Phase() == aeroplane.PhaseRoll || g.s.Phase() == aeroplane.PhaseStartRoll
}
func (g aeroplaneGame) over() bool { return g.s.Over() }
func (g aeroplaneGame) ranking() []int32 {
	var out []int32
	for _, s := range g.s.Ranking() {
		out = append(out, int32(s))
	}
	return out
}

func (g aeroplaneGame) wrap(s aeroplane.State, evs []aeroplane.Event, err error) (game, []*hangarv1.Event, error) {
	if err != nil {
		return nil, nil, err
	}
	out := make([]*hangarv1.Event, len(evs))
	for i, e := range evs {
		out[i] = &hangarv1.Event{Body: &hangarv1.Event_Aeroplane{Aeroplane: eventProto(e)}}
	}
	return aeroplaneGame{s}, out, nil
}

func (g aeroplaneGame) roll(seat int32, die int) (game, []*hangarv1.Event, error) {
	return g.wrap(g.s.Roll(int(seat), die))
}

func (g aeroplaneGame) move(seat int32, m *hangarv1.GameMove) (game, []*hangarv1.Event, error) {
	pm := m.GetAeroplane()
	if pm == nil {
		return nil, nil, fmt.Errorf("%w: move is not an Aeroplane Chess move", errInvalid)
	}
	mv, err := engineMove(pm)
	if err != nil {
		return nil, nil, err
	}
	return g.wrap(g.s.Move(int(seat), mv))
}

func (g aeroplaneGame) resign(seat int32) (game, []*hangarv1.Event, error) {
	return g.wrap(g.s.Resign(int(seat)))
}

func (g aeroplaneGame) legalMoves() []*hangarv1.GameMove {
	var out []*hangarv1.GameMove
	for _, m := range g.s.LegalMoves() {
		out = append(out, &hangarv1.GameMove{Game: &hangarv1.GameMove_Aeroplane{Aeroplane: moveProto(m)}})
	}
	return out
}

func (g aeroplaneGame) botMove(r *rand.Rand) *hangarv1.GameMove {
	m := bot.NewGreedy(r).Choose(g.s)
	return &hangarv1.GameMove{Game: &hangarv1.GameMove_Aeroplane{Aeroplane: moveProto(m)}}
}

func (g aeroplaneGame) apply(ev *hangarv1.Event) (game, error) {
	pe := ev.GetAeroplane()
	if pe == nil {
		return nil, fmt.Errorf("not an Aeroplane Chess event")
	}
	e, err := aeroplane.ParseEvent(pe.GetNotation())
	if err != nil {
		return nil, err
	}
	s, err := g.s.Apply(e)
	if err != nil {
		return nil, err
	}
	return aeroplaneGame{s}, nil
}

func (g aeroplaneGame) state() *hangarv1.GameState {
	s := g.s
	p := &aeroplanev1.State{
		Phase:    aeroplanev1.Phase(s.Phase() + 1),
		TurnSeat: int32(s.Turn()),
		Die:      int32(s.Die()),
		Sixes:    int32(s.Sixes()),
		Ranking:  g.ranking(),
		Notation: s.String(),
	}
	for _, seat := range s.Seats() {
		p.Seats = append(p.Seats, int32(seat))
		for i := range aeroplane.PlanesPerSeat {
			pl := s.Plane(seat, i)
			p.Planes = append(p.Planes, &aeroplanev1.Plane{Seat: int32(seat), Index: int32(i), Position: int32(pl.Pos),
				LoopSquare: int32(aeroplane.Loop(seat, pl.Pos)), Stacked: pl.Stacked()})
		}
	}
	return &hangarv1.GameState{Game: &hangarv1.GameState_Aeroplane{Aeroplane: p}}
}

func engineMove(p *aeroplanev1.Move) (aeroplane.Move, error) {
	if p.GetNotation() != "" {
		return aeroplane.ParseMove(p.GetNotation())
	}
	m := aeroplane.Move{Plane: int(p.GetPlane()), Fly: p.GetFly(), NoJump: p.GetNoJump(), Stack: p.GetStack(), Split: p.GetSplit()}
	switch p.GetKind() {
	case aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF:
		m.Kind = aeroplane.TakeOff
	case aeroplanev1.MoveKind_MOVE_KIND_ADVANCE:
		m.Kind = aeroplane.Advance
	case aeroplanev1.MoveKind_MOVE_KIND_PASS:
		m.Kind = aeroplane.Pass
	default:
		return m, fmt.Errorf("%w: move kind is required", errInvalid)
	}
	if m.Plane < 0 || m.Plane >= aeroplane.PlanesPerSeat {
		return m, fmt.Errorf("%w: plane must be 0 to 3", errInvalid)
	}
	return m, nil
}

func moveProto(m aeroplane.Move) *aeroplanev1.Move {
	kind := map[aeroplane.MoveKind]aeroplanev1.MoveKind{
		aeroplane.TakeOff: aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF,
		aeroplane.Advance: aeroplanev1.MoveKind_MOVE_KIND_ADVANCE,
		aeroplane.Pass:    aeroplanev1.MoveKind_MOVE_KIND_PASS,
	}[m.Kind]
	return &aeroplanev1.Move{Kind: kind, Plane: int32(m.Plane), Fly: m.Fly, Stack: m.Stack, NoJump: m.NoJump,
		Split: m.Split, Notation: m.String()}
}

// eventKinds maps engine event kinds to the API's; they are numbered alike.
func eventProto(e aeroplane.Event) *aeroplanev1.Event {
	p := &aeroplanev1.Event{
		Kind: aeroplanev1.EventKind(e.Kind), Seat: int32(e.Seat), Die: int32(e.Die), From: int32(e.From),
		To: int32(e.To), Crossing: e.Crossing, NextSeat: int32(e.Next), Place: int32(e.Place), Notation: e.String(),
	}
	for i := range aeroplane.PlanesPerSeat {
		if e.Planes&(1<<i) != 0 {
			p.Planes = append(p.Planes, &aeroplanev1.PlaneRef{Seat: int32(e.Seat), Index: int32(i)})
		}
	}
	for i := range 16 {
		if e.Captured&(1<<i) != 0 {
			p.Planes = append(p.Planes, &aeroplanev1.PlaneRef{Seat: int32(i / 4), Index: int32(i % 4)})
		}
	}
	for _, r := range e.Rest {
		if r != 0 {
			p.RestPoints = append(p.RestPoints, int32(r))
		}
	}
	if e.Kind == aeroplane.EvGameOver {
		for _, r := range e.Ranking {
			if r >= 0 {
				p.Ranking = append(p.Ranking, int32(r))
			}
		}
	}
	for _, s := range e.Seats.Seats() {
		p.Seats = append(p.Seats, int32(s))
	}
	return p
}

// rolledDie returns the die of a (non-start) roll event, or 0.
func rolledDie(ev *hangarv1.Event) int32 {
	if e := ev.GetAeroplane(); e != nil && e.GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED {
		return e.GetDie()
	}
	return 0
}
