package watch

import "github.com/hangarhq/hangar/internal/match"

// DefaultStates is how many folded states of matches in play a hub keeps
// unless told otherwise (NewHub).
const DefaultStates = 10000

// states is the hub's bounded cache of the folded states of matches in
// play, keyed by match id. It holds at most max states in two
// generations: new and used states go into hot; when hot is half full it
// becomes cold and the old cold is dropped. A state used since the last
// turn-over moves back to hot, so the matches being played stay and the
// idle ones leave first, for two map operations a use. A state that left
// is folded from the store again when next needed.
type states struct {
	max       int
	hot, cold map[string]*match.Match
}

func newStates(max int) states {
	return states{max: max, hot: make(map[string]*match.Match), cold: make(map[string]*match.Match)}
}

// get returns the state of match id, or nil.
func (c *states) get(id string) *match.Match {
	if m := c.hot[id]; m != nil {
		return m
	}
	m := c.cold[id]
	if m != nil {
		delete(c.cold, id)
		c.put(m)
	}
	return m
}

// peek returns the state of match id, or nil, without marking it used.
func (c *states) peek(id string) *match.Match {
	if m := c.hot[id]; m != nil {
		return m
	}
	return c.cold[id]
}

// put keeps m as the state of match m.ID.
func (c *states) put(m *match.Match) {
	if _, ok := c.hot[m.ID]; ok {
		c.hot[m.ID] = m
		return
	}
	delete(c.cold, m.ID)
	if len(c.hot) >= max(1, c.max/2) {
		c.cold, c.hot = c.hot, make(map[string]*match.Match, len(c.hot))
	}
	c.hot[m.ID] = m
}

func (c *states) delete(id string) {
	delete(c.hot, id)
	delete(c.cold, id)
}

func (c *states) clear() {
	clear(c.hot)
	clear(c.cold)
}

func (c *states) len() int { return len(c.hot) + len(c.cold) }
