package carcassonne

import (
	"fmt"
	"strings"
	"testing"
)

// lateBoardText is a 2-player position with six tiles left (taken from a seeded random game).
const lateBoardText = "players=2 opts=- phase=draw turn=1 tile=- scores=4,7 stack=E1,M1,Q1,R2,U4,V1 " +
	"board=D@0,0r0;T@0,-1r2;P@1,0r2;H@1,1r2;O@0,-2r0;U@2,1r3;L@2,2r2;FB@0,1r3;B@-1,1r2;K@3,2r0;L@1,-1r3;U@3,3r1;" +
	"V@4,2r2;S@3,4r2;A@4,1r0;R@-1,-1r2;V@5,2r0;E@2,3r0;P@1,2r0;U@1,3r1;P@4,4r0;N@3,5r1;H@6,2r0;E@6,1r2;L@1,-2r1;" +
	"D@6,3r0;B@5,1r0;FC@1,-3r1;FD@0,3r2;V@2,-3r3;U@2,-4r2;W@6,0r2;A@-2,1r2;M@6,4r3;K@-3,1r0;C@-3,0r2;S@6,5r3;" +
	"F@6,6r3;V@7,1r2;V@1,-4r3;H@6,7r2;E@3,6r1;W@4,0r2;FH@7,0r0;J@7,7r0;B@2,5r2;FA@-2,2r2;I@-2,-1r1;W@0,4r3;" +
	"N@5,5r2;V@5,3r2;B@7,4r2;G@-1,-2r0;O@6,-1r0;W@0,-4r1;V@2,-1r1;FE@-4,1r0;FF@-1,-4r0;E@5,7r2;N@6,8r0;D@8,7r0;" +
	"I@4,7r3;J@-5,1r0;FG@-6,1r0;K@-7,1r2;V@7,2r3;D@3,-3r0;J@-5,0r2;X@0,-5r3;F@1,5r1 " +
	"followers=0@0,-1f3;1@1,0f1;1@-1,1f1;0@3,2f0;1@1,-1f2;0@3,4f2;1@4,1f1;0@-1,-1f0;1@1,2f0;1@4,4f2;0@3,5f0;" +
	"1@5,1f0;0@1,-3f1;0@2,-3f1"

// TestPinnedPlacements pins the number of legal (cell, rotation) pairs of every tile type on
// fixed boards, like perft. Start-board counts were checked by hand: e.g. U fits east and west
// of the road and south of the start tile, two rotations each (6); X only on the two road ends,
// any rotation (8); L north in one rotation and at each road end in three (7).
func TestPinnedPlacements(t *testing.T) {
	start, _ := New(2, Options{})
	late := mustState(t, lateBoardText)
	for _, c := range []struct {
		name string
		s    State
		want string
	}{
		{"start", start, "A:5 B:4 C:4 D:6 E:4 F:4 G:4 H:4 I:4 J:6 K:6 L:7 M:4 N:4 O:6 P:6 Q:4 R:4 S:5 T:5 U:6 V:6 W:7 X:8 " +
			"FA:4 FB:4 FC:6 FD:6 FE:6 FF:6 FG:6 FH:6"},
		{"late", late, "A:64 B:64 C:32 D:52 E:61 F:52 G:52 H:52 I:50 J:53 K:49 L:41 M:50 N:50 O:37 P:37 Q:40 R:40 S:33 T:33 " +
			"U:64 V:61 W:56 X:44 FA:64 FB:64 FC:64 FD:64 FE:64 FF:61 FG:61 FH:61"},
	} {
		var got []string
		for i := range TileID(NumTiles) {
			ps := c.s.PlacementsOf(i)
			for _, p := range ps {
				if err := c.s.fits(i, p.Rot, p.At); err != nil {
					t.Errorf("%s: listed placement %v of %v does not fit: %v", c.name, p, i, err)
				}
			}
			got = append(got, fmt.Sprintf("%v:%d", i, len(ps)))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s placements\n got %s\nwant %s", c.name, g, c.want)
		}
	}
}

// TestPlacementsComplete checks the listing against brute force: every cell within reach and
// every rotation is tried with fits.
func TestPlacementsComplete(t *testing.T) {
	late := mustState(t, lateBoardText)
	for i := range TileID(NumTiles) {
		want := 0
		for y := -12; y <= 12; y++ {
			for x := -12; x <= 12; x++ {
				for r := range Rotation(4) {
					if late.fits(i, r, Pos{x, y}) == nil {
						want++
					}
				}
			}
		}
		if got := len(late.PlacementsOf(i)); got != want {
			t.Errorf("%v: %d placements listed, brute force finds %d", i, got, want)
		}
	}
}
