package matchmaker

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// The matcher: the passes that form groups from the queue and make their
// matches.

// kickMatcher starts a matchmaking pass now.
func (s *Matchmaker) kickMatcher() {
	select {
	case s.mmWake <- struct{}{}:
	default:
	}
}

// runMatcher forms matches from the queue until the service closes, and
// with a feed polls the versions of the tickets watched on this node.
func (s *Matchmaker) runMatcher() {
	defer s.bots.Done()
	tick := time.NewTicker(s.mm.Tick)
	defer tick.Stop()
	poll := time.NewTicker(s.pollEvery)
	defer poll.Stop()
	first := true
	for {
		if err := s.matchPass(s.ctx, first); err != nil && s.ctx.Err() == nil {
			s.log.Error("matchmaking", "err", err)
		}
		first = false
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		case <-s.mmWake:
			// Enqueues come in bursts: a pass a moment later decides on
			// the burst at once.
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(gatherWindow):
			}
		case <-poll.C:
			if s.hasFeed {
				s.pollTickets(s.ctx)
			}
		}
	}
}

// pollTickets re-reads the versions of the tickets watched on this node,
// so that a change whose notification was lost is delivered within
// pollEvery.
func (s *Matchmaker) pollTickets(ctx context.Context) {
	ids := s.tickets.watched()
	for len(ids) > 0 {
		page := ids[:min(len(ids), 1000)]
		ids = ids[len(page):]
		ts, err := s.store.Tickets(ctx, page)
		if err != nil {
			return
		}
		for _, t := range ts {
			s.tickets.changed(t.ID, t.Version)
		}
	}
}

// matchPass forms the matches the queue allows now, claims the groups
// other nodes formed and left, and makes their matches. On a single node's
// first pass every formed group is this node's, left by its previous run:
// it claims them without waiting for their leases.
func (s *Matchmaker) matchPass(ctx context.Context, first bool) error {
	now := s.now().UTC().Truncate(time.Microsecond)
	lease := now.Add(s.mm.Lease)
	changed, ferr := s.store.FormMatches(ctx, now, lease, s.mm.PoolLimit, func(_ string, waiting []store.Ticket) (store.Formation, error) {
		return s.form(ctx, now, waiting)
	})
	groups := map[string][]store.Ticket{}
	for _, t := range changed {
		s.ticketChanged(t)
		if t.Status == store.TicketFormed {
			groups[t.Match] = append(groups[t.Match], t)
		}
	}
	before := now
	if first && s.singleNode {
		before = lease
	}
	claimed, cerr := s.store.ClaimFormed(ctx, before, lease, 64)
	for _, t := range claimed {
		groups[t.Match] = append(groups[t.Match], t)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make([]error, 0, len(groups))
	var mu sync.Mutex
	for id, ts := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.makeMatch(ctx, id, ts); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("match %s: %w", id, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(append(errs, ferr, cerr)...)
}

// form decides on one pool's waiting tickets (oldest first) at time now:
// formGroups chooses the groups, keeping apart the players with a block
// between them (store.Social), and each group gets its match's id and its
// players' seats.
func (s *Matchmaker) form(ctx context.Context, now time.Time, waiting []store.Ticket) (store.Formation, error) {
	g, opts, err := s.ticketOptions(waiting[0])
	if err != nil {
		return store.Formation{}, err
	}
	seatNos := g.Seats(opts, waiting[0].Seats)
	players := make([]string, len(waiting))
	for i, t := range waiting {
		players[i] = t.Player
	}
	pairs, err := s.store.BlockedPairs(ctx, players)
	if err != nil {
		return store.Formation{}, err
	}
	groups, expired := formGroups(now, waiting, s.mm, apart(pairs))
	var f store.Formation
	for _, grp := range groups {
		ids := make([]string, len(grp))
		for k, i := range grp {
			ids[k] = waiting[i].ID
		}
		id := groupMatchID(ids)
		// Players take the first seats in an order drawn from the match's
		// id (so a retry seats them alike); bots the last.
		slices.SortFunc(ids, func(a, b string) int {
			return strings.Compare(seatKey(id, a), seatKey(id, b))
		})
		seats := make([]int, len(ids))
		for k := range ids {
			seats[k] = int(seatNos[k])
		}
		f.Groups = append(f.Groups, store.Group{Match: id, Tickets: ids, Seats: seats})
	}
	for _, i := range expired {
		f.Expired = append(f.Expired, waiting[i].ID)
	}
	return f, nil
}

// apart is the test of formGroups for pairs, blocks as [blocker,
// blocked]: whether two players have a block between them (nil: no
// blocks).
func apart(pairs [][2]string) func(a, b string) bool {
	if len(pairs) == 0 {
		return nil
	}
	set := make(map[[2]string]bool, 2*len(pairs))
	for _, p := range pairs {
		set[p], set[[2]string{p[1], p[0]}] = true, true
	}
	return func(a, b string) bool { return set[[2]string{a, b}] }
}

// groupMatchID is the id of the match of a group of tickets: the same for
// the same tickets, in any order.
func groupMatchID(tickets []string) string {
	ids := slices.Sorted(slices.Values(tickets))
	h := sha256.Sum256([]byte("matchmaking\x00" + strings.Join(ids, "\x00")))
	return ident.Derived("m_", h[:16])
}

func seatKey(match, ticket string) string {
	h := sha256.Sum256([]byte(match + "\x00" + ticket))
	return string(h[:])
}

// formGroups chooses groups among one pool's waiting tickets (oldest
// first; every one has the pool's seat count) at time now. It returns the
// groups as indexes into waiting, and the tickets that expire.
//
// Oldest first, each ticket not yet taken (the anchor) looks for the
// players nearest its rating within its window (a half-width that widens
// with its wait): the nearest on either side, one at a time, the older of
// two equally near. With enough of them for the seats it forms a group.
// Otherwise, once the anchor has waited its BotsAfter (and does not keep
// waiting), it forms a group with those of them that take bots too, and
// bots fill the rest. After the pass no seat count of tickets within the
// window of the oldest of them is left: its oldest was an anchor while
// they all still waited (unless a block kept them apart: a ticket whose
// player blocks, or is blocked by, the anchor's or one already picked for
// the group is passed over). Tickets left older than TicketTTL expire.
func formGroups(now time.Time, waiting []store.Ticket, o Options, apart func(a, b string) bool) (groups [][]int, expired []int) {
	n := len(waiting)
	if n == 0 {
		return nil, nil
	}
	seats := waiting[0].Seats
	// The tickets in rating order, as a list that taken tickets leave.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(waiting[a].Rating, waiting[b].Rating) })
	pos := make([]int, n)
	prev, next := make([]int, n), make([]int, n)
	for p, i := range order {
		pos[i] = p
		prev[p], next[p] = p-1, p+1
	}
	remove := func(p int) {
		if prev[p] >= 0 {
			next[prev[p]] = next[p]
		}
		if next[p] < n {
			prev[next[p]] = prev[p]
		}
	}
	taken := make([]bool, n)
	// clash reports whether ticket c's player has a block with the
	// anchor a's or with one of those picked.
	clash := func(c, a int, picked []int) bool {
		if apart == nil {
			return false
		}
		if apart(waiting[c].Player, waiting[a].Player) {
			return true
		}
		for _, i := range picked {
			if apart(waiting[c].Player, waiting[i].Player) {
				return true
			}
		}
		return false
	}
	// nearest returns up to k tickets nearest the anchor a's rating within
	// w, leaving out those that keep waiting when bots is set.
	nearest := func(a, k int, w float64, bots bool) []int {
		var out []int
		l, r := prev[pos[a]], next[pos[a]]
		skip := func(p int, step []int) int {
			for p >= 0 && p < n && bots && waiting[order[p]].KeepWaiting {
				p = step[p]
			}
			return p
		}
		for len(out) < k {
			l, r = skip(l, prev), skip(r, next)
			dl, dr := math.Inf(1), math.Inf(1)
			if l >= 0 {
				dl = waiting[a].Rating - waiting[order[l]].Rating
			}
			if r < n {
				dr = waiting[order[r]].Rating - waiting[a].Rating
			}
			if min(dl, dr) > w {
				break
			}
			var c int
			if dl < dr || (dl == dr && order[l] < order[r]) {
				c, l = order[l], prev[l]
			} else {
				c, r = order[r], next[r]
			}
			if !clash(c, a, out) {
				out = append(out, c)
			}
		}
		return out
	}
	for a := range waiting {
		if taken[a] {
			continue
		}
		wait := now.Sub(waiting[a].Created)
		w := o.window(wait)
		pick := nearest(a, seats-1, w, false)
		if len(pick) < seats-1 {
			if waiting[a].KeepWaiting || wait < waiting[a].BotsAfter {
				continue
			}
			pick = nearest(a, seats-1, w, true)
		}
		grp := append([]int{a}, pick...)
		for _, i := range grp {
			taken[i] = true
			remove(pos[i])
		}
		groups = append(groups, grp)
	}
	for i, t := range waiting {
		if !taken[i] && now.Sub(t.Created) >= o.TicketTTL {
			expired = append(expired, i)
		}
	}
	return groups, expired
}

// makeMatch creates the match of a formed group (its tickets, all of
// them) through the write path, then marks the tickets matched. Creating
// a match that exists already (a group claimed again after a node died
// past its commit) appends nothing.
func (s *Matchmaker) makeMatch(ctx context.Context, id string, ts []store.Ticket) error {
	slices.SortFunc(ts, func(a, b store.Ticket) int { return cmp.Compare(a.Seat, b.Seat) })
	t0 := ts[0]
	g, opts, err := s.ticketOptions(t0)
	if err != nil {
		return err
	}
	packed, err := s.games.Pack(opts)
	if err != nil {
		return err
	}
	seatNos := g.Seats(opts, t0.Seats)
	by := map[int32]store.Player{}
	fp := sha256.New()
	fmt.Fprintf(fp, "matchmaking\x00%s\x00%s\x00%d\x00%t\x00", id, t0.Game, t0.Seats, t0.Rated)
	if t0.AutoRoll { // (only then: a group formed before a deploy keeps its fingerprint)
		fp.Write([]byte("auto_roll\x00"))
	}
	fp.Write(t0.Options)
	if t0.Clock != nil {
		fmt.Fprintf(fp, "clock\x00%x\x00", t0.Clock)
	}
	clock, err := decodeClock(t0.Clock)
	if err != nil {
		return fmt.Errorf("ticket %s: %w", t0.ID, err)
	}
	if t0.Clock == nil && s.mm.TurnTime > 0 {
		clock = match.Clock{TurnTime: durationpb.New(s.mm.TurnTime), TimeoutsBeforeBot: s.mm.TimeoutsBeforeBot}
	}
	for _, t := range ts {
		by[int32(t.Seat)] = store.Player{ID: t.Player, DisplayName: t.PlayerName}
		fmt.Fprintf(fp, "%s\x00%d\x00%s\x00", t.ID, t.Seat, t.Player)
	}
	cmd := store.Command{RequestID: "matchmaking:" + id, Fingerprint: fp.Sum(nil)}
	_, err = s.w.Commit(ctx, s.w.NewMatch(id), cmd, func(*match.Match) (match.Step, error) {
		evs := []*hangarv1.Event{{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
			Game: g.Name(), Options: packed, SeatCount: int32(t0.Seats), Unrated: !t0.Rated,
			TurnTime: clock.TurnTime, TimeoutsBeforeBot: clock.TimeoutsBeforeBot, BotLevel: clock.BotLevel, TimeControl: clock.TimeControl}}}}
		for _, sn := range seatNos {
			if p, ok := by[sn]; ok {
				evs = append(evs, match.Joined(sn, p))
			} else {
				evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
					Seat: sn, Bot: true, DisplayName: "Bot"}}})
			}
		}
		st := match.Events(append(evs, match.Started(seatNos))...)
		for _, t := range ts { // each ticket's player hears that it was matched (package notice)
			st.Notices = append(st.Notices, &hangarv1.Notice{PlayerId: t.Player, MatchId: id,
				Body: &hangarv1.Notice_TicketMatched{TicketMatched: &hangarv1.TicketMatchedNotice{TicketId: t.ID}}})
		}
		return st, nil
	})
	if err != nil {
		return err
	}
	matched, err := s.store.MatchTickets(ctx, id, s.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return err
	}
	for _, t := range matched {
		s.ticketChanged(t)
	}
	return nil
}
