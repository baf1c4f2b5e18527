package match

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// botRand returns a bot's tie-breaking source, seeded from the operating
// system's cryptographic source so that no client can predict a bot.
func botRand() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:])
	return rand.New(rand.NewChaCha8(seed))
}

// kickBots makes sure a goroutine plays the bot turns of match id. At most
// one runs per match on this node; a kick while it runs makes it look again.
func (s *Writer) kickBots(id string) {
	s.botMu.Lock()
	defer s.botMu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	if _, running := s.botRunning[id]; running {
		s.botRunning[id] = true
		return
	}
	s.botRunning[id] = false
	s.bots.Add(1)
	go s.runBots(id)
}

func (s *Writer) runBots(id string) {
	defer s.bots.Done()
	rng := botRand()
	for {
		for s.ctx.Err() == nil {
			played, err := s.botStep(s.ctx, id, rng)
			if errors.Is(err, store.ErrVersionConflict) {
				continue // someone else moved: look again
			}
			if err != nil {
				if s.ctx.Err() == nil {
					s.log.Error("bot turn failed", "match", id, "err", err)
				}
				break
			}
			if !played {
				break
			}
		}
		s.botMu.Lock()
		if again := s.botRunning[id]; again && s.ctx.Err() == nil {
			s.botRunning[id] = false
			s.botMu.Unlock()
			continue
		}
		delete(s.botRunning, id)
		s.botMu.Unlock()
		return
	}
}

// botStep plays one bot action (a roll or a move) if a bot must act.
func (s *Writer) botStep(ctx context.Context, id string, rng *rand.Rand) (bool, error) {
	m, err := s.Load(ctx, id)
	if err != nil {
		return false, err
	}
	if !m.botTurn() {
		return false, nil
	}
	seatNo, _ := m.Play.Turn()
	// The request id names the version the bot acts on: if two nodes race
	// for the same turn, the store keeps one and the other sees a retry.
	req := &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.Version, RequestId: fmt.Sprintf("bot:%d", m.Version)}
	cmd := store.Command{RequestID: req.RequestId, Fingerprint: Fingerprint(req)}
	_, err = s.Commit(ctx, m, cmd, func(m *Match) (Step, error) {
		g, evs, err := m.Play.Act(seatNo, m.Play.Bot(m.botLevel, rng), s.rand)
		if err != nil {
			return Step{}, err
		}
		st := Step{Play: g}
		return st, st.AddGame(m, evs)
	})
	return err == nil, err
}
