package matchmaker

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/wake"
	"github.com/hangarhq/hangar/store"
)

// Matchmaking. A player's ticket waits in the store's queue; every node
// runs a matcher that, a few times a second, has the store hand it each
// pool's waiting tickets (a pool is a game, its options, a seat count and
// the rated flag) and decides which of them make a match (form, a pure
// function of the tickets and the time), and then makes those matches
// through the ordinary write path.
//
// Making a match is two steps (see store/tickets.go): the store records
// the group and the id of its match (derived from the tickets' ids) with a
// lease, then the node creates the match, as a command whose request id
// names the match, and marks the tickets matched. A node that dies between
// the two leaves the group to whichever node claims it when the lease
// passes: that node creates the same match (a retry of the create, if the
// first got as far as the commit, appends nothing) and marks the tickets.
// A ticket is formed once, so its player sits in one match.

// MatchmakingOptions tune the matchmaker; the zero value of each field is
// the production setting.
type Options struct {
	// Tick is how often a node forms matches (default 250ms); an Enqueue
	// on the node also starts a pass at once.
	Tick time.Duration
	// Window is the half-width of a new ticket's rating window, in rating
	// points (mu; default 2); Widen is how much it widens for each second
	// the ticket waits (default 0.5), up to MaxWindow (default 50, wider
	// than Hangar's ratings spread in practice).
	Window, Widen, MaxWindow float64
	// BotsAfter is how long a ticket that does not say waits for players
	// before bots fill the seats no player took (default 60s).
	BotsAfter time.Duration
	// TicketTTL is how long a ticket may wait before it expires (default
	// an hour): only tickets that keep waiting get that old.
	TicketTTL time.Duration
	// Lease is how long a group formed by a node stays with it before
	// another node may make its match (default 10s).
	Lease time.Duration
	// Progress is how often WatchTicket sends a queued ticket's wait and
	// window (default 1s).
	Progress time.Duration
	// PoolLimit is the most waiting tickets of one pool a pass decides on
	// (default 5000), oldest first.
	PoolLimit int
	// TurnTime and TimeoutsBeforeBot are the clock of a match made from
	// tickets that choose no clock or bot settings (0: no clock; see
	// CreateMatchRequest.turn_time).
	TurnTime          time.Duration
	TimeoutsBeforeBot int32
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Tick, 250*time.Millisecond)
	def(&o.BotsAfter, time.Minute)
	def(&o.TicketTTL, time.Hour)
	def(&o.Lease, 10*time.Second)
	def(&o.Progress, time.Second)
	if o.Window <= 0 {
		o.Window = 2
	}
	if o.Widen <= 0 {
		o.Widen = 0.5
	}
	if o.MaxWindow <= 0 {
		o.MaxWindow = 50
	}
	if o.PoolLimit <= 0 {
		o.PoolLimit = 5000
	}
	return o
}

// window is the half-width of the rating window of a ticket that has
// waited wait.
func (o Options) window(wait time.Duration) float64 {
	return min(o.Window+o.Widen*max(wait, 0).Seconds(), o.MaxWindow)
}

// gatherWindow is how long after an Enqueue the node's next pass starts.
const gatherWindow = 10 * time.Millisecond

// maxBotsAfter bounds a ticket's bots_after.
const maxBotsAfter = time.Hour

// ticketPrefix starts every ticket id (and tells a ticket's change from a
// match's on the feed).
const ticketPrefix = "t_"

var ticketStatusProto = map[store.TicketStatus]hangarv1.TicketStatus{
	store.TicketWaiting:   hangarv1.TicketStatus_TICKET_STATUS_QUEUED,
	store.TicketFormed:    hangarv1.TicketStatus_TICKET_STATUS_QUEUED,
	store.TicketMatched:   hangarv1.TicketStatus_TICKET_STATUS_MATCHED,
	store.TicketCancelled: hangarv1.TicketStatus_TICKET_STATUS_CANCELLED,
	store.TicketExpired:   hangarv1.TicketStatus_TICKET_STATUS_EXPIRED,
}

// Errors of the matchmaker, each with its own reason.
var (
	ErrNotYourTicket = fmt.Errorf("%w: the ticket is another player's", fault.ErrPermission)
	ErrTicketMatched = fmt.Errorf("%w: the ticket is matched", fault.ErrRule)
	ErrTicketExpired = fmt.Errorf("%w: the ticket has expired", fault.ErrRule)
	ErrTicketOpen    = fmt.Errorf("%w: you have a ticket in the queue already; cancel it or wait for its match", store.ErrExists)
)

// TicketOpen is an Enqueue refused because the player has a ticket in the
// queue: ALREADY_EXISTS, reason TICKET_OPEN, with that ticket's id.
type TicketOpen struct{ ID string }

func (e *TicketOpen) Error() string { return ErrTicketOpen.Error() }
func (e *TicketOpen) Unwrap() error { return ErrTicketOpen }

// Enqueue implements hangarv1.MatchmakingServiceServer.
func (s *Matchmaker) Enqueue(ctx context.Context, req *hangarv1.EnqueueRequest) (*hangarv1.EnqueueResponse, error) {
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return nil, fault.ErrUnauthenticated
	}
	g, err := s.games.Lookup(req.GetGame())
	if err != nil {
		return nil, err
	}
	if err := ident.CheckRequestID(req.GetRequestId(), false); err != nil {
		return nil, err
	}
	n := int(req.GetSeatCount())
	opts, _, err := match.Options(s.games, g, req.GetOptions(), n)
	if err != nil {
		return nil, err
	}
	botsAfter := s.mm.BotsAfter
	if ba := req.GetBotsAfter(); ba != nil {
		if d := ba.AsDuration(); !ba.IsValid() || d < time.Second || d > maxBotsAfter {
			return nil, fmt.Errorf("%w: bots_after must be 1s to 1h", fault.ErrInvalid)
		}
		if req.GetKeepWaiting() {
			return nil, fmt.Errorf("%w: a ticket that keeps waiting takes no bots_after", fault.ErrInvalid)
		}
		botsAfter = ba.AsDuration()
	}
	if req.GetKeepWaiting() {
		botsAfter = 0
	}
	clock, err := encodeClock(match.ClockOf(req))
	if err != nil {
		return nil, err
	}
	// The stored options of a game hosted before games were named are the
	// bytes hangar.v1's GameOptions had: its tickets pool as they did.
	optBytes, err := game.EncodeOptions(g, opts)
	if err != nil {
		return nil, err
	}
	rating, err := s.ratingFor(ctx, g.Name(), me.ID)
	if err != nil {
		return nil, err
	}
	id := ident.New(ticketPrefix)
	reqID := req.GetRequestId()
	if reqID == "" {
		reqID = id
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	t, created, err := s.store.Enqueue(ctx, store.Ticket{ID: id, Player: me.ID, PlayerName: me.DisplayName, RequestID: reqID, Fingerprint: match.Fingerprint(req),
		Game: g.Name(), Pool: poolKey(g.Name(), optBytes, n, req.GetRated(), false, clock), Options: optBytes, Seats: n,
		Rated: req.GetRated(), BotsAfter: botsAfter, Clock: clock, KeepWaiting: req.GetKeepWaiting(), Rating: rating, Created: now})
	if errors.Is(err, store.ErrExists) && t.ID != "" {
		err = &TicketOpen{ID: t.ID}
	}
	if err != nil {
		return nil, err
	}
	if created {
		s.kickMatcher()
	}
	v, err := s.ticketView(t, now)
	if err != nil {
		return nil, err
	}
	return &hangarv1.EnqueueResponse{Ticket: v}, nil
}

// ticketOptions are the game and options of ticket t: the game's options
// message, with the retired platform auto_roll folded in for a ticket
// stored with it.
func (s *Matchmaker) ticketOptions(t store.Ticket) (game.Game, proto.Message, error) {
	g := s.games.Get(t.Game)
	if g == nil {
		return nil, nil, fmt.Errorf("ticket %s: game %q is not hosted", t.ID, t.Game)
	}
	opts, err := s.games.DecodeOptions(g, t.Options)
	if err != nil {
		return nil, nil, fmt.Errorf("ticket %s: %w", t.ID, err)
	}
	if t.AutoRoll {
		opts = game.WithLegacyAutoRoll(g, opts)
	}
	return g, opts, nil
}

// ratingFor is the rating a player's ticket is matched by: the player's mu
// in the game, a new player's when the player was never rated.
func (s *Matchmaker) ratingFor(ctx context.Context, game, player string) (float64, error) {
	st, err := s.store.Standing(ctx, game, player)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return match.RatingModel.Mu, nil
	case err != nil:
		return 0, err
	}
	return match.RatingOf(st.Rating).Mu, nil
}

// poolKey names the tickets that may share a match: same game, options,
// seat count and rated flag. autoRoll is the retired platform auto_roll of
// a ticket stored with it (store.Ticket.AutoRoll): such tickets pool among
// themselves, as they did. (A ticket without it keeps the key it had
// before tickets could ask for it.)
func poolKey(game string, options []byte, seats int, rated, autoRoll bool, clock []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%t\x00", game, seats, rated)
	if autoRoll {
		h.Write([]byte("auto_roll\x00"))
	}
	if clock != nil { // (only then: a ticket that chooses no clock keeps the key it had)
		fmt.Fprintf(h, "clock\x00%x\x00", clock)
	}
	h.Write(options)
	return ident.Derived("", h.Sum(nil)[:15])
}

// myTicket reads ticket id of the caller.
func (s *Matchmaker) myTicket(ctx context.Context, id string) (store.Ticket, error) {
	if err := ident.Check("ticket_id", id); err != nil {
		return store.Ticket{}, err
	}
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return store.Ticket{}, fault.ErrUnauthenticated
	}
	t, err := s.store.Ticket(ctx, id)
	if err != nil {
		return store.Ticket{}, err
	}
	if t.Player != me.ID {
		return store.Ticket{}, ErrNotYourTicket
	}
	return t, nil
}

// GetTicket implements hangarv1.MatchmakingServiceServer.
func (s *Matchmaker) GetTicket(ctx context.Context, req *hangarv1.GetTicketRequest) (*hangarv1.GetTicketResponse, error) {
	t, err := s.myTicket(ctx, req.GetTicketId())
	if err != nil {
		return nil, err
	}
	v, err := s.ticketView(t, s.now())
	if err != nil {
		return nil, err
	}
	return &hangarv1.GetTicketResponse{Ticket: v}, nil
}

// CancelTicket implements hangarv1.MatchmakingServiceServer.
func (s *Matchmaker) CancelTicket(ctx context.Context, req *hangarv1.CancelTicketRequest) (*hangarv1.CancelTicketResponse, error) {
	t, err := s.myTicket(ctx, req.GetTicketId())
	if err != nil {
		return nil, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if t.Status != store.TicketCancelled {
		v := t.Version
		t, err = s.store.CancelTicket(ctx, t.ID, now)
		switch {
		case errors.Is(err, store.ErrNotWaiting) && t.Status == store.TicketExpired:
			err = ErrTicketExpired
		case errors.Is(err, store.ErrNotWaiting):
			err = ErrTicketMatched
		}
		if err != nil {
			return nil, err
		}
		if t.Version > v {
			s.ticketChanged(t)
		}
	}
	view, err := s.ticketView(t, now)
	if err != nil {
		return nil, err
	}
	return &hangarv1.CancelTicketResponse{Ticket: view}, nil
}

// WatchTicket implements hangarv1.MatchmakingServiceServer. It re-reads the
// ticket from the store whenever the node learns that it changed (its own
// changes, other nodes' through the feed, and a slow poll in case a
// notification was lost), and sends the ticket whenever it differs from
// what it sent last.
func (s *Matchmaker) WatchTicket(req *hangarv1.WatchTicketRequest, stream hangarv1.MatchmakingService_WatchTicketServer) error {
	ctx := stream.Context()
	if err := ident.Check("ticket_id", req.GetTicketId()); err != nil {
		return err
	}
	me, _ := auth.Caller(ctx)
	release, err := s.limits.AcquireWatch(me.ID)
	if err != nil {
		return err
	}
	defer release()
	// Subscribe before reading, so that no change after the read goes
	// unnoticed.
	wake, unsubscribe := s.tickets.subscribe(req.GetTicketId())
	defer unsubscribe()
	t, err := s.myTicket(ctx, req.GetTicketId())
	if err != nil {
		return err
	}
	s.tickets.changed(t.ID, t.Version)
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	progress := time.NewTicker(s.mm.Progress)
	defer progress.Stop()
	var last *hangarv1.Ticket
	for {
		v, err := s.ticketView(t, s.now())
		if err != nil {
			return err
		}
		if last == nil || !proto.Equal(v, last) {
			if err := stream.Send(&hangarv1.WatchTicketResponse{Ticket: v}); err != nil {
				return err
			}
			last = v
		}
		if !t.Status.Open() {
			return nil
		}
		select {
		case <-wake:
			if t, err = s.store.Ticket(ctx, t.ID); err != nil {
				return err
			}
			s.tickets.changed(t.ID, t.Version)
		case <-progress.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return fault.ErrUnavailable
		}
	}
}

// ticketView is t as the API shows it at time now.
func (s *Matchmaker) ticketView(t store.Ticket, now time.Time) (*hangarv1.Ticket, error) {
	g, opts, err := s.ticketOptions(t)
	if err != nil {
		return nil, err
	}
	packed, err := s.games.Pack(opts)
	if err != nil {
		return nil, err
	}
	v := &hangarv1.Ticket{TicketId: t.ID, PlayerId: t.Player, Game: g.Name(), Options: packed, SeatCount: int32(t.Seats),
		Rated: t.Rated, KeepWaiting: t.KeepWaiting, Status: ticketStatusProto[t.Status], CreateTime: timestamppb.New(t.Created),
		Rating: t.Rating}
	if !t.KeepWaiting {
		v.BotsAfter = durationpb.New(t.BotsAfter)
	}
	if t.Status.Open() {
		wait := max(now.Sub(t.Created), 0).Truncate(time.Millisecond)
		v.Wait, v.Window = durationpb.New(wait), s.mm.window(wait)
	} else {
		v.EndTime, v.Wait = timestamppb.New(t.Updated), durationpb.New(t.Updated.Sub(t.Created))
	}
	if t.Status == store.TicketMatched {
		v.MatchId, v.Seat = t.Match, int32(t.Seat)
	}
	return v, nil
}

// ticketChanged tells the ticket's watchers, on this node and (through the
// feed) on the others, that the ticket reached t.Version.
func (s *Matchmaker) ticketChanged(t store.Ticket) {
	s.tickets.changed(t.ID, t.Version)
	s.published(t.ID, t.Version)
}

// FeedTicket takes a change from the feed that is a ticket's; it reports
// whether it was.
func (s *Matchmaker) FeedTicket(c store.Change) bool {
	if !strings.HasPrefix(c.Match, ticketPrefix) {
		return false
	}
	s.tickets.changed(c.Match, c.Version)
	return true
}

// Matchmaker is a node's matchmaker: the queue of tickets, the passes that
// form matches from it, and the watchers of tickets.
type Matchmaker struct {
	store  store.Store
	log    *slog.Logger
	games  *game.Registry
	now    func() time.Time
	w      *match.Writer
	limits *limit.Limiter
	// mm tunes the matchmaker; mmWake starts a pass; tickets wakes the
	// ticket watchers.
	mm      Options
	mmWake  chan struct{}
	tickets *ticketHub
	// published tells the other nodes that a ticket changed.
	published func(id string, version int64)
	// singleNode: no other node shares the store; hasFeed: changes come
	// from other nodes through a feed, and pollEvery is how often the
	// watched tickets are read again in case one was lost.
	singleNode, hasFeed bool
	pollEvery           time.Duration
	// closing is closed when the node drains: watch streams end.
	closing <-chan struct{}
	// ctx lives until the node closes; the matcher runs under it and is
	// counted in bots.
	ctx  context.Context
	bots *sync.WaitGroup
}

// matchmakerConfig is what a matchmaker is made of.
type Config struct {
	Store      store.Store
	Log        *slog.Logger
	Games      *game.Registry
	Now        func() time.Time
	Writer     *match.Writer
	Limits     *limit.Limiter
	Options    Options
	Published  func(id string, version int64)
	SingleNode bool
	HasFeed    bool
	PollEvery  time.Duration
	Closing    <-chan struct{}
	Ctx        context.Context
	Bots       *sync.WaitGroup
}

// newMatchmaker returns the matchmaker of c.
func New(c Config) *Matchmaker {
	s := &Matchmaker{store: c.Store, log: c.Log, games: c.Games, now: c.Now, w: c.Writer, limits: c.Limits,
		mm: c.Options.withDefaults(), mmWake: make(chan struct{}, 1), tickets: newTicketHub(), published: c.Published,
		singleNode: c.SingleNode, hasFeed: c.HasFeed, pollEvery: c.PollEvery, closing: c.Closing, ctx: c.Ctx, bots: c.Bots}
	if s.pollEvery <= 0 {
		s.pollEvery = 2 * time.Second
	}
	return s
}

// Start starts the matcher, which also resumes the queue a previous run
// left.
func (s *Matchmaker) Start() {
	s.bots.Add(1)
	go s.runMatcher()
}

// Gap handles a gap in the feed: every ticket watcher reads its ticket
// again.
func (s *Matchmaker) Gap() { s.tickets.Gap() }

// ticketHub wakes the watchers of tickets on this node.
type ticketHub struct {
	mu   sync.Mutex
	subs wake.Set
	// known is the latest version this node knows of each watched ticket.
	known map[string]int64
}

func newTicketHub() *ticketHub {
	return &ticketHub{subs: make(wake.Set), known: make(map[string]int64)}
}

// subscribe returns a channel that receives a value after each change of
// the ticket, and a function to unsubscribe.
func (h *ticketHub) subscribe(id string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.subs.Add(id)
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.subs.Remove(id, ch) {
			delete(h.known, id)
		}
	}
}

// changed records that ticket id reached version v and wakes its watchers
// if that is news.
func (h *ticketHub) changed(id string, v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[id]; !ok || h.known[id] >= v {
		return
	}
	h.known[id] = v
	h.subs.Wake(id)
}

// Gap wakes every watcher: after a gap in the feed anything may have
// changed.
func (h *ticketHub) Gap() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs.WakeAll()
}

// watched returns the ids of the tickets watched on this node.
func (h *ticketHub) watched() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.subs))
	for id := range h.subs {
		out = append(out, id)
	}
	return out
}
