package watch

import (
	"hash/maphash"

	"github.com/hangarhq/hangar/internal/match"
)

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
//
// A state that leaves must not come back older: a fold that read the
// store before a newer state was put, and puts its state after that one
// left, would serve the older one (and a node that trusts its cache, as
// the embedded store's does, would answer from it). So the cache counts,
// per shard of match ids, the states that left or were turned away
// (epoch), and each state
// carries the count of its shard taken before its store read
// (match.Match.CacheEpoch): a state is taken in place of none only when
// nothing of its shard left since (admit).
type states struct {
	max       int
	hot, cold map[string]*match.Match
	seed      maphash.Seed
	left      [epochShards]uint64
}

// epochShards is how many shards of match ids count their departures
// apart: a state that leaves turns away the folds in flight of its
// shard's matches only.
const epochShards = 64

func newStates(max int) states {
	return states{max: max, hot: make(map[string]*match.Match), cold: make(map[string]*match.Match), seed: maphash.MakeSeed()}
}

func (c *states) shard(id string) int { return int(maphash.String(c.seed, id) % epochShards) }

// epoch is the count of states of id's shard that have left.
func (c *states) epoch(id string) uint64 { return c.left[c.shard(id)] }

// admit reports whether m may be kept where no state of its match is:
// no state of its shard left after m's store read.
func (c *states) admit(m *match.Match) bool { return m.CacheEpoch >= c.epoch(m.ID) }

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
		if len(c.cold) > 0 {
			c.leftAll()
		}
		c.cold, c.hot = c.hot, make(map[string]*match.Match, len(c.hot))
	}
	c.hot[m.ID] = m
}

// delete lets the state of match id go.
func (c *states) delete(id string) {
	if c.peek(id) != nil {
		c.gone(id)
	}
	c.move(id)
}

// gone counts a state of match id that left, or was turned away.
func (c *states) gone(id string) { c.left[c.shard(id)]++ }

// move takes the state of match id out without counting it as gone: the
// hub keeps the match elsewhere, as newest (a finished match).
func (c *states) move(id string) {
	delete(c.hot, id)
	delete(c.cold, id)
}

func (c *states) clear() {
	c.leftAll()
	clear(c.hot)
	clear(c.cold)
}

func (c *states) leftAll() {
	for i := range c.left {
		c.left[i]++
	}
}

func (c *states) len() int { return len(c.hot) + len(c.cold) }
