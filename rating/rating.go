// Package rating is Hangar's multiplayer skill rating: the Weng-Lin Bayesian
// approximation with the Plackett-Luce model, from R. C. Weng and C.-J. Lin,
// "A Bayesian Approximation Method for Online Ranking", Journal of Machine
// Learning Research 12 (2011) 267-300, Algorithm 4 (the model OpenSkill
// implements as PlackettLuce). It imports only the standard library.
//
// Why this model: a match of Aeroplane Chess has two to four players and
// ends with a full ranking (first to last). Elo and Glicko rate pairs;
// TrueSkill needs a truncated-Gaussian factor graph. Plackett-Luce reads a
// whole ranking of any size in one closed-form update, handles ties, and
// keeps a per-player uncertainty (sigma) that shrinks as a player plays.
//
// A rating is a Gaussian belief N(Mu, Sigma^2) about a player's skill. Every
// player is its own team of one (no team play in Hangar's games), so the
// paper's team-to-player step is the identity. Parameters (Default):
//
//	Mu    = 25        the prior mean of a new player
//	Sigma = 25/3      the prior deviation (Mu/3: 3 sigma spans the scale)
//	Beta  = Sigma/2   the performance noise of one match (25/6)
//	Tau   = Mu/300    added to Sigma before each match (in quadrature), so
//	                  that a long-standing rating can still move; OpenSkill's
//	                  default
//	Kappa = 0.0001    the floor of the factor a match may shrink Sigma^2 by
//	Gamma = Sigma_i/c the paper's suggested damping of the variance update
//
// The leaderboard orders players by Ordinal, Mu - 3*Sigma: a conservative
// estimate that a new player (Ordinal 0) has to earn.
package rating

import (
	"fmt"
	"math"
)

// Rating is a belief about one player's skill.
type Rating struct {
	Mu, Sigma float64
}

// Ordinal is the conservative skill estimate the leaderboard sorts by:
// Mu - 3*Sigma.
func (r Rating) Ordinal() float64 { return r.Mu - 3*r.Sigma }

// Model holds the rating parameters (see the package comment).
type Model struct {
	Mu, Sigma, Beta, Tau, Kappa float64
}

// Default is the model Hangar rates with.
func Default() Model {
	return Model{Mu: 25, Sigma: 25.0 / 3, Beta: 25.0 / 6, Tau: 25.0 / 300, Kappa: 0.0001}
}

// New is the rating of a player who has never been rated.
func (m Model) New() Rating { return Rating{Mu: m.Mu, Sigma: m.Sigma} }

// Rate returns the players' ratings after a match in which player i took
// rank ranks[i] (1 = first; equal ranks are a tie; only the order matters).
// It returns an error when the slices differ in length, fewer than two
// players are given, or a rating is not finite with Sigma > 0.
func (m Model) Rate(players []Rating, ranks []int) ([]Rating, error) {
	n := len(players)
	if n != len(ranks) {
		return nil, fmt.Errorf("rating: %d players and %d ranks", n, len(ranks))
	}
	if n < 2 {
		return nil, fmt.Errorf("rating: a match needs two players, got %d", n)
	}
	sigma2 := make([]float64, n) // each player's variance, after Tau
	c2 := 0.0
	for i, p := range players {
		if math.IsNaN(p.Mu) || math.IsInf(p.Mu, 0) || !(p.Sigma > 0) || math.IsInf(p.Sigma, 0) {
			return nil, fmt.Errorf("rating: player %d has rating %+v", i, p)
		}
		sigma2[i] = p.Sigma*p.Sigma + m.Tau*m.Tau
		c2 += sigma2[i] + m.Beta*m.Beta
	}
	c := math.Sqrt(c2)
	// lsum[q] is log of the sum of exp(mu_s/c) over C_q, the players ranked
	// no better than q, shifted by C_q's largest mu so that nothing
	// overflows or vanishes; ties[q] counts the players ranked the same as q
	// (A_q in OpenSkill).
	lsum := make([]float64, n)
	ties := make([]float64, n)
	for q := range n {
		top := math.Inf(-1)
		for s := range n {
			if ranks[s] >= ranks[q] {
				top = max(top, players[s].Mu/c)
			}
			if ranks[s] == ranks[q] {
				ties[q]++
			}
		}
		sum := 0.0
		for s := range n {
			if ranks[s] >= ranks[q] {
				sum += math.Exp(players[s].Mu/c - top)
			}
		}
		lsum[q] = top + math.Log(sum)
	}
	out := make([]Rating, n)
	for i := range n {
		var omega, delta float64
		for q := range n {
			if ranks[q] > ranks[i] {
				continue // i is not in C_q
			}
			// p is the probability that i comes first among C_q.
			p := math.Exp(players[i].Mu/c - lsum[q])
			delta += p * (1 - p) / ties[q]
			if q == i {
				omega += (1 - p) / ties[q]
			} else {
				omega -= p / ties[q]
			}
		}
		omega *= sigma2[i] / c
		gamma := math.Sqrt(sigma2[i]) / c
		delta *= gamma * sigma2[i] / c2
		out[i] = Rating{
			Mu:    players[i].Mu + omega,
			Sigma: math.Sqrt(sigma2[i] * max(1-delta, m.Kappa)),
		}
	}
	return out, nil
}
