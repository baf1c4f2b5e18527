package aeroplane

import (
	"math/rand/v2"
	"testing"
)

// benchPositions returns states of 4-player games between random players, each in PhaseMove
// with its chosen move, for benchmarks that apply one move at a time.
func benchPositions(tb testing.TB, n int) ([]State, []Move) {
	r := rand.New(rand.NewPCG(3, 4))
	var states []State
	var moves []Move
	for len(states) < n {
		s, err := New(4, DefaultOptions())
		if err != nil {
			tb.Fatal(err)
		}
		for !s.Over() && len(states) < n {
			if s.Phase() == PhaseMove {
				ms := s.LegalMoves()
				m := ms[r.IntN(len(ms))]
				states, moves = append(states, s), append(moves, m)
				s, _, err = s.Move(s.Turn(), m)
			} else {
				s, _, err = s.Roll(s.Turn(), 1+r.IntN(6))
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
	}
	return states, moves
}

// BenchmarkMove applies one move (AppendMove into a reused buffer): allocations per applied move.
func BenchmarkMove(b *testing.B) {
	states, moves := benchPositions(b, 4096)
	evs := make([]Event, 0, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := states[i&4095]
		_, evs, _ = s.AppendMove(evs[:0], s.Turn(), moves[i&4095])
		i++
	}
}

// BenchmarkRoll rolls the die in PhaseRoll positions (AppendRoll into a reused buffer).
func BenchmarkRoll(b *testing.B) {
	states, moves := benchPositions(b, 4096)
	var rolls []State
	for i, s := range states {
		if ns, _, err := s.Move(s.Turn(), moves[i]); err == nil && ns.Phase() == PhaseRoll {
			rolls = append(rolls, ns)
		}
	}
	evs := make([]Event, 0, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := rolls[i%len(rolls)]
		_, evs, _ = s.AppendRoll(evs[:0], s.Turn(), 1+i%6)
		i++
	}
}

// BenchmarkLegalMoves generates the legal moves of PhaseMove positions into a reused buffer.
func BenchmarkLegalMoves(b *testing.B) {
	states, _ := benchPositions(b, 4096)
	buf := make([]Move, 0, maxMoves)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf = states[i&4095].AppendLegalMoves(buf[:0])
		i++
	}
}
