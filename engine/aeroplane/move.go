package aeroplane

import (
	"fmt"
	"strconv"
	"strings"
)

// MoveKind is what a move does with the roll.
type MoveKind uint8

const (
	// TakeOff moves hangar plane Plane to the launch area; the roll is used up.
	TakeOff MoveKind = iota + 1
	// Advance moves the unit of plane Plane (the whole stack unless Split) by the roll.
	Advance
	// Pass leaves the roll unused: allowed when there is no other legal move and AutoPass is
	// off, or always when MustMove is off.
	Pass
)

// Move is a player's choice for the pending roll. The choices of one advance are separate
// legal moves: Fly, NoJump and Stack say what the move does at its choice points and are set
// exactly when that happens, also when the rules force it (so a legal move describes its own
// outcome). The zero Move is not a move.
type Move struct {
	Kind MoveKind
	Fly  bool // the unit flies the shortcut p18 -> p30
	// NoJump declines the own-colour jump of this move (only with JumpMandatory off).
	NoJump bool
	Stack  bool // the unit merges with the own planes on its final square
	Split  bool // only plane Plane leaves its stack (StackSplit)
	Plane  int  // 0..3; for a stack any plane of it (LegalMoves names the lowest)
}

// String returns the move's notation: "T<plane>" for a take-off, "A<plane>" for an advance
// followed by "+fly", "+nojump", "+stack", "+split" for its choices, and "pass".
// Examples: "T0", "A2", "A1+fly+stack", "pass".
func (m Move) String() string {
	switch m.Kind {
	case TakeOff:
		return "T" + strconv.Itoa(m.Plane)
	case Pass:
		return "pass"
	case Advance:
		var buf [48]byte // the string is the one allocation
		b := strconv.AppendInt(append(buf[:0], 'A'), int64(m.Plane), 10)
		if m.Fly {
			b = append(b, "+fly"...)
		}
		if m.NoJump {
			b = append(b, "+nojump"...)
		}
		if m.Stack {
			b = append(b, "+stack"...)
		}
		if m.Split {
			b = append(b, "+split"...)
		}
		return string(b)
	}
	return fmt.Sprintf("?%d", m.Kind)
}

// ParseMove parses the notation of Move.String. It returns an error wrapping ErrSyntax when s
// is not a move.
func ParseMove(s string) (Move, error) {
	bad := func() (Move, error) {
		return Move{}, fmt.Errorf("%w: move %.40q; expected T<plane> (take off), A<plane> (advance) with any of +fly, +nojump, +stack, +split in that order, or pass; a plane is 0 to 3", ErrSyntax, s)
	}
	if s == "pass" {
		return Move{Kind: Pass}, nil
	}
	if len(s) < 2 || s[1] < '0' || s[1] > '3' {
		return bad()
	}
	m := Move{Plane: int(s[1] - '0')}
	switch s[0] {
	case 'T':
		if len(s) != 2 {
			return bad()
		}
		m.Kind = TakeOff
		return m, nil
	case 'A':
		m.Kind = Advance
	default:
		return bad()
	}
	rest := s[2:]
	flags := []struct {
		name string
		p    *bool
	}{{"+fly", &m.Fly}, {"+nojump", &m.NoJump}, {"+stack", &m.Stack}, {"+split", &m.Split}}
	for _, f := range flags {
		if strings.HasPrefix(rest, f.name) {
			*f.p = true
			rest = rest[len(f.name):]
		}
	}
	if rest != "" {
		return bad()
	}
	return m, nil
}
