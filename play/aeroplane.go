package play

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	"github.com/hangarhq/hangar/phrase"
)

// drawAeroplane draws the board with the planes on it, then a line per
// seat naming where each of its planes is (the board shows a square with
// several planes by their count).
func (v *view) drawAeroplane(b *strings.Builder, st *aeroplanev1.State) {
	if st.GetPhase() == aeroplanev1.Phase_PHASE_MOVE && st.GetDie() > 0 {
		fmt.Fprintf(b, "die: %s\n", v.p.paint(strconv.Itoa(int(st.GetDie())), "1"))
	} else if v.lastDie > 0 {
		fmt.Fprintf(b, "last roll: %d\n", v.lastDie)
	}
	if v.board != nil {
		b.WriteString(v.aeroplaneGrid(st))
	} else if v.noBoard != "" {
		b.WriteString(v.noBoard + "\n")
	}
	for _, seat := range st.GetSeats() {
		var where []string
		for _, pl := range st.GetPlanes() {
			if pl.GetSeat() != seat {
				continue
			}
			w := fmt.Sprintf("%d:%s", pl.GetIndex(), position(pl.GetPosition()))
			if pl.GetStacked() {
				w += "+"
			}
			where = append(where, w)
		}
		c := v.colour(seat)
		fmt.Fprintf(b, "  %s %-7s %-16s %s\n", v.planeGlyph(c, strings.ToUpper(c[:1])+" "), title(c), "("+v.player(seat)+")", strings.Join(where, "  "))
	}
}

// position names a path index.
func position(p int32) string {
	switch {
	case p < 0:
		return phrase.Say("aeroplane.position.hangar")
	case p == 0:
		return phrase.Say("aeroplane.position.launch")
	case p >= 56:
		return phrase.Say("aeroplane.position.centre")
	case p > 50:
		return phrase.Say("aeroplane.position.home", "n", strconv.Itoa(int(p-50)))
	}
	return strconv.Itoa(int(p))
}

// planeGlyph paints two characters as a plane of colour c.
func (v *view) planeGlyph(c, text string) string {
	return v.p.paint(text, bg(c), onColour(c), "1")
}

// aeroplaneGrid is the board drawn on its grid: every square two cells
// wide at its x, y, empty squares in their colour, planes as their seat's
// letter and index in reverse colour (a count and the letter when several
// planes share a square).
func (v *view) aeroplaneGrid(st *aeroplanev1.State) string {
	bd := v.board
	on := map[int32][]*aeroplanev1.Plane{}
	for _, pl := range st.GetPlanes() {
		seat, pos := pl.GetSeat(), pl.GetPosition()
		if int(seat) >= len(bd.GetSeats()) {
			continue
		}
		path := bd.GetSeats()[seat].GetPath()
		if i := int(pos) + 1; i >= 0 && i < len(path) {
			on[path[i]] = append(on[path[i]], pl)
		}
	}
	minX, minY, maxX, maxY := int32(1<<30), int32(1<<30), int32(-1<<30), int32(-1<<30)
	for _, sq := range bd.GetSquares() {
		minX, minY = min(minX, sq.GetX()), min(minY, sq.GetY())
		maxX, maxY = max(maxX, sq.GetX()), max(maxY, sq.GetY())
	}
	// A square centred on x covers cells x-1 and x.
	left, top := min(minX-1, 0), min(minY, 0)
	rows := int(maxY-top) + 1
	cols := int(maxX-left) + 1
	grid := make([][]string, rows)
	for r := range grid {
		grid[r] = make([]string, cols)
	}
	for _, sq := range bd.GetSquares() {
		r, c := int(sq.GetY()-top), int(sq.GetX()-1-left)
		grid[r][c] = v.squareText(sq, on[sq.GetIndex()])
		if c+1 < cols {
			grid[r][c+1] = "\x00" // covered by the square to its left
		}
	}
	var b strings.Builder
	for _, row := range grid {
		var line strings.Builder
		blank := 0
		for _, cell := range row {
			switch cell {
			case "\x00":
			case "":
				blank++
			default:
				line.WriteString(strings.Repeat(" ", blank))
				blank = 0
				line.WriteString(cell)
			}
		}
		b.WriteString("  " + line.String() + "\n")
	}
	return b.String()
}

// squareText is one square, two cells wide.
func (v *view) squareText(sq *aeroplanev1.Square, planes []*aeroplanev1.Plane) string {
	if len(planes) > 0 {
		seat := planes[0].GetSeat()
		same := true
		for _, pl := range planes {
			same = same && pl.GetSeat() == seat
		}
		c := v.colour(seat)
		letter := strings.ToUpper(c[:1])
		switch {
		case len(planes) == 1:
			return v.planeGlyph(c, letter+strconv.Itoa(int(planes[0].GetIndex())))
		case same:
			return v.planeGlyph(c, strconv.Itoa(len(planes))+letter)
		}
		return v.p.paint(strconv.Itoa(len(planes))+"*", "7", "1")
	}
	c := ""
	if sq.GetColourSeat() >= 0 {
		c = v.colour(sq.GetColourSeat())
	}
	glyph := "[]"
	switch {
	case sq.GetKind() == aeroplanev1.SquareKind_SQUARE_KIND_HANGAR:
		glyph = "##"
	case sq.GetKind() == aeroplanev1.SquareKind_SQUARE_KIND_LAUNCH:
		glyph = "^^"
	case sq.GetKind() == aeroplanev1.SquareKind_SQUARE_KIND_HOME_COLUMN:
		glyph = "=="
	case sq.GetKind() == aeroplanev1.SquareKind_SQUARE_KIND_CENTRE:
		return v.p.paint("()", "1")
	case sq.GetFlightStart():
		glyph = "~>"
	case sq.GetFlightEnd():
		glyph = ">~"
	case sq.GetTurnIn():
		glyph = "[>"
	}
	if !v.p.on && c != "" && glyph == "[]" {
		// Without colour a loop square names its colour.
		return c[:1] + "."
	}
	return v.p.paint(glyph, fg(c))
}

// aeroplaneEvent is one game event in words, from the phrasebook the web
// client shares.
func (v *view) aeroplaneEvent(e *aeroplanev1.Event) string {
	names := func(seats []int32) string {
		var out []string
		for _, seat := range seats {
			out = append(out, v.seatName(seat))
		}
		return strings.Join(out, ", ")
	}
	say := func(key string) string {
		return phrase.Say(key,
			"who", v.seatName(e.GetSeat()),
			"planes", v.planeList(e.GetPlanes()),
			"die", v.p.paint(strconv.Itoa(int(e.GetDie())), "1"),
			"from", position(e.GetFrom()),
			"to", position(e.GetTo()),
			"place", strconv.Itoa(int(e.GetPlace())),
			"next", v.seatName(e.GetNextSeat()),
			"ranking", names(e.GetRanking()),
			"seats", names(e.GetSeats()))
	}
	switch e.GetKind() {
	case aeroplanev1.EventKind_EVENT_KIND_ROLLED:
		if v.last.GetPhase() == "start" || strings.Contains(e.GetNotation(), "start") {
			return say("aeroplane.rolled.start")
		}
		return say("aeroplane.rolled")
	case aeroplanev1.EventKind_EVENT_KIND_PASSED:
		return say("aeroplane.passed")
	case aeroplanev1.EventKind_EVENT_KIND_TOOK_OFF:
		return say("aeroplane.took_off")
	case aeroplanev1.EventKind_EVENT_KIND_MOVED:
		return say("aeroplane.moved")
	case aeroplanev1.EventKind_EVENT_KIND_JUMPED:
		return say("aeroplane.jumped")
	case aeroplanev1.EventKind_EVENT_KIND_FLEW:
		return say("aeroplane.flew")
	case aeroplanev1.EventKind_EVENT_KIND_CAPTURED:
		if e.GetCrossing() {
			return say("aeroplane.captured.crossing")
		}
		return say("aeroplane.captured")
	case aeroplanev1.EventKind_EVENT_KIND_STACKED:
		return say("aeroplane.stacked")
	case aeroplanev1.EventKind_EVENT_KIND_FINISHED:
		return say("aeroplane.finished")
	case aeroplanev1.EventKind_EVENT_KIND_PLACED:
		return say("aeroplane.placed")
	case aeroplanev1.EventKind_EVENT_KIND_PENALTY:
		return say("aeroplane.penalty")
	case aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED:
		return say("aeroplane.turn_passed")
	case aeroplanev1.EventKind_EVENT_KIND_GAME_OVER:
		return say("aeroplane.game_over")
	case aeroplanev1.EventKind_EVENT_KIND_RESIGNED:
		return say("aeroplane.resigned")
	case aeroplanev1.EventKind_EVENT_KIND_START_TIE:
		return say("aeroplane.start_tie")
	case aeroplanev1.EventKind_EVENT_KIND_FIRST_PLAYER:
		return say("aeroplane.first_player")
	}
	return e.GetNotation()
}

// planeList names planes: "Red 2", "Red 1+3".
func (v *view) planeList(refs []*aeroplanev1.PlaneRef) string {
	bySeat := map[int32][]string{}
	var seats []int32
	for _, r := range refs {
		if _, ok := bySeat[r.GetSeat()]; !ok {
			seats = append(seats, r.GetSeat())
		}
		bySeat[r.GetSeat()] = append(bySeat[r.GetSeat()], strconv.Itoa(int(r.GetIndex())))
	}
	sort.Slice(seats, func(i, j int) bool { return seats[i] < seats[j] })
	var parts []string
	for _, seat := range seats {
		parts = append(parts, v.seatName(seat)+" "+strings.Join(bySeat[seat], "+"))
	}
	return strings.Join(parts, ", ")
}

// aeroplaneMove is a legal move with what it would do: "plane 2: 12 -> 18,
// jump to 22, captures Blue 1".
func (v *view) aeroplaneMove(mv *aeroplanev1.Move, die int32) string {
	if mv.GetKind() == aeroplanev1.MoveKind_MOVE_KIND_PASS {
		return "pass (leave the roll unused)"
	}
	pv := mv.GetPreview()
	unit := fmt.Sprintf("plane %d", mv.GetPlane())
	if len(pv.GetPlanes()) > 1 {
		var idx []string
		for _, r := range pv.GetPlanes() {
			idx = append(idx, strconv.Itoa(int(r.GetIndex())))
		}
		unit = "planes " + strings.Join(idx, "+")
	}
	if pv == nil {
		return fmt.Sprintf("%s: %s", unit, mv.GetNotation())
	}
	var parts []string
	if mv.GetKind() == aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF {
		parts = append(parts, fmt.Sprintf("%s: take off (hangar -> %s)", unit, position(pv.GetTo())))
	} else {
		path := pv.GetPath()
		steps := min(int(die), len(path))
		if steps <= 0 {
			steps = len(path)
		}
		landed := pv.GetTo()
		if steps > 0 {
			landed = path[steps-1]
		}
		parts = append(parts, fmt.Sprintf("%s: %s -> %s", unit, position(pv.GetFrom()), position(landed)))
		prev := landed
		for _, p := range path[steps:] {
			if pv.GetFlight() && prev == 18 && p == 30 {
				parts = append(parts, "fly to 30")
			} else {
				parts = append(parts, "jump to "+position(p))
			}
			prev = p
		}
	}
	if len(pv.GetCaptures()) > 0 {
		c := "captures " + v.planeList(pv.GetCaptures())
		if pv.GetCrossing() {
			c += " crossing"
		}
		parts = append(parts, c)
	}
	if pv.GetStacks() {
		parts = append(parts, "stacks")
	}
	if pv.GetFinishes() {
		parts = append(parts, "finishes")
	}
	if mv.GetNoJump() {
		parts = append(parts, "no jump")
	}
	if mv.GetSplit() {
		parts = append(parts, "alone out of its stack")
	}
	return strings.Join(parts, ", ")
}
