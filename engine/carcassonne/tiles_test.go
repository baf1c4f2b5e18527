package carcassonne

import "testing"

func TestTileTable(t *testing.T) {
	base, flier, pennants, cloisters := 0, 0, 0, 0
	for _, tt := range Tiles() {
		if tt.ID.Flier() {
			flier += tt.Count
		} else {
			base += tt.Count
		}
		for _, f := range tt.Features {
			if f.Pennant {
				pennants += tt.Count
			}
			if f.Kind == Cloister {
				cloisters += tt.Count
			}
		}
		if err := checkTile(&tt); err != nil {
			t.Error(err)
		}
		// Every half-edge of a field or road side is in exactly one field, every road or city
		// side in exactly one segment, at every rotation.
		for r := range Rotation(4) {
			rt := &rotated[tt.ID][r]
			for h := range Half(8) {
				city := rt.edges[h.Side()] == EdgeCity
				if (rt.halfFeat[h] < 0) != city {
					t.Errorf("%s %v: half-edge %v field %d on a %v side", tt.Name, r, h, rt.halfFeat[h], rt.edges[h.Side()])
				}
			}
			for s := range Side(4) {
				if (rt.sideFeat[s] < 0) != (rt.edges[s] == EdgeField) {
					t.Errorf("%s %v: side %v segment %d on a %v side", tt.Name, r, s, rt.sideFeat[s], rt.edges[s])
				}
			}
		}
	}
	if base != 72 || flier != 8 || pennants != 10 || cloisters != 6 {
		t.Errorf("base %d flier %d pennants %d cloisters %d, want 72 8 10 6", base, flier, pennants, cloisters)
	}
	if tileTypes[StartTile].Name != "D" {
		t.Errorf("start tile %s", tileTypes[StartTile].Name)
	}
	s, _ := New(2, Options{})
	if n := s.Remaining().Len(); n != 79 {
		t.Errorf("stack %d, want 79", n)
	}
	s, _ = New(2, Options{NoFlier: true})
	if n := s.Remaining().Len(); n != 71 {
		t.Errorf("base stack %d, want 71", n)
	}
}

func TestGeometry(t *testing.T) {
	// Rotation maps sides N->E->S->W, half-edges +2 and directions +2 (spec section 0).
	if East.Rotate(1) != South || West.Rotate(1) != North || NL.Rotate(1) != EL || WR.Rotate(1) != NR {
		t.Error("side or half-edge rotation")
	}
	if DirNW.Rotate(1) != DirNE || DirNW.Rotate(2) != DirSE || DirNW.Rotate(3) != DirSW || DirW.Rotate(1) != DirN {
		t.Error("direction rotation")
	}
	// Across a boundary XL meets opp(X)R.
	for h, want := range map[Half]Half{EL: WR, NL: SR, NR: SL, ER: WL, SL: NR, WL: ER} {
		if h.Mate() != want {
			t.Errorf("%v.Mate() = %v, want %v", h, h.Mate(), want)
		}
	}
	// Tile J (C:N R:ES, fields EL,SR,WL,WR@N and ER,SL) turned once: city east, road S-W.
	rt := &rotated[mustTile("J")][1]
	if rt.edges != [4]Edge{EdgeField, EdgeCity, EdgeRoad, EdgeRoad} {
		t.Errorf("J r1 edges %v", rt.edges)
	}
	if rt.feats[1].sides != 1<<South|1<<West || rt.halfFeat[SR] != 3 || rt.halfFeat[WL] != 3 {
		t.Errorf("J r1 road %b, half SR %d", rt.feats[1].sides, rt.halfFeat[SR])
	}
}
