package play_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/play"
	"github.com/hangarhq/hangar/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

func TestMain(m *testing.M) {
	code := m.Run()
	nodetest.Cleanup()
	os.Exit(code)
}

// screen collects what a client writes and waits for patterns in it, from
// where the last wait stopped.
type screen struct {
	t        *testing.T
	mu       sync.Mutex
	text     strings.Builder
	grew     chan struct{} // a value after each write
	closed   bool
	pos      int
	deadline time.Time
}

func newScreen(t *testing.T, r io.Reader, timeout time.Duration) *screen {
	sc := &screen{t: t, grew: make(chan struct{}, 1), deadline: time.Now().Add(timeout)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			sc.mu.Lock()
			sc.text.Write(buf[:n])
			sc.closed = err != nil
			sc.mu.Unlock()
			select {
			case sc.grew <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return sc
}

func (sc *screen) all() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.text.String()
}

// tail is the end of the output, for failure messages.
func (sc *screen) tail() string {
	s := sc.all()
	return s[max(0, len(s)-3000):]
}

// find is await without the wait: -1 when nothing matches yet.
func (sc *screen) find(res ...*regexp.Regexp) (int, []string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	text := sc.text.String()[sc.pos:]
	best, bestAt := -1, []int(nil)
	for i, re := range res {
		if loc := re.FindStringSubmatchIndex(text); loc != nil && (bestAt == nil || loc[0] < bestAt[0]) {
			best, bestAt = i, loc
		}
	}
	if best < 0 {
		return -1, nil
	}
	sc.pos += bestAt[1]
	var subs []string
	for j := 0; j < len(bestAt); j += 2 {
		if bestAt[j] >= 0 {
			subs = append(subs, text[bestAt[j]:bestAt[j+1]])
		} else {
			subs = append(subs, "")
		}
	}
	return best, subs
}

// await waits for the first of res to match the output after the last
// match, and returns which matched and its submatches.
func (sc *screen) await(res ...*regexp.Regexp) (int, []string) {
	sc.t.Helper()
	timer := time.NewTimer(time.Until(sc.deadline))
	defer timer.Stop()
	for {
		if which, subs := sc.find(res...); which >= 0 {
			return which, subs
		}
		sc.mu.Lock()
		closed := sc.closed
		sc.mu.Unlock()
		if closed {
			sc.t.Fatalf("the client's output ended before %v; it ended with:\n%s", res, sc.tail())
		}
		select {
		case <-sc.grew:
		case <-timer.C:
			sc.t.Fatalf("no %v before the deadline; the output ended with:\n%s", res, sc.tail())
		}
	}
}

var (
	createdRE = regexp.MustCompile(`created match (m_\w+)`)
	rollRE    = regexp.MustCompile(`\[r\]oll> `)
	chooseRE  = regexp.MustCompile(`choose (?:a move|an action) 1-(\d+)> `)
	rankingRE = regexp.MustCompile(`Final ranking:`)
	ansiRE    = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// terminal is one in-process `hangar play`: its stdin and its screen.
type terminal struct {
	in        *io.PipeWriter
	sc        *screen
	done      chan error
	tokenFile string
	over      bool
	rolls     int
	moves     int
}

// startPlay runs `hangar play args…` in process against the node at addr,
// as the player name.
func startPlay(t *testing.T, addr, name string, args ...string) *terminal {
	t.Helper()
	return startPlayKeeping(t, addr, name, filepath.Join(t.TempDir(), "token"), args...)
}

// startPlayKeeping is startPlay keeping the token in tokenFile.
func startPlayKeeping(t *testing.T, addr, name, tokenFile string, args ...string) *terminal {
	t.Helper()
	tm := &terminal{done: make(chan error, 1), tokenFile: tokenFile}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tm.in = inW
	go func() {
		err := play.Main(append([]string{"-addr", addr, "-name", name, "-token-file", tm.tokenFile, "-color=true"}, args...), inR, outW)
		outW.CloseWithError(fmt.Errorf("client returned %v", err))
		tm.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	tm.sc = newScreen(t, outR, 3*time.Minute)
	return tm
}

var promptREs = []*regexp.Regexp{rollRE, chooseRE, rankingRE}

// step answers the prompt the client shows next (a roll, or a legal move),
// or notes the final ranking; which is what find or await returned.
func (tm *terminal) step(t *testing.T, which int, m []string) {
	t.Helper()
	if which == 2 {
		tm.over = true
		return
	}
	answer := "r"
	if which == 1 {
		answer = "1"
		tm.moves++
		if tm.moves%2 == 0 && m[1] != "1" {
			answer = "2" // not always the first: other planes leave the hangar too
		}
	} else {
		tm.rolls++
	}
	if _, err := io.WriteString(tm.in, answer+"\n"); err != nil {
		t.Fatalf("answer %q: %v", answer, err)
	}
}

// wait waits for the client to return after the final ranking.
func (tm *terminal) wait(t *testing.T) string {
	t.Helper()
	select {
	case err := <-tm.done:
		if err != nil {
			t.Fatalf("hangar play: %v\n%s", err, tm.sc.tail())
		}
	case <-time.After(time.Until(tm.sc.deadline)):
		t.Fatalf("hangar play did not return after the final ranking:\n%s", tm.sc.tail())
	}
	return tm.sc.all()
}

// playToEnd runs `hangar play args…` in process, through pipes, against
// the node at addr, answering every prompt as a player would (a roll, or
// a legal move) until the final ranking. It returns the output, the match
// id and the player's token.
func playToEnd(t *testing.T, addr string, args ...string) (out, id, token string, rolls, moves int) {
	t.Helper()
	tm := startPlay(t, addr, "Ada", args...)
	_, m := tm.sc.await(createdRE)
	id = m[1]
	for !tm.over {
		which, m := tm.sc.await(promptREs...)
		tm.step(t, which, m)
	}
	out = tm.wait(t)
	return out, id, readFile(t, tm.tokenFile), tm.rolls, tm.moves
}

// checkOutput checks that the output is in colour and, without its
// colours, matches every pattern.
func checkOutput(t *testing.T, out string, want ...*regexp.Regexp) {
	t.Helper()
	if !ansiRE.MatchString(out) {
		t.Fatal("no ANSI colour in the output")
	}
	plain := ansiRE.ReplaceAllString(out, "")
	for _, re := range want {
		if !re.MatchString(plain) {
			t.Errorf("no %q in the output; it ended with:\n%s", re, plain[max(0, len(plain)-3000):])
		}
	}
}

func checkFinished(t *testing.T, addr, id, token string) {
	t.Helper()
	if st := nodetest.AsPlayer(nodetest.Dial(t, addr), token).Match(t, id).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("match %s is %v after the final ranking", id, st)
	}
}

// TestPlayAeroplaneAgainstABot plays `hangar play -create -bots 1` to the
// end: 2 seats, the other a bot.
func TestPlayAeroplaneAgainstABot(t *testing.T) {
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	out, id, token, rolls, moves := playToEnd(t, n.Addr(), "-create", "-seats", "2", "-bots", "1")
	checkFinished(t, n.Addr(), id, token)
	if rolls == 0 || moves == 0 {
		t.Fatalf("the client asked for %d rolls and %d moves", rolls, moves)
	}
	checkOutput(t, out,
		regexp.MustCompile(`#\d+ +Red rolls \d`),                      // event lines
		regexp.MustCompile(`#\d+ +Blue to play`),                      // the bot's turn
		regexp.MustCompile(`Red +\(Ada, you\) +0:`),                   // the planes of each seat
		regexp.MustCompile(`\d\) plane \d: take off`),                 // a previewed move
		regexp.MustCompile(`\^\^`),                                    // the board: launch areas …
		regexp.MustCompile(`\(\)`),                                    // … and the centre
		regexp.MustCompile(`Final ranking:\n +1\. (Red|Blue) \(.*\)`), // the end
	)
	t.Logf("%d rolls, %d moves, %d lines of output", rolls, moves, strings.Count(out, "\n"))

	// NO_COLOR: the same match watched without a colour.
	t.Setenv("NO_COLOR", "1")
	var plain strings.Builder
	if err := play.Main([]string{"-addr", n.Addr(), "-token", token, "-watch", id}, strings.NewReader(""), &plain); err != nil {
		t.Fatalf("hangar play -watch: %v", err)
	}
	if ansiRE.MatchString(plain.String()) || !strings.Contains(plain.String(), "Final ranking:") || !strings.Contains(plain.String(), "r.") {
		t.Errorf("with NO_COLOR, watching the finished match:\n%s", plain.String())
	}
}

// TestPlayAutoRollAgainstABot plays `hangar play -create -auto-roll` to
// the end: the client never prompts for a roll (the server rolls), only for
// moves, each offered with the die the server rolled.
func TestPlayAutoRollAgainstABot(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	out, id, token, rolls, moves := playToEnd(t, n.Addr(), "-create", "-seats", "2", "-bots", "1", "-auto-roll")
	checkFinished(t, n.Addr(), id, token)
	if rolls != 0 || moves == 0 {
		t.Fatalf("the client asked for %d rolls and %d moves, want moves alone", rolls, moves)
	}
	checkOutput(t, out,
		regexp.MustCompile(`#\d+ +Red rolls \d`),   // the server's rolls, as events
		regexp.MustCompile(`your move \(die \d\)`), // each move prompt names its die
		regexp.MustCompile(`Final ranking:\n +1\. (Red|Blue) \(.*\)`),
	)
}

// TestPlayCarcassonneAgainstABot plays a whole Carcassonne match in the
// terminal client, choosing among the numbered legal moves.
func TestPlayCarcassonneAgainstABot(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	out, id, token, rolls, moves := playToEnd(t, n.Addr(), "-create", "-game", "carcassonne", "-bots", "1")
	checkFinished(t, n.Addr(), id, token)
	if rolls != 0 || moves == 0 {
		t.Fatalf("the client asked for %d rolls and %d moves", rolls, moves)
	}
	checkOutput(t, out,
		regexp.MustCompile(`#\d+ +Red places [A-X]+ at -?\d+,-?\d+`),     // event lines
		regexp.MustCompile(`\d\) place [A-X]+ at -?\d+,-?\d+ turned \d`), // a legal move
		regexp.MustCompile(`\+ C \+`),                                    // the map
		regexp.MustCompile(`Red +\(Ada, you\) +\d+ points`),              // the scores
		regexp.MustCompile(`Final ranking:\n +1\. (Red|Blue) \(.*\) +\d+ points`),
	)
	t.Logf("%d moves, %d lines of output", moves, strings.Count(out, "\n"))
}

// TestPlayGeneric plays Aeroplane Chess to the end in the generic view
// (-generic), as a client that does not know the game would: the title from
// ListGames, the state and the events as protobuf JSON, the roll and the
// moves as numbered actions sent back as they came.
func TestPlayGeneric(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	out, id, token, rolls, moves := playToEnd(t, n.Addr(), "-create", "-bots", "1", "-generic")
	checkFinished(t, n.Addr(), id, token)
	if rolls != 0 || moves == 0 {
		t.Fatalf("the client asked for %d rolls and %d choices, want choices alone", rolls, moves)
	}
	checkOutput(t, out,
		regexp.MustCompile(`Aeroplane Chess +m_\w+ +v\d+`),                                      // the title, from ListGames
		regexp.MustCompile(`state \(hangar\.aeroplane\.v1\.State\):\n +\{\n +"phase": "PHASE_`), // the state
		regexp.MustCompile(`#\d+ +Event \{"kind":"EVENT_KIND_ROLLED","seat":0,"die":\d`),        // an event
		regexp.MustCompile(`1\) Roll \{\}\nchoose an action 1-1> `),                             // the roll, an action
		regexp.MustCompile(`\d\) Move \{"kind":"MOVE_KIND_TAKE_OFF",`),                          // a move
		regexp.MustCompile(`Final ranking:\n +1\. (Red|Yellow|Blue|Green) \(.*\)`),
	)
	if rollRE.MatchString(out) || strings.Contains(out, "your move") {
		t.Error("the generic view prompted as the Aeroplane Chess view does")
	}
}

// TestPlayUnknownGame: -create -game with a name the server does not host
// fails, naming the games it hosts.
func TestPlayUnknownGame(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	err := play.Main([]string{"-addr", n.Addr(), "-name", "Ada", "-token-file", filepath.Join(t.TempDir(), "token"), "-create", "-game", "chess"}, strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "aeroplane") || !strings.Contains(err.Error(), "carcassonne") {
		t.Fatalf("hangar play -create -game chess: %v, want an error naming the hosted games", err)
	}
}

// TestPlayTwoPeople: Ada creates a match for two, Bob joins it from
// another client, Eve watches it live from a third; Ada and Bob play it
// out, each answering their own prompts, and all three end with the
// ranking. Eve watches the finished match once more and gets it again.
func TestPlayTwoPeople(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	ada := startPlay(t, n.Addr(), "Ada", "-create", "-seats", "2")
	_, m := ada.sc.await(createdRE)
	id := m[1]
	ada.sc.await(regexp.MustCompile(`waiting for players: hangar play .*-join ` + id))
	eve := startPlay(t, n.Addr(), "Eve", "-watch", id)
	eve.sc.await(regexp.MustCompile(`v\d+ +open`)) // the lobby, drawn
	bob := startPlay(t, n.Addr(), "Bob", "-join", id)
	bob.sc.await(regexp.MustCompile(`joined match ` + id))

	timer := time.NewTimer(3 * time.Minute)
	defer timer.Stop()
	for !ada.over || !bob.over {
		acted := false
		for _, tm := range []*terminal{ada, bob} {
			if tm.over {
				continue
			}
			if which, m := tm.sc.find(promptREs...); which >= 0 {
				tm.step(t, which, m)
				acted = true
			}
		}
		if acted {
			continue
		}
		select {
		case <-ada.sc.grew:
		case <-bob.sc.grew:
		case <-timer.C:
			t.Fatalf("no prompt before the deadline; Ada's output ended with:\n%s\nBob's:\n%s", ada.sc.tail(), bob.sc.tail())
		}
	}
	ada.wait(t)
	bob.wait(t)
	eve.sc.await(rankingRE)
	watched := eve.wait(t)
	checkFinished(t, n.Addr(), id, readFile(t, ada.tokenFile))
	if ada.rolls == 0 || bob.rolls == 0 {
		t.Fatalf("rolls asked: Ada %d, Bob %d", ada.rolls, bob.rolls)
	}
	checkOutput(t, watched,
		regexp.MustCompile(`Bob takes seat 2 as Blue`),
		regexp.MustCompile(`#\d+ +match started: Red, Blue`),
		regexp.MustCompile(`Red +\(Ada\) +0:`),
		regexp.MustCompile(`Blue +\(Bob\) +0:`),
		regexp.MustCompile(`#\d+ +Blue rolls \d`),
		regexp.MustCompile(`Final ranking:\n +1\. (Red \(Ada\)|Blue \(Bob\))`),
	)
	if rollRE.MatchString(watched) || chooseRE.MatchString(watched) {
		t.Error("the spectator was prompted")
	}

	late := startPlay(t, n.Addr(), "Eve", "-watch", id)
	late.sc.await(rankingRE)
	checkOutput(t, late.wait(t), regexp.MustCompile(`Final ranking:\n +1\. (Red \(Ada\)|Blue \(Bob\))`))
}

// TestPlayKeepsItsPlayer: a second run with the kept token is the same
// player, and swaps the token for a fresh one (so that a player who comes
// back within each token's lifetime never expires).
func TestPlayKeepsItsPlayer(t *testing.T) {
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	ada := nodetest.NewPlayer(t, n.Addr(), "Ada")
	cr, err := ada.Matches.CreateMatch(ada.Ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, BotSeats: 2, ObserveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	ada.WatchToEnd(t, id)
	file := filepath.Join(t.TempDir(), "token")
	first := startPlayKeeping(t, n.Addr(), "Eve", file, "-watch", id)
	_, m := first.sc.await(regexp.MustCompile(`registered Eve \((p_\w+)\)`))
	first.sc.await(rankingRE)
	first.wait(t)
	tok1 := readFile(t, file)
	second := startPlayKeeping(t, n.Addr(), "Eve", file, "-watch", id)
	second.sc.await(regexp.MustCompile(`playing as Eve \(` + m[1] + `\)`))
	second.sc.await(rankingRE)
	second.wait(t)
	tok2 := readFile(t, file)
	if tok2 == tok1 || tok2 == "" {
		t.Fatal("the kept token was not refreshed")
	}
	me, err := hangarv1.NewPlayerServiceClient(nodetest.Dial(t, n.Addr())).GetPlayer(nodetest.WithToken(context.Background(), tok2), &hangarv1.GetPlayerRequest{})
	if err != nil || me.GetPlayer().GetPlayerId() != m[1] {
		t.Fatalf("the refreshed token: %v, %v", me, err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestLongPlayInTmux runs `hangar play` in a real terminal: a detached tmux
// session, keys sent to it, the pane captured with its colours.
func TestLongPlayInTmux(t *testing.T) {
	nodetest.Long(t)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (CI installs it in .ci/run)")
		}
		t.Skip("tmux is not installed: skipping the terminal test")
	}
	bin := nodetest.Binary(t)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	dir := t.TempDir()
	// A server of our own (-L), so the user's tmux sessions are untouched.
	sock := fmt.Sprintf("hangar-play-test-%d", os.Getpid())
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cmd := fmt.Sprintf("env -u NO_COLOR TERM=xterm-256color %s play -addr %s -name Ada -token-file %s -create -bots 1; echo CLIENT-EXITED; sleep 60",
		bin, n.Addr(), filepath.Join(dir, "token"))
	tm("new-session", "-d", "-s", "play", "-x", "160", "-y", "60", cmd)
	t.Cleanup(func() { exec.Command(tmux, "-L", sock, "kill-server").Run() })

	// capture polls the pane until want appears in it: the terminal has no
	// stream to wait on, only a screen to look at. It reads the scrollback
	// too (-S -): a bot's quick turns redraw the board and can push a line
	// off the visible screen before the test looks.
	capture := func(want *regexp.Regexp) string {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			pane := tm("capture-pane", "-p", "-e", "-S", "-", "-t", "play")
			if want.MatchString(ansiRE.ReplaceAllString(pane, "")) {
				return pane
			}
			if strings.Contains(pane, "CLIENT-EXITED") || time.Now().After(deadline) {
				t.Fatalf("no %q in the pane:\n%s", want, pane)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	pane := capture(regexp.MustCompile(`(?m)\[r\]oll> ?$`))
	if !ansiRE.MatchString(pane) {
		t.Errorf("no colour in the pane:\n%s", pane)
	}
	plain := ansiRE.ReplaceAllString(pane, "")
	for _, want := range []string{"Aeroplane Chess", "Red", "(Ada, you)", "Blue", "(bot)", "^^", "()", "4R", "4B"} {
		if !strings.Contains(plain, want) {
			t.Errorf("no %q in the pane:\n%s", want, plain)
		}
	}
	tm("send-keys", "-t", "play", "r", "Enter")
	capture(regexp.MustCompile(`you rolled \d`))
	tm("send-keys", "-t", "play", "q", "Enter")
	capture(regexp.MustCompile(`CLIENT-EXITED`))
}

// TestPlayOverTLS plays a match with the terminal client against a node
// serving TLS, trusting the test's CA.
func TestPlayOverTLS(t *testing.T) {
	t.Parallel()
	pki := nodetest.NewPKI(t)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir(), TLSCert: pki.CertFile, TLSKey: pki.KeyFile})
	_, id, token, _, _ := playToEnd(t, n.Addr(), "-tls-ca", pki.CAFile, "-create", "-bots", "1")
	conn, err := grpc.NewClient(n.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(pki.ClientTLS(false))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if st := nodetest.AsPlayer(conn, token).Match(t, id).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("match %s is %v after the final ranking", id, st)
	}
}
