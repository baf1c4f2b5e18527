package match

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/store"
)

// This file is the offers of a match (hangar.v1.OfferService): a draw, an
// abort or a takeback in play, a rematch once the match has ended. Each is
// an event of the match, and so is each answer:
//
//   - OfferMade opens the match's one open offer (Match.Offer), naming the
//     seats that must answer: every other seat a player holds (bots and
//     seats whose players left do not answer).
//   - OfferAnswered records one seat's answer. A decline closes the offer;
//     the last acceptance closes it and carries it out in the same command:
//     MatchEnded (a draw: every seat in play shares first place; an abort:
//     abandoned, unrated, no result), MovesTakenBack, or RematchStarted.
//   - OfferLapsed closes an offer in play unanswered, in the command that
//     made it lapse (Writer.Commit): its maker acted in the game, the turn
//     passed to another seat, a seat that had to answer left, or the match
//     ended.
//
// A takeback undoes the maker's latest move (game.Moves) and every event
// after it: the events stay in the stream, and the fold of MovesTakenBack
// puts back the game state (and the seats' statistics counters) as they
// were before the move. The fold keeps those states (undo) from the latest
// event that revealed chance on, at most maxUndo of them, so a replay, an
// export and a read at any version all see one history.
//
// A rematch starts a new match (rematchID, derived from the offer, so a
// retry lands on the same one) of the same game, options and settings,
// with every occupant moved one seat on; the old match names it
// (RematchStarted) and it names the old one (MatchCreated.rematch_of). The
// old match's event is written first: should the node stop before the new
// match is written, a retry of the command that started it (its request id)
// writes it.

// Reasons an offer or an answer is refused, each a stable ErrorInfo reason
// whose message says what is allowed.
var (
	ErrOfferOpen          = fmt.Errorf("%w: the match has an open offer; it must be answered or lapse first", fault.ErrRule)
	ErrDrawNotAllowed     = fmt.Errorf("%w: this game has no draw by agreement; offer an abort early on, or leave the match", fault.ErrRule)
	ErrAbortTooLate       = fmt.Errorf("%w: an abort is offered only before the seats have made two moves each", fault.ErrRule)
	ErrTakebackNotAllowed = fmt.Errorf("%w: a takeback undoes your latest move, and only while no chance (a die, a tile) has been revealed since", fault.ErrRule)
	ErrRematchNotEnded    = fmt.Errorf("%w: a rematch is offered once the match has ended; in play, offer a draw, an abort or a takeback", fault.ErrRule)
	ErrOfferNotInPlay     = fmt.Errorf("%w: draws, aborts and takebacks are offered in play; after the end, offer a rematch", fault.ErrRule)
	ErrNoOneToAnswer      = fmt.Errorf("%w: no other seat is held by a player who could answer", fault.ErrRule)
	ErrOwnOffer           = fmt.Errorf("%w: you made this offer; the other players answer it", fault.ErrRule)
	ErrOfferClosed        = fmt.Errorf("%w: no such open offer: it was answered, declined or lapsed; make a new one", fault.ErrRule)
	ErrAlreadyAnswered    = fmt.Errorf("%w: your seat has accepted this offer already", fault.ErrRule)
)

// maxUndo bounds the game states a match keeps for takebacks.
const maxUndo = 16

// movesPerSeatForAbort is how many moves per seat a match may have made
// and still be aborted.
const movesPerSeatForAbort = 2

// undoPoint is the match as it was before one move: what a takeback to it
// puts back.
type undoPoint struct {
	seq      int64 // the move's event
	seat     int32 // the seat that moved
	play     game.State
	counters []map[string]int64 // the seats' counters, by index
	moves    int
}

// offerState is what a match knows of its offers, beside Offer.
type offerState struct {
	// Offer is the open offer (nil: none). It is never changed once set:
	// a change replaces it.
	Offer *hangarv1.Offer
	// offerTurn is the seat to act when the offer was made (offerTurnOK
	// false: none was).
	offerTurn   int32
	offerTurnOK bool
	// undo are the states before the moves a takeback may undo, oldest
	// first; moves counts the moves made (the abort rule).
	undo  []undoPoint
	moves int
	// rematchOf and rematch link a match and its rematch.
	rematchOf, rematch string
}

// noteMove records what one of the game's events, gev, means for offers:
// before is the game state before the command that made it (a move is the
// first event of its command, so it is the state before the move).
func (m *Match) noteMove(gev proto.Message, before game.State) {
	mv, ok := m.Game.(game.Moves)
	if !ok {
		m.moves++ // a game that names no moves counts every event
		return
	}
	seat, move, reveals := mv.Move(gev)
	if reveals {
		m.undo = nil
	}
	if !move || before == nil {
		return
	}
	p := undoPoint{seq: m.Version + 1, seat: seat, play: before, moves: m.moves, counters: make([]map[string]int64, len(m.Seats))}
	for i, st := range m.Seats {
		p.counters[i] = st.counters // never changed once made (add)
	}
	m.undo = append(m.undo, p)
	if len(m.undo) > maxUndo {
		m.undo = slices.Delete(m.undo, 0, len(m.undo)-maxUndo)
	}
	m.moves++
}

// lastMove is the index in m.undo of seat's latest move that may be taken
// back, or -1.
func (m *Match) lastMove(seat int32) int {
	for i := len(m.undo) - 1; i >= 0; i-- {
		if m.undo[i].seat == seat {
			return i
		}
	}
	return -1
}

// recordOffer folds an event of offers onto m.
func (m *Match) recordOffer(ev *hangarv1.Event) error {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_OfferMade:
		m.Offer = b.OfferMade.GetOffer()
		m.offerTurn, m.offerTurnOK = turnOf(m)
	case *hangarv1.Event_OfferAnswered:
		a := b.OfferAnswered
		if m.Offer == nil || m.Offer.GetOfferId() != a.GetOfferId() {
			return fmt.Errorf("match %s: answer to offer %q, which is not open", m.ID, a.GetOfferId())
		}
		if !a.GetAccepted() {
			m.Offer = nil
			break
		}
		o := proto.CloneOf(m.Offer)
		o.AcceptedSeats = append(o.AcceptedSeats, a.GetSeat())
		m.Offer = o
		if allAccepted(o) {
			m.Offer = nil
		}
	case *hangarv1.Event_OfferLapsed:
		m.Offer = nil
	case *hangarv1.Event_MovesTakenBack:
		i := slices.IndexFunc(m.undo, func(p undoPoint) bool { return p.seq == b.MovesTakenBack.GetFromSeq() })
		if i < 0 {
			return fmt.Errorf("match %s: takeback to event %d, which may not be taken back", m.ID, b.MovesTakenBack.GetFromSeq())
		}
		p := m.undo[i]
		m.Play, m.moves = p.play, p.moves
		for k := range m.Seats {
			if k < len(p.counters) {
				m.Seats[k].counters = p.counters[k]
			}
		}
		m.undo = slices.Clone(m.undo[:i])
		m.Offer = nil
	case *hangarv1.Event_RematchStarted:
		m.rematch = b.RematchStarted.GetMatchId()
		m.Offer = nil
	default:
		return fmt.Errorf("match %s: event %d has no body", m.ID, m.Version+1)
	}
	return nil
}

// allAccepted reports whether every seat that must answer o has accepted.
func allAccepted(o *hangarv1.Offer) bool {
	for _, s := range o.GetAnswerSeats() {
		if !slices.Contains(o.GetAcceptedSeats(), s) {
			return false
		}
	}
	return true
}

// answerSeats are the seats of m held by players, but seat.
func (m *Match) answerSeats(seat int32) []int32 {
	var out []int32
	for _, st := range m.Seats {
		if st.Seat != seat && st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && st.Player != "" {
			out = append(out, st.Seat)
		}
	}
	return out
}

// lapse is the OfferLapsed of m's open offer in play when the command of
// author that led from before to m (with events evs) makes it lapse, else
// nil.
func lapse(before, m *Match, evs []*hangarv1.Event, author string) *hangarv1.Event {
	o := m.Offer
	if o == nil || o.GetKind() == hangarv1.OfferKind_OFFER_KIND_REMATCH || before.Offer != o {
		// No offer in play, or one this command made.
		return nil
	}
	reason := hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_UNSPECIFIED
	turn, ok := turnOf(m)
	moved := author != "" && author == o.GetPlayerId() && slices.ContainsFunc(evs, func(ev *hangarv1.Event) bool { return ev.GetGame() != nil })
	switch {
	case Ended(m.Status):
		reason = hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_MATCH_ENDED
	case moved:
		reason = hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_MAKER_MOVED
	case ok != m.offerTurnOK || turn != m.offerTurn:
		reason = hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_TURN_PASSED
	case slices.ContainsFunc(append([]int32{o.GetSeat()}, o.GetAnswerSeats()...), func(s int32) bool {
		i := m.SeatIndex(s)
		return i < 0 || m.Seats[i].Status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER
	}):
		reason = hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_SEAT_LEFT
	default:
		return nil
	}
	return &hangarv1.Event{Body: &hangarv1.Event_OfferLapsed{OfferLapsed: &hangarv1.OfferLapsed{OfferId: o.GetOfferId(), Reason: reason}}}
}

// Rematchable reports whether a rematch of m may still start: m has
// ended after its start, has no rematch yet, and a player holds a seat to
// offer it.
func (m *Match) Rematchable() bool {
	if !Ended(m.Status) || m.Play == nil || m.rematch != "" {
		return false
	}
	for _, st := range m.Seats {
		if st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && st.Player != "" {
			return true
		}
	}
	return false
}

// Final reports whether m can take no more events: it has ended, and no
// rematch may be offered or answered in it any more.
func (m *Match) Final() bool { return Ended(m.Status) && !m.Rematchable() }

// rematchID is the id of the rematch an offer starts.
func rematchID(matchID, offerID string) string {
	h := sha256.Sum256([]byte("rematch\x00" + matchID + "\x00" + offerID))
	return ident.Derived("m_", h[:16])
}

// MakeOffer runs the MakeOffer command of the caller.
func (s *Commands) MakeOffer(ctx context.Context, req *hangarv1.MakeOfferRequest) (*hangarv1.MakeOfferResponse, error) {
	me, _ := auth.Caller(ctx)
	kind := req.GetKind()
	if _, ok := hangarv1.OfferKind_name[int32(kind)]; !ok || kind == hangarv1.OfferKind_OFFER_KIND_UNSPECIFIED {
		return nil, fmt.Errorf("%w: kind must be DRAW, ABORT, TAKEBACK or REMATCH", fault.ErrInvalid)
	}
	offerID := ident.New("of_")
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	c.Decide = func(m *Match) (Step, error) {
		i := m.SeatOf(me.ID)
		if i < 0 {
			return Step{}, ErrNotSeated
		}
		if m.Offer != nil {
			return Step{}, ErrOfferOpen
		}
		seat := m.Seats[i].Seat
		o := &hangarv1.Offer{OfferId: offerID, Kind: kind, Seat: seat, PlayerId: me.ID, AnswerSeats: m.answerSeats(seat)}
		if kind == hangarv1.OfferKind_OFFER_KIND_REMATCH {
			switch {
			case !Ended(m.Status) || m.Play == nil:
				return Step{}, ErrRematchNotEnded
			case m.rematch != "":
				return Step{}, fmt.Errorf("%w: the rematch %s has started already", ErrOfferClosed, m.rematch)
			}
			st := Events(&hangarv1.Event{Body: &hangarv1.Event_OfferMade{OfferMade: &hangarv1.OfferMade{Offer: o}}})
			if len(o.AnswerSeats) == 0 {
				// No one else to ask: the rematch starts at once.
				st.Add(&hangarv1.Event{Body: &hangarv1.Event_RematchStarted{RematchStarted: &hangarv1.RematchStarted{
					OfferId: offerID, MatchId: rematchID(m.ID, offerID)}}})
			}
			return st, nil
		}
		if m.Status != store.StatusActive || m.Play == nil {
			return Step{}, ErrOfferNotInPlay
		}
		switch kind {
		case hangarv1.OfferKind_OFFER_KIND_DRAW:
			if d, ok := m.Game.(game.Draws); !ok || !d.AgreedDraw(m.Options) {
				return Step{}, ErrDrawNotAllowed
			}
		case hangarv1.OfferKind_OFFER_KIND_ABORT:
			if limit := movesPerSeatForAbort * len(m.Seats); m.moves >= limit {
				return Step{}, fmt.Errorf("%w (%d moves in all); %d have been made", ErrAbortTooLate, limit, m.moves)
			}
		case hangarv1.OfferKind_OFFER_KIND_TAKEBACK:
			k := m.lastMove(seat)
			if k < 0 {
				return Step{}, ErrTakebackNotAllowed
			}
			o.TakebackSeq = m.undo[k].seq
		}
		if len(o.AnswerSeats) == 0 {
			return Step{}, ErrNoOneToAnswer
		}
		return Events(&hangarv1.Event{Body: &hangarv1.Event_OfferMade{OfferMade: &hangarv1.OfferMade{Offer: o}}}), nil
	}
	out, err := s.execFresh(ctx, c)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.MakeOfferResponse{Match: out.Match.View(me.ID)}
	for _, ev := range out.Events {
		if made := ev.GetOfferMade(); made != nil {
			resp.Offer = made.GetOffer()
		}
	}
	if err := s.startRematches(ctx, out); err != nil {
		return nil, err
	}
	return resp, nil
}

// AnswerOffer runs the AnswerOffer command of the caller.
func (s *Commands) AnswerOffer(ctx context.Context, req *hangarv1.AnswerOfferRequest) (*hangarv1.AnswerOfferResponse, error) {
	me, _ := auth.Caller(ctx)
	if err := ident.Check("offer_id", req.GetOfferId()); err != nil {
		return nil, err
	}
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	c.Decide = func(m *Match) (Step, error) {
		i := m.SeatOf(me.ID)
		if i < 0 {
			return Step{}, ErrNotSeated
		}
		seat, o := m.Seats[i].Seat, m.Offer
		switch {
		case o == nil || o.GetOfferId() != req.GetOfferId():
			return Step{}, ErrOfferClosed
		case o.GetPlayerId() == me.ID:
			return Step{}, ErrOwnOffer
		case !slices.Contains(o.GetAnswerSeats(), seat):
			return Step{}, fmt.Errorf("%w: your seat is not asked to answer this offer", ErrNotSeated)
		case slices.Contains(o.GetAcceptedSeats(), seat):
			return Step{}, ErrAlreadyAnswered
		}
		st := Events(&hangarv1.Event{Body: &hangarv1.Event_OfferAnswered{OfferAnswered: &hangarv1.OfferAnswered{
			OfferId: o.GetOfferId(), Seat: seat, PlayerId: me.ID, Accepted: req.GetAccept()}}})
		if !req.GetAccept() || len(o.GetAcceptedSeats())+1 < len(o.GetAnswerSeats()) {
			return st, nil
		}
		switch o.GetKind() {
		case hangarv1.OfferKind_OFFER_KIND_DRAW:
			st.Add(&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: MatchEnded(m.drawn())}})
		case hangarv1.OfferKind_OFFER_KIND_ABORT:
			st.Add(&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{
				Status: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED}}})
		case hangarv1.OfferKind_OFFER_KIND_TAKEBACK:
			if !slices.ContainsFunc(m.undo, func(p undoPoint) bool { return p.seq == o.GetTakebackSeq() }) {
				return Step{}, ErrTakebackNotAllowed
			}
			st.Add(&hangarv1.Event{Body: &hangarv1.Event_MovesTakenBack{MovesTakenBack: &hangarv1.MovesTakenBack{
				OfferId: o.GetOfferId(), FromSeq: o.GetTakebackSeq()}}})
		case hangarv1.OfferKind_OFFER_KIND_REMATCH:
			st.Add(&hangarv1.Event{Body: &hangarv1.Event_RematchStarted{RematchStarted: &hangarv1.RematchStarted{
				OfferId: o.GetOfferId(), MatchId: rematchID(m.ID, o.GetOfferId())}}})
		}
		return st, nil
	}
	out, err := s.execFresh(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := s.startRematches(ctx, out); err != nil {
		return nil, err
	}
	resp := &hangarv1.AnswerOfferResponse{Match: out.Match.View(me.ID)}
	for _, ev := range out.Events {
		if r := ev.GetRematchStarted(); r != nil {
			resp.RematchMatchId = r.GetMatchId()
		}
	}
	return resp, nil
}

// drawn is the standing of a match drawn by agreement: every seat in play
// shares first place; seats whose players left follow, in seat order.
func (m *Match) drawn() []game.Place {
	var on, off []game.Place
	for _, st := range m.Seats {
		if st.left() {
			off = append(off, game.Place{Seat: st.Seat})
		} else {
			on = append(on, game.Place{Seat: st.Seat, Place: 1})
		}
	}
	for k := range off {
		off[k].Place = int32(len(on) + k + 1)
	}
	return append(on, off...)
}

// startRematches writes the rematch that out's events started, if any:
// after the old match's commit, or again on a retry of it (a rematch
// written already is left as it is).
func (s *Commands) startRematches(ctx context.Context, out Outcome) error {
	for _, ev := range out.Events {
		r := ev.GetRematchStarted()
		if r == nil {
			continue
		}
		old := out.Match
		if old.Version < ev.GetSeq() {
			var err error
			if old, err = s.Writer.Fold(ctx, old, ev.GetSeq()); err != nil {
				return err
			}
		}
		if err := s.startRematch(ctx, old, r.GetOfferId(), r.GetMatchId(), ev.GetAuthorId()); err != nil {
			return err
		}
	}
	return nil
}

// startRematch writes match id, the rematch of old that offer started
// (author answered last): old's game, options and settings, each occupant
// one seat on, started at once.
func (s *Commands) startRematch(ctx context.Context, old *Match, offerID, id, author string) error {
	n := len(old.Seats)
	seats := old.Game.Seats(old.Options, n)
	if len(seats) != n {
		return fmt.Errorf("match %s: a rematch of %d seats has %d", old.ID, n, len(seats))
	}
	cmd := store.Command{Author: author, RequestID: "rematch_" + offerID, Fingerprint: Fingerprint(&hangarv1.RematchStarted{OfferId: offerID, MatchId: id})}
	_, err := s.Writer.Commit(ctx, s.Writer.NewMatch(id), cmd, func(*Match) (Step, error) {
		evs := []*hangarv1.Event{{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
			Game: old.Game.Name(), Options: old.optionsAny, SeatCount: int32(n), CreatorId: old.Creator,
			TurnTime: old.clock.protoTurnTime(), TimeoutsBeforeBot: old.botAfter, BotLevel: old.botLevel,
			Private: old.Private, InvitedPlayerIds: slices.Clone(old.Invited), Unrated: old.unrated, RematchOf: old.ID}}}}
		for k := range n {
			src := old.Seats[(k+n-1)%n]
			if src.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && src.Player != "" {
				evs = append(evs, Joined(seats[k], store.Player{ID: src.Player, DisplayName: src.name}))
			} else {
				evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
					Seat: seats[k], Bot: true, DisplayName: "Bot"}}})
			}
		}
		return Events(append(evs, Started(seats))...), nil
	})
	var vc *VersionConflict
	if errors.As(err, &vc) {
		return nil // written already (another node, or a retry)
	}
	return err
}

// refold reports whether the game events of st, a step with the game state
// after them, must be folded one by one all the same: a move after another
// game event of the step (a turn the clock played, a roll then a move) has
// a state before it that only a fold gives, and a takeback needs it.
func refold(g game.Game, st *Step) bool {
	mv, ok := g.(game.Moves)
	if !ok || st.Play == nil {
		return false
	}
	first := true
	for _, gev := range st.Games {
		if gev == nil {
			continue
		}
		if _, move, _ := mv.Move(gev); move && !first {
			return true
		}
		first = false
	}
	return false
}

// execFresh is Writer.Exec for the offers' commands, which refuse on the
// match's state: a refusal on a cached match that is behind the store
// (another node's commit: the start, an offer, an answer) is decided again
// on what the store holds.
//
// A retry of a command that was applied is refused by the match it left
// (the offer is open, or answered): the stored command says it was this
// one, and its outcome is returned.
func (s *Commands) execFresh(ctx context.Context, c Command) (Outcome, error) {
	// decided is at most the version the refusal was decided on: the
	// cache may catch up between the refusal and the look at the store
	// below, which must then still decide again.
	var decided int64 = -1
	if m := s.Writer.hub.Get(c.MatchID); m != nil {
		decided = m.Version
	}
	out, err := s.Writer.Exec(ctx, c)
	if err == nil || !(errors.Is(err, fault.ErrRule) || errors.Is(err, fault.ErrPermission)) {
		return out, err
	}
	m, lerr := s.Writer.Load(ctx, c.MatchID)
	if lerr != nil {
		return out, err
	}
	cmd := store.Command{Author: c.Author, RequestID: c.ReqID, Fingerprint: Fingerprint(c.Req)}
	switch r, cerr := s.Store.Command(ctx, c.MatchID, cmd); {
	case cerr == nil:
		return s.Writer.replay(ctx, m, r)
	case errors.Is(cerr, store.ErrRequestMismatch):
		return out, cerr
	}
	if s.Writer.singleNode {
		return out, err
	}
	f, ferr := s.Writer.Fold(ctx, m, 0)
	if ferr != nil || (f.Version == m.Version && (decided < 0 || f.Version == decided)) {
		return out, err
	}
	s.Writer.hub.Put(f)
	return s.Writer.Exec(ctx, c)
}
