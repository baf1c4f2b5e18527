package aeroplane

import (
	"fmt"
	"slices"
	"testing"
)

// Spec §1.5: key squares per seat in loop indices.
func TestKeySquares(t *testing.T) {
	for _, c := range []struct {
		seat, entry, from, to, turnIn int
		never                         [2]int
	}{
		{0, 0, 17, 29, 49, [2]int{50, 51}},
		{1, 13, 30, 42, 10, [2]int{11, 12}},
		{2, 26, 43, 3, 23, [2]int{24, 25}},
		{3, 39, 4, 16, 36, [2]int{37, 38}},
	} {
		s := c.seat
		if got := []int{Loop(s, 1), Loop(s, ShortcutFrom), Loop(s, ShortcutTo), Loop(s, TurnIn)}; !slices.Equal(got, []int{c.entry, c.from, c.to, c.turnIn}) {
			t.Errorf("seat %d: p1, p18, p30, p50 on loop %v, want %v", s, got, []int{c.entry, c.from, c.to, c.turnIn})
		}
		for _, l := range c.never {
			if p := PathIndex(s, l); p != -1 {
				t.Errorf("seat %d stands on loop %d at p%d, want never", s, l, p)
			}
		}
		// own colour: L ≡ s+1 (mod 4), all 13 of them on the seat's path at p ≡ 2 (mod 4)
		var own []int
		for l := range LoopLen {
			if ColourSeat(l) == s {
				own = append(own, l)
				if p := PathIndex(s, l); !OwnColour(p) {
					t.Errorf("seat %d: own-colour loop %d is p%d", s, l, p)
				}
			}
		}
		if len(own) != 13 || own[0]%4 != (s+1)%4 {
			t.Errorf("seat %d own-colour squares %v", s, own)
		}
		// p mod 4: 3 -> seat s+1, 0 -> seat s+2, 1 -> seat s+3 (spec §1.3)
		for p := 1; p <= LoopSteps; p++ {
			want := (s + []int{2, 3, 0, 1}[p%4]) % 4
			if p%4 == 2 {
				want = s
			}
			if got := ColourSeat(Loop(s, p)); got != want {
				t.Errorf("seat %d p%d colour %d, want %d", s, p, got, want)
			}
		}
		// the flight crosses the opposite seat's turn-in halfway: seat s+2's p50 is loop 13s+23
		if got := Loop(Opposite(s), TurnIn); got != (13*s+23)%LoopLen {
			t.Errorf("seat %d: opposite turn-in at loop %d", s, got)
		}
	}
}

// Spec §1.6: the full path of seat 0 with the other seats' indices on the same squares, and
// §2.9.5: seat 0 p14 = seat 1 p1 = seat 2 p40 = seat 3 p27 (loop 13).
func TestPathTable(t *testing.T) {
	rows := []struct{ p, l, s1, s2, s3 int }{
		{1, 0, 40, 27, 14}, {2, 1, 41, 28, 15}, {11, 10, 50, 37, 24}, {12, 11, -1, 38, 25},
		{13, 12, -1, 39, 26}, {14, 13, 1, 40, 27}, {18, 17, 5, 44, 31}, {24, 23, 11, 50, 37},
		{25, 24, 12, -1, 38}, {26, 25, 13, -1, 39}, {27, 26, 14, 1, 40}, {30, 29, 17, 4, 43},
		{37, 36, 24, 11, 50}, {38, 37, 25, 12, -1}, {39, 38, 26, 13, -1}, {40, 39, 27, 14, 1},
		{50, 49, 37, 24, 11},
	}
	for _, r := range rows {
		l := Loop(0, r.p)
		got := []int{l, PathIndex(1, l), PathIndex(2, l), PathIndex(3, l)}
		if want := []int{r.l, r.s1, r.s2, r.s3}; !slices.Equal(got, want) {
			t.Errorf("seat 0 p%d: loop and seats 1-3 %v, want %v", r.p, got, want)
		}
	}
	// the mapping between any two seats (spec §1.2) agrees with Loop and PathIndex
	for a := range MaxSeats {
		for b := range MaxSeats {
			for p := 1; p <= LoopSteps; p++ {
				want := PathIndex(b, Loop(a, p))
				if want == -1 {
					want = 0
				}
				if got := sameSquare(a, b, p); got != want {
					t.Errorf("sameSquare(%d,%d,%d) = %d, want %d", a, b, p, got, want)
				}
			}
		}
	}
	for _, c := range []struct{ seat, p int }{{0, 0}, {0, 51}, {4, 3}, {-1, 3}} {
		if Loop(c.seat, c.p) != -1 {
			t.Errorf("Loop(%d,%d) should be -1", c.seat, c.p)
		}
	}
	if PathIndex(0, 52) != -1 || ColourSeat(52) != -1 || ColourName(4) != "" || ColourName(2) != "Blue" {
		t.Error("out-of-range helpers")
	}
}

// Spec §4.1: the rest points of one unit with no other planes on the board, by the square q
// its die count reaches (flight taken; the declined alternatives are the other legal move).
func TestLandingTable(t *testing.T) {
	want := func(q int) [][]int {
		switch {
		case q == 14:
			return [][]int{{14, 18}, {14, 18, 30}}
		case q == 18:
			return [][]int{{18, 22}, {18, 30}}
		case q <= 49 && q%4 == 2:
			return [][]int{{q, q + 4}}
		case q <= 56:
			return [][]int{{q}}
		}
		return [][]int{{112 - q}}
	}
	for q := 1; q <= 61; q++ {
		from, die := q-6, 6
		if q <= 6 {
			from, die = 0, q
		}
		s := mustParse(t, mv(fmt.Sprintf("0:%d,56,56,56 2:h,h,h,h", from), 0, die, "default"))
		var got [][]int
		for _, m := range s.LegalMoves() {
			_, evs, err := s.Move(0, m)
			if err != nil {
				t.Fatal(err)
			}
			var rest []int
			for _, r := range evs[0].Rest {
				if r != 0 {
					rest = append(rest, int(r))
				}
			}
			got = append(got, rest)
		}
		if w := want(q); !slices.EqualFunc(got, w, slices.Equal) {
			t.Errorf("q=%d (from p%d roll %d): rest points %v, want %v", q, from, die, got, w)
		}
	}
}
