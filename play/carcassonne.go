package play

import (
	"fmt"
	"strconv"
	"strings"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	"github.com/hangarhq/hangar/phrase"
)

// drawCarcassonne draws the map of the tiles laid (each tile three rows of
// five cells: its sides' cities C, roads | and -, a cloister M, a follower
// as its seat's letter), then the scores, supplies and the tile in hand.
func (v *view) drawCarcassonne(b *strings.Builder, st *carcassonnev1.State) {
	b.WriteString(v.carcassonneMap(st))
	for seat := range st.GetScores() {
		seat := int32(seat)
		c := v.colour(seat)
		supply := int32(0)
		if int(seat) < len(st.GetSupply()) {
			supply = st.GetSupply()[seat]
		}
		fmt.Fprintf(b, "  %s %-7s %-16s %3d points, %d followers in supply\n",
			v.p.paint(strings.ToUpper(c[:1])+" ", bg(c), onColour(c), "1"), title(c), "("+v.player(seat)+")", st.GetScores()[seat], supply)
	}
	line := fmt.Sprintf("  %d tiles left", st.GetTilesLeft())
	if t := st.GetTile(); t != nil && t.GetName() != "" {
		line += fmt.Sprintf("; in hand: %s (%s)", t.GetName(), featuresText(t.GetFeatures()))
	}
	if st.GetPhase() == carcassonnev1.Phase_PHASE_LANDING && st.GetTarget() != nil {
		line += fmt.Sprintf("; landing at %d,%d", st.GetTarget().GetX(), st.GetTarget().GetY())
	}
	b.WriteString(line + "\n")
}

// featuresText lists a tile's features: "f0 city+pennant, f1 road, f2 field".
func featuresText(fs []*carcassonnev1.Feature) string {
	var parts []string
	for _, f := range fs {
		p := fmt.Sprintf("f%d %s", f.GetIndex(), kindName(f.GetKind()))
		if f.GetPennant() {
			p += "+pennant"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func kindName(k carcassonnev1.FeatureKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "FEATURE_KIND_"))
}

// carcassonneMap draws the placed tiles with x and y rulers.
func (v *view) carcassonneMap(st *carcassonnev1.State) string {
	if len(st.GetBoard()) == 0 {
		return ""
	}
	type cell struct{ x, y int32 }
	tiles := map[cell]*carcassonnev1.PlacedTile{}
	minX, minY, maxX, maxY := int32(1<<30), int32(1<<30), int32(-1<<30), int32(-1<<30)
	for _, t := range st.GetBoard() {
		tiles[cell{t.GetX(), t.GetY()}] = t
		minX, minY = min(minX, t.GetX()), min(minY, t.GetY())
		maxX, maxY = max(maxX, t.GetX()), max(maxY, t.GetY())
	}
	followers := map[cell]int32{}
	for _, f := range st.GetFollowers() {
		followers[cell{f.GetX(), f.GetY()}] = f.GetSeat() + 1
	}
	var b, ruler strings.Builder
	ruler.WriteString("      ")
	for x := minX; x <= maxX; x++ {
		fmt.Fprintf(&ruler, "%-5s", strconv.Itoa(int(x)))
	}
	b.WriteString(strings.TrimRight(ruler.String(), " ") + "\n")
	for y := minY; y <= maxY; y++ {
		var rows [3]strings.Builder
		fmt.Fprintf(&rows[0], "      ")
		fmt.Fprintf(&rows[1], "  %3d ", y)
		fmt.Fprintf(&rows[2], "      ")
		for x := minX; x <= maxX; x++ {
			t := tiles[cell{x, y}]
			if t == nil {
				for i := range rows {
					rows[i].WriteString("     ")
				}
				continue
			}
			side := func(sd carcassonnev1.Side) carcassonnev1.FeatureKind {
				k := carcassonnev1.FeatureKind_FEATURE_KIND_FIELD
				for _, f := range t.GetFeatures() {
					for _, fs := range f.GetSides() {
						if fs == sd && (f.GetKind() == carcassonnev1.FeatureKind_FEATURE_KIND_CITY || f.GetKind() == carcassonnev1.FeatureKind_FEATURE_KIND_ROAD) {
							k = f.GetKind()
						}
					}
				}
				return k
			}
			edge := func(sd carcassonnev1.Side, road string) string {
				switch side(sd) {
				case carcassonnev1.FeatureKind_FEATURE_KIND_CITY:
					return v.p.paint("C", "33")
				case carcassonnev1.FeatureKind_FEATURE_KIND_ROAD:
					return road
				}
				return v.p.paint(".", "32")
			}
			centre := " "
			for _, f := range t.GetFeatures() {
				switch f.GetKind() {
				case carcassonnev1.FeatureKind_FEATURE_KIND_CLOISTER:
					centre = "M"
				case carcassonnev1.FeatureKind_FEATURE_KIND_MACHINE:
					centre = "^"
				}
			}
			if seat := followers[cell{x, y}]; seat > 0 {
				c := v.colour(seat - 1)
				centre = v.p.paint(strings.ToUpper(c[:1]), bg(c), onColour(c), "1")
			}
			n, e, so, w := edge(carcassonnev1.Side_SIDE_NORTH, "|"), edge(carcassonnev1.Side_SIDE_EAST, "-"), edge(carcassonnev1.Side_SIDE_SOUTH, "|"), edge(carcassonnev1.Side_SIDE_WEST, "-")
			rows[0].WriteString("+ " + n + " +")
			rows[1].WriteString(w + " " + centre + " " + e)
			rows[2].WriteString("+ " + so + " +")
		}
		for i := range rows {
			b.WriteString(strings.TrimRight(rows[i].String(), " ") + "\n")
		}
	}
	return b.String()
}

// carcassonneEvent is one game event in words, from the phrasebook the
// web client shares.
func (v *view) carcassonneEvent(e *carcassonnev1.Event) string {
	say := func(key string) string {
		return phrase.Say(key,
			"who", v.seatName(e.GetSeat()),
			"tile", e.GetTile(),
			"at", fmt.Sprintf("%d,%d", e.GetX(), e.GetY()),
			"rotation", strconv.Itoa(int(e.GetRotation())),
			"feature", strconv.Itoa(int(e.GetFeature())),
			"roll", strconv.Itoa(int(e.GetRoll())),
			"points", strconv.Itoa(int(e.GetPoints())),
			"kind", phrase.Say("carcassonne.feature."+kindName(e.GetFeatureKind())))
	}
	switch e.GetKind() {
	case carcassonnev1.EventKind_EVENT_KIND_DREW:
		return say("carcassonne.drew")
	case carcassonnev1.EventKind_EVENT_KIND_DISCARDED:
		return say("carcassonne.discarded")
	case carcassonnev1.EventKind_EVENT_KIND_PLACED:
		return say("carcassonne.placed")
	case carcassonnev1.EventKind_EVENT_KIND_DEPLOYED:
		return say("carcassonne.deployed")
	case carcassonnev1.EventKind_EVENT_KIND_PASSED:
		return say("carcassonne.passed")
	case carcassonnev1.EventKind_EVENT_KIND_FLEW:
		return say("carcassonne.flew")
	case carcassonnev1.EventKind_EVENT_KIND_LANDED:
		return say("carcassonne.landed")
	case carcassonnev1.EventKind_EVENT_KIND_SCORED:
		if e.GetFinal() {
			return say("carcassonne.scored.final")
		}
		return say("carcassonne.scored")
	case carcassonnev1.EventKind_EVENT_KIND_RETURNED:
		return say("carcassonne.returned")
	case carcassonnev1.EventKind_EVENT_KIND_NEXT_TURN:
		return say("carcassonne.next_turn")
	case carcassonnev1.EventKind_EVENT_KIND_ENDED:
		return say("carcassonne.ended")
	}
	return e.GetNotation()
}

// carcassonneMove is a legal move in words, with its notation.
func (v *view) carcassonneMove(mv *carcassonnev1.Move) string {
	st := &carcassonnev1.State{}
	if err := v.match.GetState().UnmarshalTo(st); err != nil {
		return mv.GetNotation()
	}
	feature := func(x, y int32) string {
		for _, t := range st.GetBoard() {
			if t.GetX() == x && t.GetY() == y {
				for _, f := range t.GetFeatures() {
					if f.GetIndex() == mv.GetFeature() {
						return kindName(f.GetKind())
					}
				}
			}
		}
		return "feature"
	}
	var text string
	switch mv.GetKind() {
	case carcassonnev1.MoveKind_MOVE_KIND_PLACE:
		text = fmt.Sprintf("place %s at %d,%d turned %d", st.GetTile().GetName(), mv.GetX(), mv.GetY(), mv.GetRotation())
	case carcassonnev1.MoveKind_MOVE_KIND_DEPLOY:
		if n := len(st.GetBoard()); n > 0 {
			last := st.GetBoard()[n-1]
			text = fmt.Sprintf("follower on the %s (f%d)", feature(last.GetX(), last.GetY()), mv.GetFeature())
		}
	case carcassonnev1.MoveKind_MOVE_KIND_PASS:
		text = "no follower"
	case carcassonnev1.MoveKind_MOVE_KIND_FLY:
		text = "fly a follower from the flying machine"
	case carcassonnev1.MoveKind_MOVE_KIND_LAND:
		text = fmt.Sprintf("land on the %s (f%d)", feature(st.GetTarget().GetX(), st.GetTarget().GetY()), mv.GetFeature())
	}
	if text == "" {
		return mv.GetNotation()
	}
	if mv.GetNotation() != "" {
		text += "  [" + mv.GetNotation() + "]"
	}
	return text
}
