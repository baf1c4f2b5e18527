package aeroplane

import (
	"math/rand/v2"
	"testing"
)

func TestSmoke(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for g := 0; g < 200; g++ {
		s, err := New(2+g%3, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		steps := 0
		for !s.Over() {
			steps++
			if steps > 100000 {
				t.Fatalf("game %d too long: %s", g, s)
			}
			var ns State
			var evs []Event
			if s.Phase() == PhaseMove {
				ms := s.LegalMoves()
				ns, evs, err = s.Move(s.Turn(), ms[r.IntN(len(ms))])
			} else {
				ns, evs, err = s.Roll(s.Turn(), 1+r.IntN(6))
			}
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			f, err := s.Fold(evs)
			if err != nil || f != ns {
				t.Fatalf("fold: %v\n%s\n%s\n%v", err, f, ns, evs)
			}
			p, err := ParseState(ns.String())
			if err != nil || p != ns {
				t.Fatalf("parse: %v\n%s\n%s", err, p, ns)
			}
			for _, e := range evs {
				pe, err := ParseEvent(e.String())
				if err != nil || pe != e {
					t.Fatalf("event parse %v: %v %+v %+v", e, err, pe, e)
				}
			}
			s = ns
		}
		if g < 3 {
			t.Logf("game %d: %d steps, %s", g, steps, s)
		}
	}
}
