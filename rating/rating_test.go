package rating

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// noTau is the default model without the dynamics factor, to compare with
// published values.
func noTau() Model {
	m := Default()
	m.Tau = 0
	return m
}

func TestTwoEqualPlayers(t *testing.T) {
	m := noTau()
	got, err := m.Rate([]Rating{m.New(), m.New()}, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	// OpenSkill's PlackettLuce gives these for rate([[a], [b]]) of two new
	// players; by hand: c = sqrt(2(sigma^2+beta^2)), omega = sigma^2/(2c).
	const mu1, mu2, sigma = 27.63523138347365, 22.36476861652635, 8.065506316323548
	if !near(got[0].Mu, mu1, 1e-9) || !near(got[1].Mu, mu2, 1e-9) ||
		!near(got[0].Sigma, sigma, 1e-9) || !near(got[1].Sigma, sigma, 1e-9) {
		t.Fatalf("rate = %+v; want mu %v / %v, sigma %v", got, mu1, mu2, sigma)
	}
	// The winner gains what the loser loses.
	if up, down := got[0].Mu-25, 25-got[1].Mu; !near(up, down, 1e-12) {
		t.Errorf("winner +%v, loser -%v", up, down)
	}
}

func TestDefaultModelMovesLessSureRatings(t *testing.T) {
	m := Default()
	got, err := m.Rate([]Rating{m.New(), m.New()}, []int{2, 1}) // the second wins
	if err != nil {
		t.Fatal(err)
	}
	if !(got[1].Mu > 25 && got[0].Mu < 25) || !near(got[1].Mu-25, 25-got[0].Mu, 1e-12) {
		t.Fatalf("rate = %+v", got)
	}
	// Tau widens sigma before the update: it ends a little above noTau's.
	if !(got[0].Sigma > 8.065506316323548 && got[0].Sigma < m.Sigma) {
		t.Errorf("sigma %v", got[0].Sigma)
	}
}

func TestFourPlayersOrder(t *testing.T) {
	m := Default()
	p := []Rating{m.New(), m.New(), m.New(), m.New()}
	ranks := []int{3, 1, 4, 2}
	got, err := m.Rate(p, ranks)
	if err != nil {
		t.Fatal(err)
	}
	// Equal players: the better the rank, the higher the new mu.
	byRank := make([]Rating, 5)
	for i, r := range ranks {
		byRank[r] = got[i]
	}
	for r := 1; r < 4; r++ {
		if !(byRank[r].Mu > byRank[r+1].Mu) {
			t.Errorf("rank %d mu %v not above rank %d mu %v", r, byRank[r].Mu, r+1, byRank[r+1].Mu)
		}
	}
	if !(byRank[1].Mu > 25 && byRank[4].Mu < 25) {
		t.Errorf("first %v, last %v", byRank[1].Mu, byRank[4].Mu)
	}
	// Plackett-Luce conserves the sum of mu for equal sigmas.
	sum := 0.0
	for _, r := range got {
		sum += r.Mu
		if !(r.Sigma < m.Sigma) {
			t.Errorf("sigma %v did not shrink", r.Sigma)
		}
	}
	if !near(sum, 100, 1e-9) {
		t.Errorf("sum of mu %v, want 100", sum)
	}
}

func TestUpsetMovesMore(t *testing.T) {
	m := Default()
	strong, weak := Rating{Mu: 35, Sigma: 3}, Rating{Mu: 20, Sigma: 3}
	expected, _ := m.Rate([]Rating{strong, weak}, []int{1, 2})
	upset, _ := m.Rate([]Rating{strong, weak}, []int{2, 1})
	if gain, loss := expected[0].Mu-strong.Mu, strong.Mu-upset[0].Mu; !(gain > 0 && loss > gain) {
		t.Errorf("strong player: +%v when winning, -%v when losing", gain, loss)
	}
	// A sure rating moves less than an unsure one.
	unsure := Rating{Mu: 20, Sigma: 8}
	a, _ := m.Rate([]Rating{strong, weak}, []int{2, 1})
	b, _ := m.Rate([]Rating{strong, unsure}, []int{2, 1})
	if !(b[1].Mu-unsure.Mu > a[1].Mu-weak.Mu) {
		t.Errorf("unsure winner +%v, sure winner +%v", b[1].Mu-unsure.Mu, a[1].Mu-weak.Mu)
	}
}

func TestTies(t *testing.T) {
	m := Default()
	got, err := m.Rate([]Rating{m.New(), m.New()}, []int{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !near(got[0].Mu, got[1].Mu, 1e-12) || !near(got[0].Mu, 25, 1e-9) {
		t.Errorf("tie of equals = %+v", got)
	}
	// Ranks are an order, not places: 1,2 and 10,20 rate alike.
	a, _ := m.Rate([]Rating{m.New(), m.New(), m.New()}, []int{1, 2, 2})
	b, _ := m.Rate([]Rating{m.New(), m.New(), m.New()}, []int{10, 20, 20})
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("player %d: %+v vs %+v", i, a[i], b[i])
		}
	}
	if !near(a[1].Mu, a[2].Mu, 1e-12) || !(a[0].Mu > 25 && a[1].Mu < 25) {
		t.Errorf("one winner, two tied last = %+v", a)
	}
}

func TestExtremeRatingsStayFinite(t *testing.T) {
	m := Default()
	for _, ranks := range [][]int{{1, 2}, {2, 1}, {1, 1}} {
		got, err := m.Rate([]Rating{{Mu: 5000, Sigma: 1}, {Mu: -5000, Sigma: 1}}, ranks)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if math.IsNaN(r.Mu) || math.IsInf(r.Mu, 0) || !(r.Sigma > 0) {
				t.Fatalf("ranks %v: rate = %+v", ranks, got)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	m := Default()
	for _, tc := range []struct {
		p []Rating
		r []int
	}{
		{[]Rating{m.New()}, []int{1}},
		{[]Rating{m.New(), m.New()}, []int{1}},
		{[]Rating{m.New(), {Mu: 1, Sigma: 0}}, []int{1, 2}},
		{[]Rating{m.New(), {Mu: math.NaN(), Sigma: 1}}, []int{1, 2}},
	} {
		if _, err := m.Rate(tc.p, tc.r); err == nil {
			t.Errorf("Rate(%v, %v) succeeded", tc.p, tc.r)
		}
	}
}

func TestOrdinal(t *testing.T) {
	if o := Default().New().Ordinal(); !near(o, 0, 1e-12) {
		t.Errorf("new player's ordinal %v, want 0", o)
	}
}

func BenchmarkRateFour(b *testing.B) {
	m := Default()
	p := []Rating{m.New(), {Mu: 30, Sigma: 4}, {Mu: 20, Sigma: 6}, {Mu: 27, Sigma: 2}}
	ranks := []int{2, 1, 4, 3}
	for b.Loop() {
		if _, err := m.Rate(p, ranks); err != nil {
			b.Fatal(err)
		}
	}
}
