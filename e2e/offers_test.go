package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// The offers of a match (OfferService): draws, aborts, takebacks and
// rematches, their answers and their refusals, on both stores and across
// two nodes.

func (c *client) offers() hangarv1.OfferServiceClient { return hangarv1.NewOfferServiceClient(c.conn) }

// offer makes an offer of kind in match id as c.
func (c *client) offer(id string, kind hangarv1.OfferKind) (*hangarv1.MakeOfferResponse, error) {
	return c.offers().MakeOffer(c.ctx(), &hangarv1.MakeOfferRequest{MatchId: id, Kind: kind, RequestId: reqID()})
}

// answer answers offer offerID of match id as c.
func (c *client) answer(id, offerID string, accept bool) (*hangarv1.AnswerOfferResponse, error) {
	return c.offers().AnswerOffer(c.ctx(), &hangarv1.AnswerOfferRequest{MatchId: id, OfferId: offerID, Accept: accept, RequestId: reqID()})
}

// turnPair returns the client of the seat to act in m and the other one.
func turnPair(m *hangarv1.Match, seats map[int32]*client) (mover, other *client) {
	for s, c := range seats {
		if s == m.GetTurnSeat() {
			mover = c
		} else {
			other = c
		}
	}
	return mover, other
}

// placeTile plays a legal placement of the tile in hand for the seat to act
// in Carcassonne match id, and returns the match after it.
func placeTile(t *testing.T, c *client, m *hangarv1.Match, r *rand.Rand) *hangarv1.Match {
	t.Helper()
	lm, err := c.moves.ListLegalActions(c.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: m.GetMatchId()})
	if err != nil || len(lm.GetActions()) == 0 {
		t.Fatalf("ListLegalActions: %v, %v", lm, err)
	}
	var places []*carcassonnev1.Move
	for _, mv := range carcMoves(lm.GetActions()) {
		if mv.GetKind() == carcassonnev1.MoveKind_MOVE_KIND_PLACE {
			places = append(places, mv)
		}
	}
	if len(places) == 0 {
		t.Fatalf("no placement among %v", lm.GetActions())
	}
	if _, err := c.move(c.ctx(), m.GetMatchId(), m.GetVersion(), places[r.IntN(len(places))]); err != nil {
		t.Fatalf("place: %v", err)
	}
	return c.get(t, m.GetMatchId())
}

// carcOffersMatch starts a node of cfg and a Carcassonne match of two
// people on it, and returns the match with the client of the seat to act
// and the other one's.
func carcOffersMatch(t *testing.T, cfg server.Config) (n *server.Server, m *hangarv1.Match, mover, other *client) {
	t.Helper()
	n = node(t, cfg)
	m, seats := carcPeopleMatch(t, n.Addr())
	mover, other = turnPair(m, seats)
	return n, m, mover, other
}

func TestOffersDrawAndRefusals(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n, m, p, q := carcOffersMatch(t, cfg)
		id := m.GetMatchId()
		eve := newClient(t, n.Addr(), "Eve")
		// A spectator watches from the start: the offers' events reach
		// it in order, none twice, and its stream ends with the draw.
		watcher := startWatcher(eve.ctx(), eve, id, 0)

		_, err := eve.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		wantCode(t, "a stranger's offer", err, codes.PermissionDenied, "NOT_SEATED")
		_, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_UNSPECIFIED)
		wantCode(t, "an offer of no kind", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		wantCode(t, "a rematch in play", err, codes.FailedPrecondition, "REMATCH_NOT_ENDED")
		_, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_TAKEBACK)
		wantCode(t, "a takeback before any move", err, codes.FailedPrecondition, "TAKEBACK_NOT_ALLOWED")
		if v := p.get(t, id).GetVersion(); v != m.GetVersion() {
			t.Fatalf("refused offers moved the match from %d to %d", m.GetVersion(), v)
		}

		made, err := p.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		if err != nil {
			t.Fatal(err)
		}
		o := made.GetOffer()
		if o.GetOfferId() == "" || made.GetMatch().GetOffer().GetOfferId() != o.GetOfferId() || !slices.Equal(o.GetAnswerSeats(), []int32{seatOf(made.GetMatch(), q.id).GetSeat()}) {
			t.Fatalf("offer %v in match %v", o, made.GetMatch().GetOffer())
		}
		// The player asked hears of it.
		ns, err := q.notices().ListNotices(q.ctx(), &hangarv1.ListNoticesRequest{})
		if err != nil || !slices.ContainsFunc(ns.GetNotices(), func(n *hangarv1.Notice) bool { return n.GetOffer().GetOfferId() == o.GetOfferId() }) {
			t.Fatalf("%s's notices %v, %v: no offer notice", q.id, ns.GetNotices(), err)
		}
		_, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_ABORT)
		wantCode(t, "a second open offer", err, codes.FailedPrecondition, "OFFER_OPEN")
		_, err = p.answer(id, o.GetOfferId(), true)
		wantCode(t, "answering one's own offer", err, codes.FailedPrecondition, "OWN_OFFER")
		_, err = q.answer(id, "of_unknown", true)
		wantCode(t, "answering an unknown offer", err, codes.FailedPrecondition, "OFFER_CLOSED")
		_, err = eve.answer(id, o.GetOfferId(), true)
		wantCode(t, "a stranger's answer", err, codes.PermissionDenied, "NOT_SEATED")
		if _, err := q.answer(id, o.GetOfferId(), false); err != nil {
			t.Fatal(err)
		}
		_, err = q.answer(id, o.GetOfferId(), true)
		wantCode(t, "answering a declined offer", err, codes.FailedPrecondition, "OFFER_CLOSED")
		if got := p.get(t, id); got.GetOffer() != nil || got.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("after a decline: offer %v, status %v", got.GetOffer(), got.GetStatus())
		}

		// Offered again and accepted, the draw ends the match: both first.
		// Each command retried with its request id applies once and
		// answers as the first time.
		offerReq := &hangarv1.MakeOfferRequest{MatchId: id, Kind: hangarv1.OfferKind_OFFER_KIND_DRAW, RequestId: reqID()}
		made, err = p.offers().MakeOffer(p.ctx(), offerReq)
		if err != nil {
			t.Fatal(err)
		}
		again, err := p.offers().MakeOffer(p.ctx(), offerReq)
		if err != nil || again.GetOffer().GetOfferId() != made.GetOffer().GetOfferId() || again.GetMatch().GetVersion() != made.GetMatch().GetVersion() {
			t.Fatalf("the retried offer: %v, %v; first %v", again, err, made)
		}
		offerReq.Kind = hangarv1.OfferKind_OFFER_KIND_ABORT
		_, err = p.offers().MakeOffer(p.ctx(), offerReq)
		wantCode(t, "a request id reused for another offer", err, codes.AlreadyExists, "REQUEST_ID_REUSED")
		answerReq := &hangarv1.AnswerOfferRequest{MatchId: id, OfferId: made.GetOffer().GetOfferId(), Accept: true, RequestId: reqID()}
		ans, err := q.offers().AnswerOffer(q.ctx(), answerReq)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := q.offers().AnswerOffer(q.ctx(), answerReq); err != nil || again.GetMatch().GetVersion() != ans.GetMatch().GetVersion() {
			t.Fatalf("the retried answer: %v, %v", again, err)
		}
		end := ans.GetMatch()
		if end.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || end.GetOffer() != nil {
			t.Fatalf("after the draw: status %v, offer %v", end.GetStatus(), end.GetOffer())
		}
		for _, s := range end.GetSeats() {
			if s.GetPlace() != 1 {
				t.Fatalf("drawn match's places: %v", end.GetSeats())
			}
		}
		_, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		wantCode(t, "a draw after the end", err, codes.FailedPrecondition, "OFFER_NOT_IN_PLAY")
		evs := p.events(t, id)
		select {
		case err := <-watcher.done:
			if err != nil {
				t.Fatalf("the spectator's watch: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the spectator's watch did not end with the draw")
		}
		checkLog(t, evs, watcher.evs)
		if evs[len(evs)-1].GetMatchEnded() == nil || evs[len(evs)-2].GetOfferAnswered().GetAccepted() != true {
			t.Fatalf("the draw's events: %v", evs[len(evs)-2:])
		}
	})
}

func TestOfferLapsesWhenItsMakerMoves(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		_, m, p, q := carcOffersMatch(t, cfg)
		id := m.GetMatchId()
		made, err := p.offer(id, hangarv1.OfferKind_OFFER_KIND_ABORT)
		if err != nil {
			t.Fatal(err)
		}
		after := placeTile(t, p, made.GetMatch(), rand.New(rand.NewPCG(1, 2)))
		if after.GetOffer() != nil {
			t.Fatalf("the offer is open after its maker moved: %v", after.GetOffer())
		}
		evs := p.events(t, id)
		last := evs[len(evs)-1].GetOfferLapsed()
		if last.GetOfferId() != made.GetOffer().GetOfferId() || last.GetReason() != hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_MAKER_MOVED {
			t.Fatalf("the move's last event is %v, want the offer's lapse", evs[len(evs)-1])
		}
		_, err = q.answer(id, made.GetOffer().GetOfferId(), true)
		wantCode(t, "answering a lapsed offer", err, codes.FailedPrecondition, "OFFER_CLOSED")

		// The other seat offers; the turn passes to it when the maker
		// ends its turn: that offer lapses as the turn passes.
		made, err = q.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		if err != nil {
			t.Fatal(err)
		}
		pass := &carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PASS}
		if _, err := p.move(p.ctx(), id, made.GetMatch().GetVersion(), pass); err != nil {
			t.Fatalf("pass the follower step: %v", err)
		}
		evs = p.events(t, id)
		lapsed := slices.IndexFunc(evs, func(ev *hangarv1.Event) bool {
			return ev.GetOfferLapsed().GetOfferId() == made.GetOffer().GetOfferId()
		})
		if lapsed < 0 || evs[lapsed].GetOfferLapsed().GetReason() != hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_TURN_PASSED {
			t.Fatalf("no TURN_PASSED lapse of %s in %v", made.GetOffer().GetOfferId(), evs[len(evs)-3:])
		}
	})
}

func TestTakebackRestoresTheMove(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		_, m, p, q := carcOffersMatch(t, cfg)
		id := m.GetMatchId()
		r := rand.New(rand.NewPCG(3, 4))
		placed := placeTile(t, p, m, r)
		made, err := p.offer(id, hangarv1.OfferKind_OFFER_KIND_TAKEBACK)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := made.GetOffer().GetTakebackSeq(), m.GetVersion()+1; got != want {
			t.Fatalf("takeback_seq %d, want %d (the placement)", got, want)
		}
		ans, err := q.answer(id, made.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		back := ans.GetMatch()
		if got, want := carcState(back).GetNotation(), carcState(m).GetNotation(); got != want {
			t.Fatalf("after the takeback the state is\n%s\nwant the state before the placement\n%s", got, want)
		}
		if back.GetTurnSeat() != m.GetTurnSeat() || back.GetVersion() != placed.GetVersion()+3 {
			t.Fatalf("after the takeback: turn %d, version %d (placed at %d)", back.GetTurnSeat(), back.GetVersion(), placed.GetVersion())
		}
		// A read of the match's past sees the placement; a read now does not.
		at, err := p.matches.GetMatch(p.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: placed.GetVersion()})
		if err != nil || carcState(at.GetMatch()).GetNotation() != carcState(placed).GetNotation() {
			t.Fatalf("GetMatch at %d: %v", placed.GetVersion(), err)
		}
		// The export has the offer, the answer and the takeback.
		ex, err := p.history().ExportMatch(p.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"offer id=" + made.GetOffer().GetOfferId() + " kind=takeback", "accepted\n",
			fmt.Sprintf("takeback offer=%s from=%d", made.GetOffer().GetOfferId(), m.GetVersion()+1)} {
			if !strings.Contains(ex.GetText(), want) {
				t.Errorf("the export lacks %q:\n%s", want, ex.GetText())
			}
		}
		// Placed again and the turn played out, the next tile is drawn:
		// the placement can no longer be taken back.
		placed = placeTile(t, p, back, r)
		pass := &carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PASS}
		if _, err := p.move(p.ctx(), id, placed.GetVersion(), pass); err != nil {
			t.Fatal(err)
		}
		_, err = p.offer(id, hangarv1.OfferKind_OFFER_KIND_TAKEBACK)
		wantCode(t, "a takeback after a draw", err, codes.FailedPrecondition, "TAKEBACK_NOT_ALLOWED")
	})
}

func TestAbortThenRematch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id}); err != nil {
			t.Fatal(err)
		}
		_, err = ada.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		wantCode(t, "a draw in Aeroplane Chess", err, codes.FailedPrecondition, "DRAW_NOT_ALLOWED")
		made, err := bob.offer(id, hangarv1.OfferKind_OFFER_KIND_ABORT)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := ada.answer(id, made.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		if st := ans.GetMatch().GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED {
			t.Fatalf("aborted match's status %v", st)
		}

		made, err = ada.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		if err != nil {
			t.Fatal(err)
		}
		ans, err = bob.answer(id, made.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		next := ans.GetRematchMatchId()
		if next == "" || ans.GetMatch().GetRematchMatchId() != next {
			t.Fatalf("rematch %q, old match names %q", next, ans.GetMatch().GetRematchMatchId())
		}
		nm := bob.get(t, next)
		if nm.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || nm.GetRematchOf() != id {
			t.Fatalf("rematch: status %v, rematch_of %q", nm.GetStatus(), nm.GetRematchOf())
		}
		// The seats rotated: Ada had seat 0 and Bob seat 2.
		if seatOf(nm, ada.id).GetSeat() != 2 || seatOf(nm, bob.id).GetSeat() != 0 {
			t.Fatalf("rematch seats %v", nm.GetSeats())
		}
		// Watchers of the old match learn of it from its stream.
		evs := ada.events(t, id)
		if evs[len(evs)-1].GetRematchStarted().GetMatchId() != next {
			t.Fatalf("the old match's last event %v", evs[len(evs)-1])
		}
		_, err = ada.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		wantCode(t, "a second rematch", err, codes.FailedPrecondition, "OFFER_CLOSED")

		// The abort rule: two moves per seat, then no more.
		r := rand.New(rand.NewPCG(5, 6))
		mm := nm
		for k := 0; k < 400; k++ {
			if _, err = ada.offer(next, hangarv1.OfferKind_OFFER_KIND_ABORT); err != nil {
				break
			}
			// Offered and declined: the match goes on.
			o := ada.get(t, next).GetOffer()
			if _, err := bob.answer(next, o.GetOfferId(), false); err != nil {
				t.Fatal(err)
			}
			for mm = ada.get(t, next); ; mm = ada.get(t, next) {
				c := map[int32]*client{0: bob, 2: ada}[mm.GetTurnSeat()]
				acted, err := c.act(c.ctx(), mm, mm.GetTurnSeat(), r)
				if err != nil {
					t.Fatal(err)
				}
				if acted {
					break
				}
			}
		}
		wantCode(t, "an abort after the seats' moves", err, codes.FailedPrecondition, "ABORT_TOO_LATE")
	})
}

func TestRematchAcrossNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, func(t *testing.T, cfg server.Config) {
		a, b := node(t, cfg), node(t, cfg)
		ada := newClient(t, a.Addr(), "Ada")
		bob := newClient(t, b.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: reqID(), Private: true, InvitedPlayerIds: []string{bob.id}})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := bob.matches.AcceptInvitation(bob.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id}); err != nil {
			t.Fatal(err)
		}
		// A draw offered on one node, accepted on the other; the refusals
		// on the other node are the store's, not a stale cache's.
		_, err = bob.offer(id, hangarv1.OfferKind_OFFER_KIND_TAKEBACK)
		wantCode(t, "a takeback before any move, on node B", err, codes.FailedPrecondition, "TAKEBACK_NOT_ALLOWED")
		made, err := ada.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ada.reconnect(t, b.Addr()).answer(id, made.GetOffer().GetOfferId(), true)
		wantCode(t, "answering one's own offer on node B", err, codes.FailedPrecondition, "OWN_OFFER")
		_, err = bob.offer(id, hangarv1.OfferKind_OFFER_KIND_ABORT)
		wantCode(t, "a second offer on node B", err, codes.FailedPrecondition, "OFFER_OPEN")
		if _, err := bob.answer(id, made.GetOffer().GetOfferId(), true); err != nil {
			t.Fatal(err)
		}
		made, err = bob.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := ada.answer(id, made.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		nm := bob.get(t, ans.GetRematchMatchId())
		if !nm.GetPrivate() || seatOf(nm, ada.id).GetSeat() != 1 || seatOf(nm, bob.id).GetSeat() != 0 {
			t.Fatalf("rematch across nodes: private %v, seats %v", nm.GetPrivate(), nm.GetSeats())
		}
		// The rematch of a private match is private: a stranger on either
		// node finds neither.
		for _, addr := range []string{a.Addr(), b.Addr()} {
			eve := newClient(t, addr, "Eve")
			reads(t, eve, nm.GetMatchId(), false)
			_, err := eve.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
			wantCode(t, "a stranger's rematch offer on a private match", err, codes.NotFound, "NOT_FOUND")
			_, err = eve.answer(id, made.GetOffer().GetOfferId(), true)
			wantCode(t, "a stranger's answer on a private match", err, codes.NotFound, "NOT_FOUND")
		}
	})
}

// TestRematchOfferReachesTheEndingNode: a node that committed a match's end
// keeps the finished match in memory; a rematch offered through another
// node afterwards reaches its reads and its watchers all the same. With
// lost notifications (a lone node on the database, which publishes
// nothing) GetMatch still reads the store, as for a match in play.
func TestRematchOfferReachesTheEndingNode(t *testing.T) {
	t.Parallel()
	end := func(t *testing.T, a, b *server.Server) (id string, ada, bob *client, ended *hangarv1.Match) {
		t.Helper()
		ada, bob = newClient(t, a.Addr(), "Ada"), newClient(t, b.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: reqID(), Private: true, InvitedPlayerIds: []string{bob.id}})
		if err != nil {
			t.Fatal(err)
		}
		id = cr.GetMatch().GetMatchId()
		if _, err := bob.matches.AcceptInvitation(bob.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id}); err != nil {
			t.Fatal(err)
		}
		// Bob offers a draw through node B; Ada's acceptance ends the match
		// on node A.
		made, err := bob.offer(id, hangarv1.OfferKind_OFFER_KIND_DRAW)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := ada.answer(id, made.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		if ended = ans.GetMatch(); ended.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("after the draw: %v", ended.GetStatus())
		}
		if got := ada.get(t, id); got.GetVersion() != ended.GetVersion() {
			t.Fatalf("node A reads version %d of the finished match, want %d", got.GetVersion(), ended.GetVersion())
		}
		return id, ada, bob, ended
	}
	// seesOffer checks that Ada's GetMatch on node A shows Bob's rematch
	// offer rm, and that she can accept it there.
	seesOffer := func(t *testing.T, ada *client, id string, rm *hangarv1.MakeOfferResponse) {
		t.Helper()
		got := ada.get(t, id)
		if got.GetVersion() != rm.GetMatch().GetVersion() || got.GetOffer().GetOfferId() != rm.GetOffer().GetOfferId() {
			t.Fatalf("node A's GetMatch: version %d, offer %q; the rematch offer made version %d, offer %q",
				got.GetVersion(), got.GetOffer().GetOfferId(), rm.GetMatch().GetVersion(), rm.GetOffer().GetOfferId())
		}
		ans, err := ada.answer(id, rm.GetOffer().GetOfferId(), true)
		if err != nil {
			t.Fatal(err)
		}
		if ans.GetRematchMatchId() == "" {
			t.Fatal("accepting the rematch on node A started none")
		}
	}

	eachBus(t, func(t *testing.T, cfg server.Config) {
		a, b := node(t, cfg), node(t, cfg)
		id, ada, bob, ended := end(t, a, b)
		// Ada follows the finished match on node A from its last event:
		// receiving that event says the watch is in place.
		ctx, cancel := context.WithTimeout(ada.ctx(), 30*time.Second)
		defer cancel()
		stream, err := ada.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: ended.GetVersion() - 1, FollowRematch: true})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || r.GetEvent().GetSeq() != ended.GetVersion() {
			t.Fatalf("the watch's first event: %v, %v", r, err)
		}
		rm, err := bob.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		if err != nil {
			t.Fatal(err)
		}
		// Node A hears of the offer: its watcher gets it.
		for {
			r, err := stream.Recv()
			if err != nil {
				t.Fatalf("waiting for the rematch offer on node A's watch: %v", err)
			}
			if r.GetEvent().GetOfferMade() != nil {
				break
			}
		}
		seesOffer(t, ada, id, rm)
	})

	t.Run("lost notification", func(t *testing.T) {
		t.Parallel()
		// Node B's notifications never go out.
		url, pg, _, a := countedNode(t)
		held := heldFeed{Feed: pg, release: make(chan struct{})}
		b := node(t, server.Config{DatabaseURL: url, CrossNode: true, Service: service.Options{Feed: held, PollEvery: time.Hour}})
		id, ada, bob, _ := end(t, a, b)
		rm, err := bob.offer(id, hangarv1.OfferKind_OFFER_KIND_REMATCH)
		if err != nil {
			t.Fatal(err)
		}
		seesOffer(t, ada, id, rm)
	})
}

// TestOffersOverREST: the offers' routes answer JSON, and a refusal is a 4xx
// with its ErrorInfo reason.
func TestOffersOverREST(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	m, seats := carcPeopleMatch(t, n.Addr())
	p, q := turnPair(m, seats)
	base := "http://" + n.Addr() + "/v1/matches/" + m.GetMatchId() + "/offers"
	code, _, body := restDo(t, "POST", base, p.token, "application/json", `{"kind":"OFFER_KIND_REMATCH"}`)
	if _, why := restReason(t, body); code != 400 || why != "REMATCH_NOT_ENDED" {
		t.Fatalf("a rematch in play over REST: %d %s", code, body)
	}
	code, _, body = restDo(t, "POST", base, p.token, "application/json", `{"kind":"OFFER_KIND_DRAW"}`)
	if code != 200 {
		t.Fatalf("a draw offer over REST: %d %s", code, body)
	}
	var made struct {
		Offer struct {
			OfferID string `json:"offerId"`
		} `json:"offer"`
	}
	if err := json.Unmarshal(body, &made); err != nil || made.Offer.OfferID == "" {
		t.Fatalf("MakeOffer's JSON %s: %v", body, err)
	}
	code, _, body = restDo(t, "POST", base+"/"+made.Offer.OfferID+":answer", p.token, "application/json", `{"accept":true}`)
	if _, why := restReason(t, body); code != 400 || why != "OWN_OFFER" {
		t.Fatalf("answering one's own offer over REST: %d %s", code, body)
	}
	code, _, body = restDo(t, "POST", base+"/"+made.Offer.OfferID+":answer", q.token, "application/json", `{"accept":true}`)
	if code != 200 || !strings.Contains(string(body), "MATCH_STATUS_FINISHED") {
		t.Fatalf("accepting the draw over REST: %d %s", code, body)
	}
}
