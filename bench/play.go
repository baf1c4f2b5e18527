package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// gameName is the game the bench plays.
const gameName = "aeroplane"

// The Aeroplane messages the seats send and read, in the Any the API
// carries them in. An action is built once and sent as it is: a roll is
// always the same Roll, and a move is one of the legal actions the server
// listed, sent back without decoding it.
var (
	rollAction      = pack(&aeroplanev1.Roll{})
	autoRollOptions = pack(&aeroplanev1.Options{AutoRoll: true})
	eventURL        = typeURL(&aeroplanev1.Event{})
	stateURL        = typeURL(&aeroplanev1.State{})
)

func typeURL(m proto.Message) string {
	return "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
}

func pack(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err) // the bench's own message
	}
	return a
}

// options are the options of the matches the bench creates: nil for the
// game's defaults, or auto_roll on (Config.AutoRoll).
func (c *Config) options() *anypb.Any {
	if c.AutoRoll {
		return autoRollOptions
	}
	return nil
}

// The fields of an Aeroplane event the tracker follows.
var (
	eventFields   = (&aeroplanev1.Event{}).ProtoReflect().Descriptor().Fields()
	eventKind     = eventFields.ByName("kind").Number()
	eventSeat     = eventFields.ByName("seat").Number()
	eventNextSeat = eventFields.ByName("next_seat").Number()
)

// aeroplaneEvent reads the kind, seat and next seat of an Aeroplane event
// from its wire form, skipping the rest: a seat folds every event of its
// match, and needs no more of them. ok is false for bytes that do not
// parse.
func aeroplaneEvent(b []byte) (kind aeroplanev1.EventKind, seat, next int32, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, 0, false
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == eventKind || num == eventSeat || num == eventNextSeat) {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, 0, false
			}
			switch num {
			case eventKind:
				kind = aeroplanev1.EventKind(v)
			case eventSeat:
				seat = int32(v)
			default:
				next = int32(v)
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return 0, 0, 0, false
		}
		b = b[n:]
	}
	return kind, seat, next, true
}

// tracker follows whose turn it is in a match from its events, as a client
// that renders the board would, so a seat knows when to act without asking
// the server after every event.
type tracker struct {
	version int64
	turn    int32
	phase   aeroplanev1.Phase
	over    bool
	// stale means the events said something the tracker cannot follow;
	// the seat re-reads the match.
	stale bool
}

func (t *tracker) reset(m *hangarv1.Match) {
	*t = tracker{version: m.GetVersion(), turn: m.GetTurnSeat()}
	if a := m.GetState(); a != nil {
		st := &aeroplanev1.State{}
		if a.GetTypeUrl() != stateURL || st.UnmarshalVT(a.GetValue()) != nil {
			t.stale = true
		}
		t.phase = st.GetPhase()
	}
	t.over = m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || t.phase == aeroplanev1.Phase_PHASE_OVER
}

// apply folds the next event; events already folded are ignored.
func (t *tracker) apply(ev *hangarv1.Event) {
	switch {
	case ev.GetSeq() <= t.version:
		return
	case ev.GetSeq() != t.version+1:
		t.stale = true
		return
	}
	t.version = ev.GetSeq()
	switch b := ev.GetBody().(type) {
	case *hangarv1.Event_MatchEnded:
		t.over = true
	case *hangarv1.Event_Game:
		kind, seat, next, ok := aeroplaneEvent(b.Game.GetValue())
		if !ok || b.Game.GetTypeUrl() != eventURL {
			t.stale = true
			return
		}
		switch kind {
		case aeroplanev1.EventKind_EVENT_KIND_ROLLED:
			t.turn = seat
			if t.phase != aeroplanev1.Phase_PHASE_START_ROLL {
				t.phase = aeroplanev1.Phase_PHASE_MOVE
			}
		case aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED:
			t.turn = next
			if t.phase != aeroplanev1.Phase_PHASE_START_ROLL {
				t.phase = aeroplanev1.Phase_PHASE_ROLL
			}
		case aeroplanev1.EventKind_EVENT_KIND_FIRST_PLAYER:
			t.turn, t.phase = seat, aeroplanev1.Phase_PHASE_ROLL
		case aeroplanev1.EventKind_EVENT_KIND_START_TIE:
			// The tied seats roll again; a TURN_PASSED names the next
			// roller unless it is the one who rolled last.
		case aeroplanev1.EventKind_EVENT_KIND_PLACED:
			// Not always the mover: at the end the last seat left in play
			// is placed too, just before GAME_OVER.
		case aeroplanev1.EventKind_EVENT_KIND_GAME_OVER:
			t.phase, t.over = aeroplanev1.Phase_PHASE_OVER, true
		case aeroplanev1.EventKind_EVENT_KIND_RESIGNED:
			t.stale = true
		default:
			// The outcome of a move or an unused roll: the mover rolls
			// again (a bonus) unless a TURN_PASSED follows in the same
			// command.
			t.turn, t.phase = seat, aeroplanev1.Phase_PHASE_ROLL
		}
	default:
		t.stale = true
	}
}

// ackLog records when the command that caused each event was acknowledged.
type ackLog struct {
	mu sync.Mutex
	at map[int64]time.Time
}

func (a *ackLog) record(evs []*hangarv1.Event, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ev := range evs {
		a.at[ev.GetSeq()] = t
	}
}

// recordSeqs is record for the events from seq from to seq to.
func (a *ackLog) recordSeqs(from, to int64, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for seq := from; seq <= to; seq++ {
		a.at[seq] = t
	}
}

func (a *ackLog) last() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var m int64
	for s := range a.at {
		m = max(m, s)
	}
	return m
}

// seat plays one seat of one match.
type seat struct {
	b       *bench
	p       *player
	seat    int32
	matchID string
	rng     *mrand.Rand
	tr      tracker
	// counted seats count their commands in the window's totals.
	counted bool
	pace    time.Duration
	acks    *ackLog
	// legal are the actions the seat may take at version legalAt, as the
	// answer to its roll listed them (include_legal_actions) or a Play
	// stream offered them (legal_actions).
	legal   []*anypb.Any
	legalAt int64
}

// knownMoves returns the legal moves the seat was given, if they are for
// the version the seat is at.
func (s *seat) knownMoves() []*anypb.Any {
	if s.b.cfg.ListMoves || s.legalAt != s.tr.version {
		return nil
	}
	return s.legal
}

// rolled keeps the legal actions a roll answered with.
func (s *seat) rolled(r *hangarv1.ActResponse) {
	s.legal, s.legalAt = r.GetLegalActions(), r.GetVersion()
}

// offered keeps the legal actions a Play stream offered (legal_actions),
// if any: after a roll of the server's (-auto-roll), or the seat's own.
func (s *seat) offered(r *hangarv1.PlayResponse) {
	if la := r.GetLegalActions(); la != nil {
		s.legal, s.legalAt = la.GetActions(), la.GetVersion()
	}
}

// listed checks the legal actions the server listed for a move: they are
// for the version the seat is at, and moves (the seat's view is behind
// when they are a Roll, or none).
func (s *seat) listed(la *hangarv1.ListLegalActionsResponse) ([]*anypb.Any, error) {
	acts := la.GetActions()
	if la.GetVersion() != s.tr.version || len(acts) == 0 || acts[0].GetTypeUrl() == rollAction.GetTypeUrl() {
		return nil, errStale
	}
	return acts, nil
}

// myTurn reports whether the seat is to act now. In an auto_roll match it
// acts only with its die rolled: a command's events come one by one on a
// watch, and the server's roll for the seat follows the event that passed
// it the turn.
func (s *seat) myTurn() bool {
	return s.tr.turn == s.seat && (!s.b.cfg.AutoRoll || s.tr.phase == aeroplanev1.Phase_PHASE_MOVE)
}

// errStale asks the seat to re-read the match.
var errStale = errors.New("stale view")

// play plays the seat until the match ends, the window closes or ctx ends.
// It returns an error only for a failure it cannot recover from.
func (s *seat) play(ctx context.Context, view *hangarv1.Match) error {
	if s.b.cfg.Play {
		return s.playStream(ctx, view)
	}
	s.tr.reset(view)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := s.p.matches.WatchMatch(s.p.with(wctx), &hangarv1.WatchMatchRequest{MatchId: s.matchID, AfterSeq: s.tr.version})
	if err != nil {
		s.b.rec.observe("WatchMatch", 0, err)
		return err
	}
	events := make(chan *hangarv1.Event, 64)
	werr := make(chan error, 1)
	go func() {
		defer close(events)
		for {
			r, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) && wctx.Err() == nil {
					werr <- err
				}
				return
			}
			select {
			case events <- r.GetEvent():
			case <-wctx.Done():
				return
			}
		}
	}()
	failures := 0
	for !s.tr.over {
		if s.b.stopped() || ctx.Err() != nil {
			return nil
		}
		if s.tr.stale {
			if err := s.resync(); err != nil {
				return err
			}
			continue
		}
		if s.myTurn() {
			if err := s.acted(ctx, s.act(), &failures); err != nil {
				return err
			}
			continue
		}
		select {
		case ev, ok := <-events:
			if !ok {
				// The stream ends after the match's last event.
				if !s.tr.over {
					s.tr.stale = true
				}
				return nil
			}
			if ev.GetAuthorId() != s.p.id && ev.GetSeq() > s.tr.version {
				s.b.rec.observe("watch (event time to receipt)", time.Since(ev.GetTime().AsTime()), nil)
			}
			s.tr.apply(ev)
		case err := <-werr:
			s.b.rec.observe("WatchMatch", 0, err)
			return err
		case <-s.b.stop:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

func (s *seat) resync() error {
	r, err := timed(s.b, s.p.ctx, "GetMatch", func(ctx context.Context) (*hangarv1.GetMatchResponse, error) {
		return s.p.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: s.matchID})
	})
	if err != nil {
		return err
	}
	s.tr.reset(r.GetMatch())
	return nil
}

// acted takes the outcome err of the seat's command: after a success it
// waits out the pace; a stale or refused command (the seat's view of the
// match was behind) marks the view stale for the seat to catch up and try
// again, up to 10 times in a row. A non-nil return ends the seat.
func (s *seat) acted(ctx context.Context, err error, failures *int) error {
	if err == nil {
		*failures = 0
		if s.pace > 0 {
			select {
			case <-time.After(s.pace):
			case <-s.b.stop:
			case <-ctx.Done():
			}
		}
		return nil
	}
	if errors.Is(err, errStopped) {
		return nil // the loop sees the bench stopped
	}
	if c := status.Code(err); errors.Is(err, errStale) || c == codes.Aborted || c == codes.FailedPrecondition {
		if *failures++; *failures > 10 {
			return fmt.Errorf("seat %d of %s: %w", s.seat, s.matchID, err)
		}
		s.tr.stale = true
		return nil
	}
	return err
}

// act plays the seat's turn: a roll (asking for the moves it allows), or
// one of its legal moves, listed first when the roll's answer did not give
// them.
func (s *seat) act() error {
	move := s.tr.phase == aeroplanev1.Phase_PHASE_MOVE
	req := &hangarv1.ActRequest{MatchId: s.matchID, ExpectedVersion: s.tr.version, RequestId: s.b.reqID()}
	rpc := "Act Roll"
	if move {
		moves := s.knownMoves()
		if len(moves) == 0 {
			la, err := timed(s.b, s.p.ctx, "ListLegalActions", func(ctx context.Context) (*hangarv1.ListLegalActionsResponse, error) {
				return s.p.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: s.matchID})
			})
			if err != nil {
				return err
			}
			if moves, err = s.listed(la); err != nil {
				return err
			}
		}
		req.Action, rpc = moves[s.rng.IntN(len(moves))], "Act Move"
	} else {
		req.Action, req.IncludeLegalActions = rollAction, !s.b.cfg.ListMoves
	}
	if !s.b.paced(s.p.ctx) {
		return errStopped
	}
	r, err := timed(s.b, s.p.ctx, rpc, func(ctx context.Context) (*hangarv1.ActResponse, error) {
		return s.p.moves.Act(ctx, req)
	})
	if err != nil {
		return err
	}
	if !move {
		s.rolled(r)
	}
	evs := r.GetEvents()
	if s.acks != nil {
		s.acks.record(evs, time.Now())
	}
	if s.counted {
		s.b.count(move)
	}
	for _, ev := range evs {
		s.tr.apply(ev)
	}
	return nil
}

// newMatch creates a match of len(ps) seats with ps[0] and seats the
// others; the last join starts it. It returns the started match.
func (b *bench) newMatch(ps []*player, rpcSuffix string) (*hangarv1.Match, error) {
	cr, err := timed(b, ps[0].ctx, "CreateMatch"+rpcSuffix, func(ctx context.Context) (*hangarv1.CreateMatchResponse, error) {
		return ps[0].matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: gameName, Options: b.cfg.options(),
			SeatCount: int32(len(ps)), RequestId: b.reqID()})
	})
	if err != nil {
		return nil, err
	}
	m := cr.GetMatch()
	for _, p := range ps[1:] {
		jr, err := timed(b, p.ctx, "JoinMatch"+rpcSuffix, func(ctx context.Context) (*hangarv1.JoinMatchResponse, error) {
			return p.matches.JoinMatch(ctx, &hangarv1.JoinMatchRequest{MatchId: m.GetMatchId(), RequestId: b.reqID()})
		})
		if err != nil {
			return nil, err
		}
		m = jr.GetMatch()
	}
	return m, nil
}

// seatsOf maps the match's player ids to their seats.
func seatsOf(m *hangarv1.Match) map[string]int32 {
	out := map[string]int32{}
	for _, st := range m.GetSeats() {
		out[st.GetPlayerId()] = st.GetSeat()
	}
	return out
}

// playMatch plays every seat of m until it ends (or the window closes).
// A seat that fails stops the others.
func (b *bench) playMatch(ctx context.Context, ps []*player, m *hangarv1.Match, seed uint64, counted bool,
	pace time.Duration, acks *ackLog) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seats := seatsOf(m)
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		s := &seat{b: b, p: p, seat: seats[p.id], matchID: m.GetMatchId(), rng: mrand.New(mrand.NewPCG(seed, uint64(i))),
			counted: counted, pace: pace, acks: acks}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.play(ctx, m); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// table keeps one match in play for the whole window: when a match ends it
// starts another with the same players.
func (b *bench) table(ctx context.Context, i int, ps []*player, first *hangarv1.Match) {
	m := first
	for n := uint64(0); ; n++ {
		b.inFlight.Add(1)
		err := b.playMatch(ctx, ps, m, uint64(i)<<32|n, true, 0, nil)
		b.inFlight.Add(-1)
		if b.stopped() || ctx.Err() != nil {
			return
		}
		if err == nil {
			b.finished.Add(1)
		}
		for {
			var err error
			if m, err = b.newMatch(ps, ""); err == nil {
				break
			}
			// The error is counted; try again after a breath, so that a
			// failing server is not spun on.
			select {
			case <-time.After(100 * time.Millisecond):
			case <-b.stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}
}
