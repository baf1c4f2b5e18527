package service

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
)

// Notices: each player's log of what concerns it across its matches (its
// turn has begun, a match it sits in started or ended, it was invited). A
// command's notices are computed in commit from the match before and after
// it and go to the store with its events (store.Append.Notices), in the
// same transaction: a notice exists exactly when the events that caused it
// do. WatchPlayer follows a player's log by seq, always re-reading the
// store, so a lost wake-up only delays a notice; wake-ups come from this
// node's commits, from other nodes through the feed (a Change naming the
// player) and, with other nodes, from the watch poll. Bots get no notices.
//
// A notice's stored form is a hangar.v1.Notice with only its body set (the
// player, seq, match and time are columns of their own); its kind is the
// name of the body's field. One codec here writes and reads it.

var noticeBody = (&hangarv1.Notice{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

// noticeKind is the stored kind of n: the name of its body's field. The
// name is looked up once per Go type of body (noticeKinds), not through
// the message's reflection every time: a command's notices are on the
// write path.
func noticeKind(n *hangarv1.Notice) string {
	t := reflect.TypeOf(n.GetBody())
	if k, ok := noticeKinds.Load(t); ok {
		return k.(string)
	}
	f := n.ProtoReflect().WhichOneof(noticeBody)
	if f == nil {
		return "unknown"
	}
	k := string(f.Name())
	noticeKinds.Store(t, k)
	return k
}

var noticeKinds sync.Map // reflect.Type of a Notice's body -> its kind

// noticeID is the id of a player's notice seq: "<player>:<seq>".
func noticeID(player string, seq int64) string { return player + ":" + strconv.FormatInt(seq, 10) }

// encodeNotice is n (PlayerId, MatchId and Body set) as the store keeps
// it.
func encodeNotice(n *hangarv1.Notice, deliver bool) (store.Notice, error) {
	p, err := marshalWire(&hangarv1.Notice{Body: n.Body})
	if err != nil {
		return store.Notice{}, err
	}
	return store.Notice{Player: n.GetPlayerId(), Kind: noticeKind(n), Match: n.GetMatchId(), Payload: p, Deliver: deliver}, nil
}

// decodeNotice turns a stored notice into the API's Notice.
func decodeNotice(sn store.Notice) (*hangarv1.Notice, error) {
	n := &hangarv1.Notice{}
	if err := proto.Unmarshal(sn.Payload, n); err != nil {
		return nil, fmt.Errorf("notice %s: %w", noticeID(sn.Player, sn.Seq), err)
	}
	if got := noticeKind(n); got != sn.Kind {
		return nil, fmt.Errorf("notice %s is %q, stored as %q", noticeID(sn.Player, sn.Seq), got, sn.Kind)
	}
	n.NoticeId, n.PlayerId, n.Seq, n.MatchId = noticeID(sn.Player, sn.Seq), sn.Player, sn.Seq, sn.Match
	n.Time = timestamppb.New(sn.Time)
	return n, nil
}

// turnOf is the seat to act in m, if any.
func turnOf(m *match) (int32, bool) {
	if m.status != store.StatusActive || m.play == nil || m.play.Over() {
		return 0, false
	}
	return m.play.Turn()
}

// noticesOf are the notices of the command (by author, with events evs)
// that took m to next: invitations, a start, the turn of a human seat that
// has just begun, an end. Bots get none.
func noticesOf(m, next *match, evs []*hangarv1.Event, author string) []*hangarv1.Notice {
	var out []*hangarv1.Notice
	g := next.game.Enum()
	add := func(player string, n *hangarv1.Notice) {
		n.PlayerId, n.MatchId = player, next.id
		out = append(out, n)
	}
	invited := func(ids []string) {
		for _, p := range ids {
			add(p, &hangarv1.Notice{Body: &hangarv1.Notice_Invited{Invited: &hangarv1.InvitedNotice{Game: g, InviterId: author}}})
		}
	}
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *hangarv1.Event_MatchCreated:
			invited(b.MatchCreated.GetInvitedPlayerIds())
		case *hangarv1.Event_PlayersInvited:
			invited(b.PlayersInvited.GetPlayerIds())
		}
	}
	if m.started.IsZero() && !next.started.IsZero() {
		for _, st := range next.seats {
			if st.status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && st.player != "" {
				add(st.player, &hangarv1.Notice{Body: &hangarv1.Notice_MatchStarted{MatchStarted: &hangarv1.MatchStartedNotice{
					Game: g, Seat: st.seat}}})
			}
		}
	}
	if seat, ok := turnOf(next); ok {
		before, was := turnOf(m)
		if i := next.seatIndex(seat); i >= 0 && (!was || before != seat) {
			if st := next.seats[i]; st.status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && st.player != "" {
				yt := &hangarv1.YourTurnNotice{Game: g, Seat: seat, Version: next.version}
				if d := next.deadline(); next.turnTime > 0 && !d.IsZero() {
					yt.TurnDeadline = timestamppb.New(d)
				}
				add(st.player, &hangarv1.Notice{Body: &hangarv1.Notice_YourTurn{YourTurn: yt}})
			}
		}
	}
	if !ended(m.status) && ended(next.status) {
		for _, st := range next.seats {
			if st.player == "" {
				continue
			}
			add(st.player, &hangarv1.Notice{Body: &hangarv1.Notice_MatchEnded{MatchEnded: &hangarv1.MatchEndedNotice{
				Game: g, Status: statusProto[next.status], Seat: st.seat, Place: st.place, Seats: int32(len(next.seats)),
				Forfeited: st.status == hangarv1.SeatStatus_SEAT_STATUS_FORFEITED}}})
		}
	}
	return out
}

// storeNotices encodes a command's notices for its append, queued for the
// webhook when one is configured.
func (s *Service) storeNotices(ns []*hangarv1.Notice) ([]store.Notice, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	out := make([]store.Notice, len(ns))
	for i, n := range ns {
		var err error
		if out[i], err = encodeNotice(n, s.webhook != nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// noticed follows the commit of notices: it wakes their players' watchers
// here and, through the feed, on other nodes, and the webhook's workers.
func (s *Service) noticed(ns []store.Notice) {
	if len(ns) == 0 {
		return
	}
	players := make(map[string]bool, len(ns))
	for _, n := range ns {
		players[n.Player] = true
	}
	for p := range players {
		s.players.wake(p)
	}
	s.publishedPlayers(players)
	if s.webhook != nil {
		s.webhook.kick()
	}
}

// playerHub holds the WatchPlayer streams of a node by player.
type playerHub struct {
	mu   sync.Mutex
	subs wakers
}

func newPlayerHub() *playerHub {
	return &playerHub{subs: make(wakers)}
}

// subscribe returns a channel that receives a value after the player's
// log may have grown, and a function to unsubscribe.
func (h *playerHub) subscribe(p string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.subs.add(p)
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.subs.remove(p, ch)
	}
}

// wake wakes the watchers of player p.
func (h *playerHub) wake(p string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs.wake(p)
}

// wakeAll wakes every watcher (a gap in the feed, the poll).
func (h *playerHub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs.wakeAll()
}

// noticeWatchPage is how many notices a watcher reads from the store at
// once.
const noticeWatchPage = 500

// WatchPlayer implements hangarv1.NoticeServiceServer. It always reads
// notices from the store by seq, so a missed wake-up only delays a notice
// and never drops one.
func (s *Service) WatchPlayer(req *hangarv1.WatchPlayerRequest, stream hangarv1.NoticeService_WatchPlayerServer) error {
	ctx := stream.Context()
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return toStatus(ctx, s.log, errUnauthenticated)
	}
	after := req.GetAfterSeq()
	if after < 0 {
		return toStatus(ctx, s.log, fmt.Errorf("%w: after_seq must not be negative", errInvalid))
	}
	release, err := s.limits.AcquireWatch(me.ID)
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	defer release()
	// Subscribe before reading, so that no notice after the read goes
	// unnoticed.
	wake, unsubscribe := s.players.subscribe(me.ID)
	defer unsubscribe()
	latest, err := s.store.LatestNotice(ctx, me.ID)
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	if after > latest {
		return toStatus(ctx, s.log, fmt.Errorf("%w: after_seq %d is beyond your latest notice %d", errOutOfRange, after, latest))
	}
	// The watch is valid: say so at once (see WatchMatch).
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := s.limits.NewWatchQueue(stream)
	defer func() { _ = q.Close(ctx, false) }()
	for {
		ns, err := s.store.Notices(ctx, me.ID, after, noticeWatchPage)
		if err != nil {
			return toStatus(ctx, s.log, err)
		}
		for _, sn := range ns {
			n, err := decodeNotice(sn)
			if err != nil {
				return toStatus(ctx, s.log, err)
			}
			if err := q.Push(ctx, s.closing, &hangarv1.WatchPlayerResponse{Notice: n}); err != nil {
				return toStatus(ctx, s.log, err)
			}
			after = sn.Seq
		}
		if len(ns) == noticeWatchPage {
			continue // a full page: read on, never take it for the end
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return toStatus(ctx, s.log, ctx.Err())
		case <-s.closing:
			return toStatus(ctx, s.log, errUnavailable)
		}
	}
}

// ListNotices implements hangarv1.NoticeServiceServer.
func (s *Service) ListNotices(ctx context.Context, req *hangarv1.ListNoticesRequest) (*hangarv1.ListNoticesResponse, error) {
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return nil, toStatus(ctx, s.log, errUnauthenticated)
	}
	size, err := pageSize(req.GetPageSize(), 100, store.NoticePage)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if req.GetAfterSeq() < 0 {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: after_seq must not be negative", errInvalid))
	}
	ns, err := s.store.Notices(ctx, me.ID, req.GetAfterSeq(), size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	// Read after the page, so that latest_seq is never below its last.
	latest, err := s.store.LatestNotice(ctx, me.ID)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.ListNoticesResponse{LatestSeq: latest}
	for _, sn := range ns {
		n, err := decodeNotice(sn)
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		resp.Notices = append(resp.Notices, n)
	}
	return resp, nil
}
