package aeroplane

import (
	"math/rand/v2"
	"testing"
)

// The fast paths of the generator and of move (walkOnly, jumpOnly, bounceOnly, flightOnly)
// give exactly the plan that plan works out, under random rule sets, for every start square,
// roll and flight choice.
func TestFastPathsMatchPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var checked [4]int // walks, jumps, bounces, flights
	for range 3000 {
		o := optionsFromBits(r.Uint64(), 4)
		s, err := New(4, o)
		if err != nil {
			t.Fatal(err)
		}
		for from := Launch; from < Finish; from++ {
			for die := 1; die <= 6; die++ {
				for _, fly := range []bool{false, true} {
					var fast plan
					q, ok := s.r.walkOnly(from, die)
					switch {
					case ok:
						fast.walk(q)
						checked[0]++
					default:
						if _, ok := s.r.jumpOnly(q); ok {
							fast.jump(q)
							checked[1]++
						} else if _, ok := s.r.bounceOnly(q); ok {
							fast.bounce(q)
							checked[2]++
						} else if _, _, ok := s.r.flightOnly(q); ok {
							fast.flight(s.r, q, fly)
							checked[3]++
						} else {
							continue
						}
					}
					var want plan
					if !s.plan(&want, 0, 1, from, die, fly, false) {
						t.Fatalf("%+v: from %d die %d: fast path for a roll plan refuses", o, from, die)
					}
					if fast != want {
						t.Fatalf("%+v: from %d die %d fly %v: fast plan %+v, plan %+v", o, from, die, fly, fast, want)
					}
				}
			}
		}
	}
	t.Logf("checked %d walks, %d jumps, %d bounces, %d flights", checked[0], checked[1], checked[2], checked[3])
	for k, n := range checked {
		if n == 0 {
			t.Errorf("fast path %d never taken", k)
		}
	}
}
