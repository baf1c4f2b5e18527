package connectfour

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
	"github.com/hangarhq/hangar/examples/connectfour/engine"
)

// ErrSyntax: an event's notation does not parse. It wraps engine.ErrSyntax.
var ErrSyntax = fmt.Errorf("%w: event", engine.ErrSyntax)

// FormatEvent returns e in the notation of the package comment: "dropped
// seat=0 at=4,1", "won seat=0 line=1,1/2,1/3,1/4,1", "drawn" or "resigned
// seat=1". It returns "?" for an event without a kind.
func FormatEvent(e *connectfourv1.Event) string {
	switch k := e.GetKind().(type) {
	case *connectfourv1.Event_DiscDropped:
		d := k.DiscDropped
		return fmt.Sprintf("dropped seat=%d at=%s", d.GetSeat(), formatCell(d.GetColumn(), d.GetRow()))
	case *connectfourv1.Event_GameWon:
		line := make([]string, len(k.GameWon.GetLine()))
		for i, c := range k.GameWon.GetLine() {
			line[i] = formatCell(c.GetColumn(), c.GetRow())
		}
		return fmt.Sprintf("won seat=%d line=%s", k.GameWon.GetSeat(), strings.Join(line, "/"))
	case *connectfourv1.Event_GameDrawn:
		return "drawn"
	case *connectfourv1.Event_SeatResigned:
		return fmt.Sprintf("resigned seat=%d", k.SeatResigned.GetSeat())
	}
	return "?"
}

func formatCell(col, row int32) string {
	return engine.Cell{Col: int(col), Row: int(row)}.String()
}

// ParseEvent returns the event written in FormatEvent's notation. It
// returns an error wrapping ErrSyntax for anything else, a cell off the
// board and a seat other than 0 and 1 included.
func ParseEvent(text string) (*connectfourv1.Event, error) {
	kind, rest, _ := strings.Cut(text, " ")
	fields := map[string]string{}
	var keys []string
	if rest != "" {
		for f := range strings.SplitSeq(rest, " ") {
			k, v, ok := strings.Cut(f, "=")
			if !ok || fields[k] != "" {
				return nil, fmt.Errorf("%w: %q", ErrSyntax, text)
			}
			fields[k] = v
			keys = append(keys, k)
		}
	}
	want := func(ks ...string) error {
		if strings.Join(keys, " ") != strings.Join(ks, " ") {
			return fmt.Errorf("%w: %q has fields %q, want %q", ErrSyntax, text, keys, ks)
		}
		return nil
	}
	var err error
	seat := func() int32 {
		switch fields["seat"] {
		case "0":
			return 0
		case "1":
			return 1
		}
		err = errors.Join(err, fmt.Errorf("%w: seat %q in %q", ErrSyntax, fields["seat"], text))
		return 0
	}
	var e *connectfourv1.Event
	switch kind {
	case "dropped":
		if err := want("seat", "at"); err != nil {
			return nil, err
		}
		c, cerr := parseCell(fields["at"])
		e = &connectfourv1.Event{Kind: &connectfourv1.Event_DiscDropped{DiscDropped: &connectfourv1.DiscDropped{
			Seat: seat(), Column: c.GetColumn(), Row: c.GetRow()}}}
		err = errors.Join(err, cerr)
	case "won":
		if err := want("seat", "line"); err != nil {
			return nil, err
		}
		w := &connectfourv1.GameWon{Seat: seat()}
		for s := range strings.SplitSeq(fields["line"], "/") {
			c, cerr := parseCell(s)
			err = errors.Join(err, cerr)
			w.Line = append(w.Line, c)
		}
		e = &connectfourv1.Event{Kind: &connectfourv1.Event_GameWon{GameWon: w}}
	case "drawn":
		if err := want(); err != nil {
			return nil, err
		}
		e = &connectfourv1.Event{Kind: &connectfourv1.Event_GameDrawn{GameDrawn: &connectfourv1.GameDrawn{}}}
	case "resigned":
		if err := want("seat"); err != nil {
			return nil, err
		}
		e = &connectfourv1.Event{Kind: &connectfourv1.Event_SeatResigned{SeatResigned: &connectfourv1.SeatResigned{Seat: seat()}}}
	default:
		return nil, fmt.Errorf("%w: %q", ErrSyntax, text)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// parseCell reads a cell in the notation: its column and row counted from
// 1, "4,1".
func parseCell(s string) (*connectfourv1.Cell, error) {
	c, r, ok := strings.Cut(s, ",")
	col, cerr := strconv.Atoi(c)
	row, rerr := strconv.Atoi(r)
	if !ok || cerr != nil || rerr != nil || col < 1 || col > engine.Cols || row < 1 || row > engine.Rows ||
		strconv.Itoa(col) != c || strconv.Itoa(row) != r {
		return nil, fmt.Errorf("%w: cell %q", ErrSyntax, s)
	}
	return &connectfourv1.Cell{Column: int32(col - 1), Row: int32(row - 1)}, nil
}
