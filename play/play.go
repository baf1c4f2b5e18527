// Package play is a line-oriented terminal client of a Hangar server: it
// creates, joins or watches a match over gRPC (through the generated client
// in api/, never the engines), draws the board after each event, prints a
// line per event, asks the player for a roll or a numbered move when it is
// their turn and ends with the final ranking.
//
// It draws Aeroplane Chess on the grid of MatchService.GetBoard and
// Carcassonne as a map of the tiles laid. Any other game the server hosts
// gets the generic view (generic.go): its title from GameService.ListGames,
// its state and events as protobuf JSON, its legal actions as numbered
// choices. Every game is played by choosing one of the legal actions the
// server lists, sent back through MoveService.Act as it came.
package play

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// Config says what to play and where.
type Config struct {
	// Addr is the server's gRPC address, host:port.
	Addr string
	// TLS, when set, dials the server over TLS with it (nil: cleartext).
	TLS *tls.Config
	// Name is the display name of a player created for this client.
	Name string
	// Token is a bearer token to play with; empty: the one kept in
	// TokenFile, else a new player's.
	Token string
	// TokenFile keeps the token of the player this client created, so that
	// the next run is the same player (empty: not kept).
	TokenFile string

	// Create opens a match of Game (a hosted game's name; empty:
	// "aeroplane") with Seats seats, Bots of them bots.
	Create bool
	Game   string
	Seats  int
	Bots   int
	// AutoRoll has the server roll each seat's die when its turn comes
	// (Aeroplane Chess's Options.auto_roll): the player only chooses moves.
	AutoRoll bool
	// Join joins the match of that id (or resumes it when already seated).
	Join string
	// Watch watches the match of that id without playing.
	Watch string
	// Rematch keeps a seated player's client open after the end while a
	// rematch may start (the watch's follow_rematch): the player types
	// "rematch" to offer one, or answers one, and the client follows into
	// the new match.
	Rematch bool

	// Generic shows every game in the generic view, the ones the client
	// draws too (to see a game as a client that does not know it would).
	Generic bool

	// Colour draws with ANSI colours.
	Colour bool
	In     io.Reader
	Out    io.Writer
}

// coalesceWindow is how long after an event the client waits for the next
// one before it draws the board: the events of one command arrive within
// it, and the board is drawn once for them.
const coalesceWindow = 30 * time.Millisecond

// errQuit ends a session at the player's request.
var errQuit = errors.New("quit")

// Run plays or watches one match to its end (or until the player quits,
// or ctx ends). It returns the first error a server call gave that the
// client could not get past.
func Run(ctx context.Context, cfg Config) error {
	modes := 0
	for _, on := range []bool{cfg.Create, cfg.Join != "", cfg.Watch != ""} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return errors.New("choose one of -create, -join MATCH_ID and -watch MATCH_ID")
	}
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	conn, err := grpc.NewClient(cfg.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	s := &session{
		cfg:     cfg,
		out:     bufio.NewWriter(cfg.Out),
		conn:    conn,
		players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn),
		moves:   hangarv1.NewMoveServiceClient(conn),
		games:   hangarv1.NewGameServiceClient(conn),
		view:    view{p: painter{on: cfg.Colour}, generic: cfg.Generic, seat: -1},
	}
	defer s.out.Flush()
	var b [6]byte
	rand.Read(b[:])
	s.reqPrefix = "play-" + hex.EncodeToString(b[:])
	for {
		if err = s.run(ctx); err != nil || s.rematch == "" {
			break
		}
		s.printf("\nfollowing into the rematch %s\n", s.rematch)
		s = s.next()
		if err = s.awaitMatch(ctx); err != nil {
			break
		}
	}
	if errors.Is(err, errQuit) {
		s.printf("left the client; the match goes on without it (hangar play -join %s resumes)\n", s.matchID)
		return nil
	}
	return err
}

// session is one client's conversation with the server about one match:
// the player, the watch, the prompts and what the player types. How the
// match is shown is its view's job. Only the goroutine running run writes
// to out.
type session struct {
	cfg     Config
	out     *bufio.Writer
	conn    grpc.ClientConnInterface
	players hangarv1.PlayerServiceClient
	matches hangarv1.MatchServiceClient
	moves   hangarv1.MoveServiceClient
	games   hangarv1.GameServiceClient
	ctx     context.Context // carries the token

	me      string // player id
	matchID string
	// view is the match as the client knows it, and shows it.
	view  view
	ended *hangarv1.MatchEnded

	prompted  int64 // version of the last prompt
	pending   *prompt
	reqPrefix string
	reqN      int

	// lines are the player's lines (nil: none), read once for the
	// sessions of a match and its rematches.
	lines chan string
	// rematch is the match the rematch started (RematchStarted);
	// finalShown: the ranking was printed at the end, before the rematch
	// window.
	rematch    string
	finalShown bool
}

// view is one match as the client knows it, and how the client shows it:
// the board drawn, events, seats and players in words. The session fills
// it as it reads the match and its events.
type view struct {
	p       painter
	generic bool               // Config.Generic
	game    string             // the match's game's name
	info    *hangarv1.GameInfo // the game as ListGames describes it
	types   resolver           // the game's message types the client knows
	seat    int32              // the player's seat, -1 when watching
	match   *hangarv1.Match
	seats   map[int32]*hangarv1.Seat
	board   *aeroplanev1.Board // nil until GetBoard answers
	noBoard string             // why there is no board to draw

	// last is the newest watch response: version, status, turn, phase.
	last    *hangarv1.WatchMatchResponse
	lastDie int32
}

// next is the session of s's rematch: the same player, connection and
// input, joining the rematch.
func (s *session) next() *session {
	cfg := s.cfg
	cfg.Create, cfg.Join = false, s.rematch
	return &session{cfg: cfg, out: s.out, conn: s.conn, players: s.players, matches: s.matches, moves: s.moves,
		games: s.games, ctx: s.ctx, me: s.me, view: view{p: s.view.p, generic: s.view.generic, seat: -1},
		reqPrefix: s.reqPrefix, reqN: s.reqN, lines: s.lines}
}

// awaitMatch waits until the session's match (a rematch) can be read:
// the server writes the old match's RematchStarted first and the rematch
// right after it, so a client quick to follow may find it missing for a
// moment.
func (s *session) awaitMatch(ctx context.Context) error {
	for tries := 1; ; tries++ {
		_, err := s.matches.GetMatch(s.ctx, &hangarv1.GetMatchRequest{MatchId: s.cfg.Join})
		if status.Code(err) != codes.NotFound || tries == 20 {
			return err
		}
		select {
		case <-time.After(time.Duration(tries) * 50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// following says the session's watch follows the rematch.
func (s *session) following() bool { return s.cfg.Rematch && s.view.seat >= 0 }

// prompt is a question put to the player, for the match at version: roll
// (the one legal action is Aeroplane Chess's Roll), or choose one of
// actions.
type prompt struct {
	version int64
	roll    bool
	actions []*anypb.Any
}

func (s *session) printf(format string, args ...any) { fmt.Fprintf(s.out, format, args...) }

func (s *session) run(ctx context.Context) error {
	if s.me == "" {
		if err := s.login(ctx); err != nil {
			return err
		}
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.loadBoard()
	m := s.view.match
	s.view.last = &hangarv1.WatchMatchResponse{Version: m.GetVersion(), Status: m.GetStatus(), Phase: s.view.phaseOf(m)}
	if m.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE && m.GetTurnSeat() >= 0 {
		t := m.GetTurnSeat()
		s.view.last.TurnSeat = &t
	}
	if err := s.redraw(); err != nil {
		return err
	}

	watchCtx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	events := make(chan watched)
	go s.watch(watchCtx, m.GetVersion(), events)
	if s.view.seat >= 0 && s.cfg.In != nil && s.lines == nil {
		s.lines = make(chan string)
		go readLines(ctx, s.cfg.In, s.lines)
	}
	lines := s.lines
	chats := make(chan *hangarv1.ChatMessage)
	go s.watchChat(watchCtx, chats)
	if err := s.maybePrompt(); err != nil {
		return err
	}
	for {
		s.out.Flush()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case w, ok := <-events:
			// One command's events come together: draw the board once,
			// after the last of them.
			over := false
			for {
				if !ok {
					over = true
					break
				}
				if w.err != nil {
					return w.err
				}
				s.show(w.resp)
				coalesce := time.NewTimer(coalesceWindow)
				select {
				case w, ok = <-events:
					coalesce.Stop()
					continue
				case <-coalesce.C:
				}
				break
			}
			if err := s.redraw(); err != nil {
				return err
			}
			if over {
				if !s.finalShown {
					s.final()
				}
				return nil
			}
			if s.ended != nil && s.following() && !s.finalShown {
				s.final()
				s.finalShown = true
				s.printf("type rematch to offer a rematch (q quits)\n")
			}
			if err := s.maybePrompt(); err != nil {
				return err
			}
		case c := <-chats:
			s.printf("%s\n", s.chatLine(c))
		case line, ok := <-lines:
			if !ok {
				lines, s.lines = nil, nil
				s.printf("input closed: watching on (Ctrl-C ends the client)\n")
				continue
			}
			if err := s.answer(strings.TrimSpace(line)); err != nil {
				return err
			}
		}
	}
}

// login finds the player's token and id: the given token, the kept one, or
// a new player's.
func (s *session) login(ctx context.Context) error {
	tok := s.cfg.Token
	kept := false
	if tok == "" && s.cfg.TokenFile != "" {
		tok = readToken(s.cfg.TokenFile)
		kept = tok != ""
	}
	if tok != "" {
		s.ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
		r, err := s.players.GetPlayer(s.ctx, &hangarv1.GetPlayerRequest{})
		if err == nil {
			s.me = r.GetPlayer().GetPlayerId()
			s.printf("playing as %s (%s)\n", r.GetPlayer().GetDisplayName(), s.me)
			if kept {
				s.refresh(ctx)
			}
			return nil
		}
		if !kept || status.Code(err) != codes.Unauthenticated {
			return fmt.Errorf("check token: %w", err)
		}
		// The kept token expired unused for a whole token lifetime, was
		// revoked, or belongs to another server: register afresh.
		s.printf("the kept token is no longer valid (%s): registering a new player\n", status.Convert(err).Message())
	}
	name := s.cfg.Name
	if name == "" {
		name = "player"
	}
	r, err := s.players.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: name, RequestId: s.reqPrefix + "-player-" + strconv.FormatInt(time.Now().UnixNano(), 36)})
	if err != nil {
		return fmt.Errorf("create player: %w", err)
	}
	tok = r.GetToken()
	s.me = r.GetPlayer().GetPlayerId()
	s.ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	s.printf("registered %s (%s)\n", r.GetPlayer().GetDisplayName(), s.me)
	if s.cfg.TokenFile != "" {
		if err := writeToken(s.cfg.TokenFile, tok); err != nil {
			s.printf("could not keep the token: %v\n", err)
		} else {
			s.printf("token kept in %s\n", s.cfg.TokenFile)
		}
	}
	return nil
}

// refresh swaps the kept token for a fresh one, so that a player who comes
// back within each token's lifetime never expires. A failure keeps the old
// token, which still works.
func (s *session) refresh(ctx context.Context) {
	r, err := s.players.RefreshToken(s.ctx, &hangarv1.RefreshTokenRequest{})
	if err != nil {
		return
	}
	if err := writeToken(s.cfg.TokenFile, r.GetToken()); err != nil {
		s.printf("could not keep the refreshed token: %v\n", err)
		return
	}
	s.ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+r.GetToken())
}

// enter creates, joins or opens the match and reads it.
func (s *session) enter() error {
	lg, err := s.games.ListGames(s.ctx, &hangarv1.ListGamesRequest{})
	if err != nil {
		return fmt.Errorf("list games: %w", err)
	}
	hosted := map[string]*hangarv1.GameInfo{}
	var names []string
	for _, g := range lg.GetGames() {
		hosted[g.GetName()] = g
		names = append(names, g.GetName())
	}
	switch {
	case s.cfg.Create:
		game := cmp.Or(s.cfg.Game, "aeroplane")
		info := hosted[game]
		if info == nil {
			return fmt.Errorf("the server hosts no game %q: it hosts %s", game, strings.Join(names, ", "))
		}
		var opts *anypb.Any
		if s.cfg.AutoRoll {
			if info.GetOptionsType() != string((&aeroplanev1.Options{}).ProtoReflect().Descriptor().FullName()) {
				return fmt.Errorf("-auto-roll is an option of Aeroplane Chess, not of %s", info.GetTitle())
			}
			if opts, err = anypb.New(&aeroplanev1.Options{AutoRoll: true}); err != nil {
				return err
			}
		}
		r, err := s.matches.CreateMatch(s.ctx, &hangarv1.CreateMatchRequest{
			Game: game, Options: opts, SeatCount: int32(s.cfg.Seats), BotSeats: int32(s.cfg.Bots), RequestId: s.req("create"),
		})
		if err != nil {
			return fmt.Errorf("create match: %w", err)
		}
		s.matchID = r.GetMatch().GetMatchId()
		s.printf("created match %s\n", s.matchID)
		if r.GetMatch().GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_OPEN {
			s.printf("waiting for players: hangar play -addr %s -join %s\n", s.cfg.Addr, s.matchID)
		}
	case s.cfg.Join != "":
		s.matchID = s.cfg.Join
		m, err := s.get(0)
		if err != nil {
			return err
		}
		if seatOf(m, s.me) < 0 {
			if _, err := s.matches.JoinMatch(s.ctx, &hangarv1.JoinMatchRequest{MatchId: s.matchID, RequestId: s.req("join")}); err != nil {
				return fmt.Errorf("join match: %w", err)
			}
			s.printf("joined match %s\n", s.matchID)
		} else {
			s.printf("back in match %s\n", s.matchID)
		}
	default:
		s.matchID = s.cfg.Watch
	}
	m, err := s.get(0)
	if err != nil {
		return err
	}
	s.view.game = m.GetGame()
	s.view.info = hosted[s.view.game]
	if s.view.info == nil {
		s.view.info = &hangarv1.GameInfo{Name: s.view.game}
	}
	s.learnTypes(s.conn)
	if s.cfg.Watch == "" {
		s.view.seat = seatOf(m, s.me)
	}
	return nil
}

// loadBoard reads the Aeroplane Chess board; without it the client still
// plays, listing the planes instead of drawing them.
func (s *session) loadBoard() {
	if s.view.generic || s.view.info.GetBoardType() != string((&aeroplanev1.Board{}).ProtoReflect().Descriptor().FullName()) {
		return
	}
	r, err := s.matches.GetBoard(s.ctx, &hangarv1.GetBoardRequest{Game: s.view.game})
	if err != nil {
		s.view.noBoard = fmt.Sprintf("no board to draw (GetBoard: %s)", status.Code(err))
		return
	}
	s.view.board = &aeroplanev1.Board{}
	if err := r.GetBoard().UnmarshalTo(s.view.board); err != nil || len(s.view.board.GetSquares()) == 0 {
		s.view.board, s.view.noBoard = nil, "no board to draw (GetBoard sent none)"
	}
}

// phaseOf is the phase of a match's game in the words of
// WatchMatchResponse.phase, for the games the client draws ("" for
// others: the watch stream says it after the next event).
func (v *view) phaseOf(m *hangarv1.Match) string {
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE && m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		return ""
	}
	var name string
	switch st := v.decode(m.GetState()).(type) {
	case *aeroplanev1.State:
		name = st.GetPhase().String()
		if name == "PHASE_START_ROLL" {
			return "start"
		}
	case *carcassonnev1.State:
		name = st.GetPhase().String()
	}
	return strings.ToLower(strings.TrimPrefix(name, "PHASE_"))
}

func seatOf(m *hangarv1.Match, player string) int32 {
	for _, st := range m.GetSeats() {
		if st.GetPlayerId() == player && st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
			return st.GetSeat()
		}
	}
	return -1
}

// get reads the match, as it stood after version (0: now), and keeps it.
func (s *session) get(version int64) (*hangarv1.Match, error) {
	r, err := s.matches.GetMatch(s.ctx, &hangarv1.GetMatchRequest{MatchId: s.matchID, AtVersion: version})
	if err != nil {
		return nil, fmt.Errorf("get match: %w", err)
	}
	s.view.match = r.GetMatch()
	s.view.seats = map[int32]*hangarv1.Seat{}
	for _, st := range s.view.match.GetSeats() {
		s.view.seats[st.GetSeat()] = st
	}
	return s.view.match, nil
}

func (s *session) req(what string) string {
	s.reqN++
	return fmt.Sprintf("%s-%s-%d", s.reqPrefix, what, s.reqN)
}

// watched is one item of the watch stream: a response or the error that
// ended it.
type watched struct {
	resp *hangarv1.WatchMatchResponse
	err  error
}

// watch streams the match's events after seq into out, reconnecting after
// UNAVAILABLE from the last seq seen; it closes out when the match is over.
func (s *session) watch(ctx context.Context, after int64, out chan<- watched) {
	failures := 0
	for {
		stream, err := s.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: s.matchID, AfterSeq: after, FollowRematch: s.following()})
		for err == nil {
			var r *hangarv1.WatchMatchResponse
			r, err = stream.Recv()
			if err != nil {
				break
			}
			failures = 0
			after = r.GetVersion()
			select {
			case out <- watched{resp: r}:
			case <-ctx.Done():
				return
			}
		}
		if errors.Is(err, io.EOF) {
			close(out)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if status.Code(err) != codes.Unavailable || failures >= 10 {
			select {
			case out <- watched{err: fmt.Errorf("watch match: %w", err)}:
			case <-ctx.Done():
			}
			return
		}
		failures++
		select {
		case <-time.After(time.Duration(failures) * 200 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
}

// readLines sends the lines of in to out, closing it at the end of in.
func readLines(ctx context.Context, in io.Reader, out chan<- string) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		select {
		case out <- sc.Text():
		case <-ctx.Done():
			return
		}
	}
	close(out)
}

// show prints the line of one event and notes what it changed.
func (s *session) show(r *hangarv1.WatchMatchResponse) {
	s.view.last = r
	ev := r.GetEvent()
	if e := ev.GetMatchEnded(); e != nil {
		s.ended = e
	}
	if r := ev.GetRematchStarted(); r != nil && s.following() {
		s.rematch = r.GetMatchId()
	}
	if a, ok := s.view.gameEvent(ev).(*aeroplanev1.Event); ok && a.GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED {
		s.view.lastDie = a.GetDie()
	}
	if ev.GetPlayerJoined() != nil || ev.GetPlayerLeft() != nil || ev.GetSeatHandedToBot() != nil || ev.GetMatchStarted() != nil {
		// Names and seats change: read them before the line names them.
		if _, err := s.get(r.GetVersion()); err != nil {
			s.printf("%v\n", err)
		}
	}
	s.printf("%s %s\n", s.view.p.paint(fmt.Sprintf("#%-4d", ev.GetSeq()), "2"), s.view.eventLine(ev))
}

// redraw reads the match as of the last event and draws it.
func (s *session) redraw() error {
	m, err := s.get(s.view.last.GetVersion())
	if err != nil {
		return err
	}
	s.out.WriteString(s.view.draw(m))
	return nil
}

// draw is match m drawn: a head line (the game, the match, its version,
// status, turn and phase), then its seats while it is open, else its
// state.
func (v *view) draw(m *hangarv1.Match) string {
	var b strings.Builder
	b.WriteString("\n")
	head := fmt.Sprintf("%s  %s  v%d  %s", v.p.paint(v.gameTitle(), "1"), m.GetMatchId(), m.GetVersion(), statusName(m.GetStatus()))
	if v.last.TurnSeat != nil && m.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		head += fmt.Sprintf("  turn: %s (%s)", v.seatName(v.last.GetTurnSeat()), v.player(v.last.GetTurnSeat()))
	}
	if v.last.GetPhase() != "" {
		head += "  phase: " + v.last.GetPhase()
	}
	b.WriteString(head + "\n")
	switch {
	case m.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_OPEN:
		for _, st := range m.GetSeats() {
			fmt.Fprintf(&b, "  seat %d: %s\n", st.GetSeat(), v.player(st.GetSeat()))
		}
	default:
		switch st := v.decode(m.GetState()).(type) {
		case *aeroplanev1.State:
			v.drawAeroplane(&b, st)
		case *carcassonnev1.State:
			v.drawCarcassonne(&b, st)
		default:
			v.drawGeneric(&b, m.GetState())
		}
	}
	return b.String()
}

// maybePrompt asks the player to act when it is their turn and they have
// not been asked at this version.
func (s *session) maybePrompt() error {
	if s.pending != nil && s.view.last.GetVersion() > s.pending.version {
		// The match moved on without the player (a turn clock fired).
		s.pending = nil
		s.printf("(the turn moved on without you)\n")
	}
	if s.view.seat < 0 || s.pending != nil || s.view.last.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE ||
		s.view.last.TurnSeat == nil || s.view.last.GetTurnSeat() != s.view.seat || s.view.last.GetVersion() <= s.prompted {
		return nil
	}
	r, err := s.moves.ListLegalActions(s.ctx, &hangarv1.ListLegalActionsRequest{MatchId: s.matchID})
	if err != nil {
		return fmt.Errorf("list legal actions: %w", err)
	}
	if len(r.GetActions()) == 0 {
		return nil
	}
	if r.GetVersion() != s.view.match.GetVersion() {
		// The actions' words (the die, the tile in hand) come from the
		// state they were listed at.
		if _, err := s.get(r.GetVersion()); err != nil {
			return err
		}
	}
	s.offer(r)
	return nil
}

// offer puts the legal actions r lists to the player: a roll when the one
// action is Aeroplane Chess's Roll, else a numbered choice.
func (s *session) offer(r *hangarv1.ListLegalActionsResponse) {
	actions := r.GetActions()
	s.prompted = max(r.GetVersion(), s.view.last.GetVersion())
	if !s.view.generic && len(actions) == 1 && actions[0].MessageIs(&aeroplanev1.Roll{}) {
		s.pending = &prompt{version: r.GetVersion(), roll: true, actions: actions}
		s.printf("%s, your turn: [r]oll> ", s.view.seatName(s.view.seat))
		return
	}
	s.pending = &prompt{version: r.GetVersion(), actions: actions}
	known := !s.view.generic
	for _, a := range actions {
		known = known && (a.MessageIs(&aeroplanev1.Move{}) || a.MessageIs(&aeroplanev1.Roll{}) || a.MessageIs(&carcassonnev1.Move{}))
	}
	if !known {
		s.printf("%s, your turn:\n", s.view.seatName(s.view.seat))
		for i, a := range actions {
			s.printf("  %d) %s\n", i+1, s.view.actionText(a))
		}
		s.printf("choose an action 1-%d> ", len(actions))
		return
	}
	s.printf("%s, your move%s:\n", s.view.seatName(s.view.seat), dieText(s.view.die()))
	for i, a := range actions {
		s.printf("  %d) %s\n", i+1, s.view.actionText(a))
	}
	s.printf("choose a move 1-%d> ", len(actions))
}

// die is the roll awaiting a move in Aeroplane Chess (0 in other games).
func (v *view) die() int32 {
	if a, ok := v.decode(v.match.GetState()).(*aeroplanev1.State); ok && a.GetPhase() == aeroplanev1.Phase_PHASE_MOVE {
		return a.GetDie()
	}
	return 0
}

func dieText(die int32) string {
	if die == 0 {
		return ""
	}
	return fmt.Sprintf(" (die %d)", die)
}

// actionText is a legal action in words: the seed games' own, else the
// action's JSON.
func (v *view) actionText(a *anypb.Any) string {
	switch m := v.decode(a).(type) {
	case *aeroplanev1.Roll:
		return "roll the die"
	case *aeroplanev1.Move:
		return v.aeroplaneMove(m, v.die())
	case *carcassonnev1.Move:
		return v.carcassonneMove(m)
	}
	return v.types.anyText(a)
}

// answer acts on one line the player typed.
func (s *session) answer(line string) error {
	if line == "q" || line == "quit" {
		return errQuit
	}
	if s.offerCommand(line) || s.chatCommand(line) {
		return nil
	}
	p := s.pending
	if p == nil {
		if line != "" {
			s.printf("not your turn: wait for the prompt (q quits)\n")
		}
		return nil
	}
	var action *anypb.Any
	switch {
	case p.roll:
		if line != "" && line != "r" && line != "roll" {
			s.printf("type r and Enter to roll (q quits)> ")
			return nil
		}
		action = p.actions[0]
	default:
		n, perr := strconv.Atoi(line)
		if perr != nil || n < 1 || n > len(p.actions) {
			s.printf("type a number from 1 to %d (q quits)> ", len(p.actions))
			return nil
		}
		action = p.actions[n-1]
	}
	s.pending = nil
	// The action goes back as the server listed it: the client need not
	// know its type.
	r, err := s.moves.Act(s.ctx, &hangarv1.ActRequest{MatchId: s.matchID, ExpectedVersion: p.version, RequestId: s.req("act"), Action: action})
	switch status.Code(err) {
	case codes.OK:
		if p.roll {
			for _, ev := range r.GetEvents() {
				if e, ok := s.view.gameEvent(ev).(*aeroplanev1.Event); ok && e.GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED && e.GetSeat() == s.view.seat {
					s.printf("you rolled %d\n", e.GetDie())
					break
				}
			}
		}
		return nil
	case codes.Aborted, codes.FailedPrecondition:
		// The match moved on meanwhile (a turn clock, another client of
		// the same player): ask afresh.
		s.printf("the match moved on (%s); asking again\n", status.Code(err))
		s.prompted = 0
		return s.maybePrompt()
	}
	return fmt.Errorf("act: %w", err)
}

// final prints the ranking the match ended with.
func (s *session) final() {
	e := s.ended
	if e == nil {
		// Watched after its end: the seats hold the places.
		e = &hangarv1.MatchEnded{Status: s.view.match.GetStatus()}
		seats := slices.Clone(s.view.match.GetSeats())
		slices.SortStableFunc(seats, func(a, b *hangarv1.Seat) int { return cmp.Compare(a.GetPlace(), b.GetPlace()) })
		for _, st := range seats {
			if st.GetPlace() > 0 {
				e.Ranking = append(e.Ranking, st.GetSeat())
				e.Places = append(e.Places, st.GetPlace())
			}
		}
	}
	if e.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		s.printf("\nthe match ended: %s\n", statusName(e.GetStatus()))
		return
	}
	s.printf("\n%s\n", s.view.p.paint("Final ranking:", "1"))
	for i, seat := range e.GetRanking() {
		place := int32(i + 1)
		if i < len(e.GetPlaces()) {
			place = e.GetPlaces()[i]
		}
		line := fmt.Sprintf("  %d. %s (%s)", place, s.view.seatName(seat), s.view.player(seat))
		if i < len(e.GetScores()) {
			line += fmt.Sprintf("  %d points", e.GetScores()[i])
		}
		s.printf("%s\n", line)
	}
}
