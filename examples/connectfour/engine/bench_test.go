package engine

import "testing"

// BenchmarkPerft7 counts the 823536 move sequences of 7 plies: nodes/s of Play-level code.
func BenchmarkPerft7(b *testing.B) {
	for b.Loop() {
		perft(New(), 7)
	}
	b.ReportMetric(float64(823536*b.N)/b.Elapsed().Seconds(), "leaves/s")
}

// BenchmarkSolveL1 solves the begin-easy positions of Pons' set with a fresh table each time.
func BenchmarkSolveL1(b *testing.B) {
	var states []State
	for _, c := range ponsL1 {
		states = append(states, mustMoves(b, c.game))
	}
	var nodes uint64
	for b.Loop() {
		sv := NewSolver()
		for _, s := range states {
			sv.Solve(s)
			nodes += sv.Nodes()
		}
	}
	b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
}
