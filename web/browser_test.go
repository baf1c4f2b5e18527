package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

// The web page's tests drive a real headless Chromium (Debian's package
// chromium) through the page served by a node, and check what the page
// shows against the API. They wait on DOM conditions the page sets
// (#match[data-ui], data-version), never on time.

// browser starts a headless Chromium for t and returns a context of its
// tab bounded by timeout; the browser ends with t. Without Chromium the
// test skips (under CI=true it fails).
func browser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium on PATH: install Debian's package chromium (apt-get install -y chromium)")
		}
		t.Skip("no Chromium on PATH: install Debian's package chromium (apt-get install -y chromium) to run the browser tests")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	var logging sync.WaitGroup
	t.Cleanup(func() {
		cancelTab()
		logging.Wait()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context of that call: tab, not the deadline below.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	// The page's console errors and uncaught exceptions go to the test log.
	console := chromedp.Console(tab)
	logging.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" {
				t.Logf("page %s", m)
			}
		}
	})
	ctx, cancel := context.WithTimeout(tab, timeout)
	t.Cleanup(cancel)
	return ctx
}

// artifacts is where screenshots go: $HANGAR_TEST_ARTIFACTS, else a
// temporary directory of the test.
func artifacts(t *testing.T) string {
	if d := os.Getenv("HANGAR_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// do runs browser actions, failing t with what the page shows.
func do(ctx context.Context, t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	get(ctx, t, what, chromedp.Steps(steps...))
}

// get runs one browser action and returns its value, failing t with what
// the page shows. One action may take a minute (a step of the page, not a
// whole game).
func get[T any](ctx context.Context, t *testing.T, what string, a chromedp.Action[T]) T {
	t.Helper()
	actx, cancelAction := context.WithTimeout(ctx, time.Minute)
	defer cancelAction()
	v, err := chromedp.Run(actx, a)
	if err != nil {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		page, _ := chromedp.Run(c, chromedp.Evaluate[string](`(document.getElementById('match')||document.getElementById('replay')||document.body).outerHTML.slice(0, 3000)`))
		errText, _ := chromedp.Run(c, chromedp.Evaluate[string](`(document.getElementById('error')||{}).textContent||''`))
		t.Fatalf("%s: %v\npage error: %q\npage: %s", what, err, errText, page)
	}
	return v
}

// pagePlanes are the planes the board shows, as "seat/index@position".
func pagePlanes(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return get(ctx, t, "read planes", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#board .plane')].map(p => p.dataset.seat + '/' + p.dataset.index + '@' + p.dataset.position).sort()`))
}

// unpack is the game message an Any of a match holds (its state, its
// options) in m, left empty when the Any is unset.
func unpack[M proto.Message](t *testing.T, a *anypb.Any, m M) M {
	t.Helper()
	if a.GetTypeUrl() == "" {
		return m
	}
	if err := a.UnmarshalTo(m); err != nil {
		t.Fatalf("unpack %s: %v", a.GetTypeUrl(), err)
	}
	return m
}

// apiPlanes are a match's planes in pagePlanes' form.
func apiPlanes(t *testing.T, m *hangarv1.Match) []string {
	t.Helper()
	out := []string{}
	for _, p := range unpack(t, m.GetState(), new(aeroplanev1.State)).GetPlanes() {
		out = append(out, fmt.Sprintf("%d/%d@%d", p.GetSeat(), p.GetIndex(), p.GetPosition()))
	}
	slices.Sort(out)
	return out
}

// TestLongWebPlayAeroplane signs up, creates a 2-seat match against a bot and
// plays it to the end through the page, clicking Roll or a legal move
// whenever the page offers one. With "server rolls" ticked (auto_roll) the
// page never offers Roll: each turn comes with its die.
func TestLongWebPlayAeroplane(t *testing.T) {
	nodetest.Long(t)
	for _, autoRoll := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto_roll=%v", autoRoll), func(t *testing.T) { webPlayAeroplane(t, autoRoll) })
	}
}

func webPlayAeroplane(t *testing.T, autoRoll bool) {
	ctx := browser(t, 5*time.Minute)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr() + "/"
	var tick []chromedp.Action[chromedp.Void]
	if autoRoll {
		tick = append(tick, chromedp.Click(chromedp.ID("auto-roll")))
	}
	token, id := signUpAndCreate(ctx, t, base, "aeroplane", tick...)
	if !strings.HasPrefix(token, "hgr_") || !strings.HasPrefix(id, "m_") {
		t.Fatalf("token %q, match %q", token, id)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	last, rolls, moves, previewShot := 0, 0, 0, false
	for {
		// The next state the page offers an action in (or the end): a
		// version after the one of the last click, nothing in flight.
		ui := get(ctx, t, fmt.Sprintf("wait for a turn after version %d", last), chromedp.Poll[string](fmt.Sprintf(`(() => {
			const m = document.getElementById('match');
			if (!m) return false;
			const u = m.dataset.ui;
			if (u === 'over') return u;
			if ((u === 'roll' || u === 'move') && Number(m.dataset.version) > %d) return u;
			return false;
		})()`, last), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
		if ui == "over" {
			break
		}
		last = get(ctx, t, "read the version", chromedp.Evaluate[int](`Number(document.getElementById('match').dataset.version)`))
		if rolls+moves > 2000 {
			t.Fatalf("no end after %d rolls and %d moves", rolls, moves)
		}
		if ui == "roll" {
			rolls++
			do(ctx, t, "roll", chromedp.Click(chromedp.ID("roll")))
			continue
		}
		count := get(ctx, t, "count moves", chromedp.Evaluate[int](`document.querySelectorAll('#moves button.move').length`))
		if count == 0 {
			t.Fatal("the page is in the move state with no move listed")
		}
		sel := chromedp.CSS(fmt.Sprintf(`#moves button.move[data-index="%d"]`, rng.IntN(count)))
		if !previewShot && !autoRoll && get(ctx, t, "look for an advance", chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector('%s').textContent.includes('→')`, sel))) {
			// Show one advance's preview on the board (its path and where it
			// ends) and screenshot it.
			previewShot = true
			do(ctx, t, "preview a move", chromedp.Focus(sel), chromedp.WaitVisible(chromedp.CSS("#board .highlight .hl-to")))
			screenshot(ctx, t, "web-aeroplane-preview.png")
		}
		moves++
		do(ctx, t, "move", chromedp.Click(sel))
	}
	do(ctx, t, "wait for the result", chromedp.WaitVisible(chromedp.ID("result")))
	result := get(ctx, t, "read the result", chromedp.Text(chromedp.ID("result")))
	version := get(ctx, t, "read the version", chromedp.AttributeValue(chromedp.ID("match"), "data-version")).Value
	if !autoRoll {
		screenshot(ctx, t, "web-aeroplane-finished.png")
	}
	t.Logf("%d rolls and %d moves through the page; %s", rolls, moves, result)

	// The API agrees: the match is finished at the version the page shows,
	// with its planes where the page draws them.
	c := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), token)
	m := c.Match(t, id)
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || fmt.Sprint(m.GetVersion()) != version {
		t.Fatalf("API: %v at version %d; page: version %s", m.GetStatus(), m.GetVersion(), version)
	}
	if !strings.HasPrefix(result, "Finished") {
		t.Fatalf("page result %q", result)
	}
	for _, s := range m.GetSeats() {
		if s.GetPlace() == 0 || !strings.Contains(result, fmt.Sprintf("%d. %s", s.GetPlace(), s.GetDisplayName())) {
			t.Errorf("seat %d (%s) place %d: page says %q", s.GetSeat(), s.GetDisplayName(), s.GetPlace(), result)
		}
	}
	if got, want := pagePlanes(ctx, t), apiPlanes(t, m); !slices.Equal(got, want) {
		t.Fatalf("page planes %v, API planes %v", got, want)
	}
	switch {
	case autoRoll && (rolls != 0 || moves == 0):
		t.Fatalf("%d rolls, %d moves in an auto_roll match: the page offered a roll, or no move", rolls, moves)
	case !autoRoll && (rolls == 0 || moves == 0):
		t.Fatalf("%d rolls, %d moves: the page never offered both", rolls, moves)
	}
	if got := unpack(t, m.GetOptions(), new(aeroplanev1.Options)).GetAutoRoll(); got != autoRoll {
		t.Fatalf("the match's auto_roll is %v, the page ticked %v", got, autoRoll)
	}
}

// TestLongWebReplay replays a finished all-bot match: at each version the
// slider is moved to, the board shows the planes GetMatch at_version
// returns, and the state's notation.
func TestLongWebReplay(t *testing.T) {
	nodetest.Long(t)
	ctx := browser(t, 3*time.Minute)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	c := nodetest.NewPlayer(t, n.Addr(), "Viewer")
	cr, err := c.Matches.CreateMatch(c.Ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, BotSeats: 2, ObserveOnly: true, RequestId: "replay-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	c.WatchToEnd(t, id) // ends with the match
	final := c.Match(t, id)
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("status %v", final.GetStatus())
	}
	last := final.GetVersion()

	do(ctx, t, "open the replay",
		chromedp.Navigate("http://"+n.Addr()+"/"),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('hangar.token', %q); location.hash = '#/replay/%s'`, c.Token, id)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"]`, last))),
	)
	if sliderMax := get(ctx, t, "read the slider", chromedp.AttributeValue(chromedp.ID("slider"), "max")).Value; sliderMax != fmt.Sprint(last) {
		t.Fatalf("slider max %s, match version %d", sliderMax, last)
	}
	check := func(v int64, how string) {
		t.Helper()
		do(ctx, t, fmt.Sprintf("show version %d", v),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"] #board[data-version="%d"]`, v, v))))
		r, err := c.Matches.GetMatch(c.Ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		at := r.GetMatch()
		if got, want := pagePlanes(ctx, t), apiPlanes(t, at); !slices.Equal(got, want) {
			t.Fatalf("version %d (%s): page planes %v, API planes %v", v, how, got, want)
		}
		if at.GetState() != nil {
			st := unpack(t, at.GetState(), new(aeroplanev1.State))
			if got := get(ctx, t, "read the notation", chromedp.Text(chromedp.ID("notation"))); got != st.GetNotation() {
				t.Fatalf("version %d (%s): page notation %q, API %q", v, how, got, st.GetNotation())
			}
		}
	}
	check(last, "at the end")
	versions := []int64{1, 4, 5, last / 3, last / 2, last - 1, last}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		versions = append(versions, 1+rng.Int64N(last))
	}
	for _, v := range versions {
		do(ctx, t, fmt.Sprintf("move the slider to %d", v), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.getElementById('slider'); s.value = %d; s.dispatchEvent(new Event('input')); })()`, v)))
		check(v, "slider")
		if v == last/2 {
			screenshot(ctx, t, "web-aeroplane-replay.png")
		}
	}
	// Watching the finished match live: every event in the log, nothing
	// to play.
	do(ctx, t, "watch it", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = '#/match/%s'`, id)),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-ui="over"] #result`)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('#log li').length === %d`, last)))
	if got, want := pagePlanes(ctx, t), apiPlanes(t, final); !slices.Equal(got, want) {
		t.Fatalf("watching: page planes %v, API planes %v", got, want)
	}
	do(ctx, t, "back to the replay", chromedp.Click(chromedp.ID("to-replay")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"]`, last))))

	// The step buttons move one event at a time.
	v := last
	do(ctx, t, "step back", chromedp.Click(chromedp.ID("prev")))
	check(max(1, v-1), "prev")
	do(ctx, t, "step forward", chromedp.Click(chromedp.ID("next")))
	check(max(1, v-1)+1, "next")
}

// pageTiles are the Carcassonne tiles the board shows, as "x,y tile rR".
func pageTiles(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return get(ctx, t, "read tiles", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#board .tile[data-tile]')].map(g => g.dataset.x + ',' + g.dataset.y + ' ' + g.dataset.tile + ' r' + g.dataset.rotation).sort()`))
}

// carcassonneState is a Carcassonne match's state.
func carcassonneState(t *testing.T, m *hangarv1.Match) *carcassonnev1.State {
	t.Helper()
	return unpack(t, m.GetState(), new(carcassonnev1.State))
}

// apiTiles are a Carcassonne match's tiles in pageTiles' form.
func apiTiles(t *testing.T, m *hangarv1.Match) []string {
	t.Helper()
	out := []string{}
	for _, p := range carcassonneState(t, m).GetBoard() {
		out = append(out, fmt.Sprintf("%d,%d %s r%d", p.GetX(), p.GetY(), p.GetTile(), p.GetRotation()))
	}
	slices.Sort(out)
	return out
}

// TestLongWebCarcassonne plays a 2-seat Carcassonne match against a bot to the
// end through the page, clicking a legal move whenever the page lists
// some, then replays it: the tiles and followers drawn at several versions
// are those of GetMatch at_version.
func TestLongWebCarcassonne(t *testing.T) {
	nodetest.Long(t)
	ctx := browser(t, 5*time.Minute)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	token, id := signUpAndCreate(ctx, t, "http://"+n.Addr()+"/", "carcassonne")
	c := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), token)
	rng := rand.New(rand.NewPCG(5, 6))
	last, moves, shot := 0, 0, false
	for {
		ui := get(ctx, t, fmt.Sprintf("wait for a turn after version %d", last), chromedp.Poll[string](fmt.Sprintf(`(() => {
			const m = document.getElementById('match');
			if (!m) return false;
			const u = m.dataset.ui;
			if (u === 'over') return u;
			if (u === 'move' && Number(m.dataset.version) > %d) return u;
			return false;
		})()`, last), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
		if ui == "over" {
			break
		}
		last = get(ctx, t, "read the version", chromedp.Evaluate[int](`Number(document.getElementById('match').dataset.version)`))
		if moves > 500 {
			t.Fatalf("no end after %d moves", moves)
		}
		if moves == 30 {
			// Mid-game: the board drawn is the API's.
			if got, want := pageTiles(ctx, t), apiTiles(t, c.Match(t, id)); !slices.Equal(got, want) {
				t.Fatalf("version %d: page tiles %v, API tiles %v", last, got, want)
			}
		}
		count := get(ctx, t, "count moves", chromedp.Evaluate[int](`document.querySelectorAll('#moves button.move').length`))
		sel := chromedp.CSS(fmt.Sprintf(`#moves button.move[data-index="%d"]`, rng.IntN(count)))
		if !shot && moves > 20 && get(ctx, t, "look for a placement", chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector('%s').dataset.notation.startsWith('place')`, sel))) {
			shot = true
			do(ctx, t, "preview a placement", chromedp.Focus(sel), chromedp.WaitVisible(chromedp.CSS("#board .hl-cell")))
			screenshot(ctx, t, "web-carcassonne-preview.png")
		}
		moves++
		do(ctx, t, "move", chromedp.Click(sel))
	}
	do(ctx, t, "wait for the result", chromedp.WaitVisible(chromedp.ID("result")))
	screenshot(ctx, t, "web-carcassonne-finished.png")
	final := c.Match(t, id)
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("API status %v", final.GetStatus())
	}
	if got, want := pageTiles(ctx, t), apiTiles(t, final); !slices.Equal(got, want) {
		t.Fatalf("final: page tiles %v, API tiles %v", got, want)
	}
	t.Logf("%d moves through the page, %d tiles placed", moves, len(carcassonneState(t, final).GetBoard()))

	// The replay of the same match.
	do(ctx, t, "open the replay", chromedp.Click(chromedp.ID("to-replay")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"]`, final.GetVersion()))))
	for _, v := range []int64{5, final.GetVersion() / 2, final.GetVersion() - 1} {
		do(ctx, t, fmt.Sprintf("move the slider to %d", v), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.getElementById('slider'); s.value = %d; s.dispatchEvent(new Event('input')); })()`, v)),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"] #board[data-version="%d"]`, v, v))))
		r, err := c.Matches.GetMatch(c.Ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := pageTiles(ctx, t), apiTiles(t, r.GetMatch()); !slices.Equal(got, want) {
			t.Fatalf("replay at %d: page tiles %v, API tiles %v", v, got, want)
		}
		followers := get(ctx, t, "count followers", chromedp.Evaluate[int](`document.querySelectorAll('#board .follower').length`))
		if want := len(carcassonneState(t, r.GetMatch()).GetFollowers()); followers != want {
			t.Fatalf("replay at %d: %d followers drawn, %d in the state", v, followers, want)
		}
		if v == final.GetVersion()/2 {
			screenshot(ctx, t, "web-carcassonne-replay.png")
		}
	}
}

// TestLongWebLobby joins another player's open match from the lobby, then
// creates a 3-seat match, lets another player join it over the API and
// starts it from the page with a seat still empty.
func TestLongWebLobby(t *testing.T) {
	nodetest.Long(t)
	ctx := browser(t, 2*time.Minute)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	bob := nodetest.NewPlayer(t, n.Addr(), "Bob")
	cr, err := bob.Matches.CreateMatch(bob.Ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: "lobby-1"})
	if err != nil {
		t.Fatal(err)
	}
	open := cr.GetMatch().GetMatchId()
	do(ctx, t, "sign up and join Bob's match",
		chromedp.Navigate("http://"+n.Addr()+"/"),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "Ada"),
		chromedp.Click(chromedp.ID("create-player")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#open-matches tr[data-match=%q] button.join`, open))),
	)
	screenshot(ctx, t, "web-lobby.png")
	do(ctx, t, "join", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#open-matches tr[data-match=%q] button.join`, open))),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-status="active"] #board .plane`)))
	me := get(ctx, t, "read the player", chromedp.Evaluate[string](`JSON.parse(localStorage.getItem('hangar.player')).playerId`))
	m := bob.Match(t, open)
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetSeats()[1].GetPlayerId() != me {
		t.Fatalf("after the page joined: %v, seats %v", m.GetStatus(), m.GetSeats())
	}

	do(ctx, t, "create a 3-seat match",
		chromedp.Click(chromedp.CSS("header a.brand")),
		chromedp.WaitVisible(chromedp.ID("create-match")),
		chromedp.SetValue(chromedp.ID("seats"), "3"),
		chromedp.SetValue(chromedp.ID("bots"), "0"),
		chromedp.Click(chromedp.ID("create-match")),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-status="open"] #start`)),
	)
	id := get(ctx, t, "read the match", chromedp.Evaluate[string](`location.hash.split('/')[2]`))
	if _, err := bob.Matches.JoinMatch(bob.Ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "lobby-2"}); err != nil {
		t.Fatal(err)
	}
	// The page learns of the join from its watch stream.
	do(ctx, t, "see Bob join", chromedp.Poll[chromedp.Void](`document.querySelector('#seats').textContent.includes('Bob')`))
	do(ctx, t, "start", chromedp.Click(chromedp.ID("start")),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-status="active"] #board .plane`)))
	if m := bob.Match(t, id); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("after the page started it: %v", m.GetStatus())
	}
	// Resigning (the page asks first: the test says yes) forfeits the seat.
	do(ctx, t, "resign", chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(chromedp.ID("resign")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#seats').textContent.includes('(forfeited)')`))
	for _, s := range bob.Match(t, id).GetSeats() {
		if s.GetPlayerId() == me && s.GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_FORFEITED {
			t.Fatalf("after resigning, Ada's seat is %v", s.GetStatus())
		}
	}
}

// signUpAndCreate signs Ada up on the page at base and creates a 2-seat
// match of game with a bot through it (after the extra actions on the
// form); it returns her token and the match.
func signUpAndCreate(ctx context.Context, t *testing.T, base, game string, extra ...chromedp.Action[chromedp.Void]) (token, id string) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "Ada"),
		chromedp.Click(chromedp.ID("create-player")),
		chromedp.WaitVisible(chromedp.ID("create-match")),
		chromedp.SetValue(chromedp.ID("game"), game),
		chromedp.SetValue(chromedp.ID("seats"), "2"),
		chromedp.SetValue(chromedp.ID("bots"), "1"),
	}
	actions = append(append(actions, extra...), chromedp.Click(chromedp.ID("create-match")), chromedp.WaitVisible(chromedp.CSS("#match[data-version]")))
	do(ctx, t, "sign up and create a match", actions...)
	token = get(ctx, t, "read the token", chromedp.Evaluate[string](`localStorage.getItem('hangar.token')`))
	id = get(ctx, t, "read the match", chromedp.Evaluate[string](`location.hash.split('/')[2]`))
	return token, id
}

// restJSON is the REST/JSON answer of GET path on the node at addr, as
// the page reads it.
func restJSON(t *testing.T, addr, token, path string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
	}
	return out
}

// pageJSON is JSON the page shows, decoded.
func pageJSON(ctx context.Context, t *testing.T, what, js string) any {
	t.Helper()
	text := get(ctx, t, what, chromedp.Evaluate[string](js))
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v in %q", what, err, text)
	}
	return v
}

// TestLongWebGeneric plays Aeroplane Chess in the generic view, the view of a
// game the page does not draw (?generic=1 hides its drawings): the title
// is ListGames', the options are typed as JSON, the state shown is the
// API's state as JSON, the buttons are the API's legal actions and each
// sends its action back through Act (Roll and Move alike), the log shows
// the game's events as JSON, and the replay shows the state at a version.
func TestLongWebGeneric(t *testing.T) {
	nodetest.Long(t)
	ctx := browser(t, 5*time.Minute)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	gr, err := hangarv1.NewGameServiceClient(nodetest.Dial(t, n.Addr())).ListGames(context.Background(), &hangarv1.ListGamesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var info *hangarv1.GameInfo
	for _, g := range gr.GetGames() {
		if g.GetName() == "aeroplane" {
			info = g
		}
	}
	if info == nil {
		t.Fatalf("ListGames has no aeroplane: %v", gr.GetGames())
	}
	token, id := signUpAndCreate(ctx, t, "http://"+n.Addr()+"/?generic=1", "aeroplane",
		chromedp.SetValue(chromedp.ID("options"), `{"firstPlayer": "FIRST_PLAYER_SEAT0"}`))
	do(ctx, t, "open the generic view", chromedp.WaitVisible(chromedp.CSS(`#match[data-view="generic"] #state-json`)))
	if title := get(ctx, t, "read the title", chromedp.Text(chromedp.ID("title"))); !strings.HasPrefix(title, info.GetTitle()+" ") {
		t.Fatalf("title %q, ListGames says %q", title, info.GetTitle())
	}
	if boards := get(ctx, t, "look for a board", chromedp.Evaluate[int](`document.querySelectorAll('#board, #roll, #moves').length`)); boards != 0 {
		t.Fatalf("the generic view draws %d board elements", boards)
	}
	c := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), token)
	if fp := unpack(t, c.Match(t, id).GetOptions(), new(aeroplanev1.Options)).GetFirstPlayer(); fp != aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0 {
		t.Fatalf("the match's first_player is %v, the page's options said FIRST_PLAYER_SEAT0", fp)
	}

	rng := rand.New(rand.NewPCG(7, 8))
	last, turns := 0, 0
	played := map[string]int{} // by action type
	for {
		ui := get(ctx, t, fmt.Sprintf("wait for a turn after version %d", last), chromedp.Poll[string](fmt.Sprintf(`(() => {
			const m = document.getElementById('match');
			if (!m) return false;
			const u = m.dataset.ui;
			if (u === 'over') return u;
			if (u === 'act' && Number(m.dataset.version) > %d) return u;
			return false;
		})()`, last), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
		if ui == "over" {
			break
		}
		last = get(ctx, t, "read the version", chromedp.Evaluate[int](`Number(document.getElementById('match').dataset.version)`))
		if turns > 2000 {
			t.Fatalf("no end after %d actions", turns)
		}
		if turns < 3 || turns%25 == 0 {
			// The page shows the API's state and legal actions (the seat is
			// to act: nothing changes until it does).
			want := restJSON(t, n.Addr(), token, "/v1/matches/"+id)["match"].(map[string]any)["state"]
			if got := pageJSON(ctx, t, "read the state", `document.getElementById('state-json').textContent`); !reflect.DeepEqual(got, want) {
				t.Fatalf("version %d: the page's state %v, the API's %v", last, got, want)
			}
			want = restJSON(t, n.Addr(), token, "/v1/matches/"+id+"/legalActions")["actions"]
			if got := pageJSON(ctx, t, "read the actions", `'[' + [...document.querySelectorAll('#actions button.action')].map(b => b.title).join(',') + ']'`); !reflect.DeepEqual(got, want) {
				t.Fatalf("version %d: the page's actions %v, the API's %v", last, got, want)
			}
		}
		count := get(ctx, t, "count actions", chromedp.Evaluate[int](`document.querySelectorAll('#actions button.action').length`))
		if count == 0 {
			t.Fatal("the page is in the act state with no action listed")
		}
		sel := fmt.Sprintf(`#actions button.action[data-index="%d"]`, rng.IntN(count))
		typ := get(ctx, t, "read the action's type", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('%s').dataset.type`, sel)))
		if !slices.Contains(info.GetActionTypes(), typ) {
			t.Fatalf("a button of type %q; the game's action types are %v", typ, info.GetActionTypes())
		}
		if turns == 40 {
			screenshot(ctx, t, "web-generic.png")
		}
		played[typ]++
		turns++
		do(ctx, t, "act", chromedp.Click(chromedp.CSS(sel)))
	}
	do(ctx, t, "wait for the result", chromedp.WaitVisible(chromedp.ID("result")))
	t.Logf("%d actions through the generic view: %v", turns, played)
	if played["hangar.aeroplane.v1.Roll"] == 0 || played["hangar.aeroplane.v1.Move"] == 0 {
		t.Fatalf("actions played %v: want Rolls and Moves", played)
	}
	final := c.Match(t, id)
	version := get(ctx, t, "read the version", chromedp.AttributeValue(chromedp.ID("match"), "data-version")).Value
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || fmt.Sprint(final.GetVersion()) != version {
		t.Fatalf("API: %v at version %d; page: version %s", final.GetStatus(), final.GetVersion(), version)
	}

	// The log holds every event; the game's as JSON of its event type.
	do(ctx, t, "wait for the whole log", chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('#log li').length === %d`, final.GetVersion())))
	var gameEvents []*hangarv1.Event
	for page := ""; ; {
		er, err := c.Matches.ListMatchEvents(c.Ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id, PageSize: 1000, PageToken: page})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range er.GetEvents() {
			if ev.GetGame() != nil {
				gameEvents = append(gameEvents, ev)
			}
		}
		if page = er.GetNextPageToken(); page == "" {
			break
		}
	}
	if got := get(ctx, t, "count the game's events", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll('#log li[data-type=%q] details pre').length`, info.GetEventType()))); got != len(gameEvents) || got == 0 {
		t.Fatalf("the log shows %d events of type %s, the match has %d game events", got, info.GetEventType(), len(gameEvents))
	}
	lastGame := gameEvents[len(gameEvents)-1]
	got := pageJSON(ctx, t, "read an event", fmt.Sprintf(`document.querySelector('#log li[data-seq="%d"] details pre').textContent`, lastGame.GetSeq()))
	want := unpack(t, lastGame.GetGame(), new(aeroplanev1.Event)).GetNotation()
	if got.(map[string]any)["notation"] != want || got.(map[string]any)["@type"] != "type.googleapis.com/"+info.GetEventType() {
		t.Fatalf("event %d on the page: %v; the API's notation %q", lastGame.GetSeq(), got, want)
	}

	// The replay shows the state at each version as JSON.
	do(ctx, t, "open the replay", chromedp.Click(chromedp.ID("to-replay")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"] #state-json[data-version="%d"]`, final.GetVersion(), final.GetVersion()))))
	for _, v := range []int64{final.GetVersion() / 2, final.GetVersion() - 1} {
		do(ctx, t, fmt.Sprintf("move the slider to %d", v), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.getElementById('slider'); s.value = %d; s.dispatchEvent(new Event('input')); })()`, v)),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"] #state-json[data-version="%d"]`, v, v))))
		want := restJSON(t, n.Addr(), token, fmt.Sprintf("/v1/matches/%s?at_version=%d", id, v))["match"].(map[string]any)["state"]
		if got := pageJSON(ctx, t, "read the state", `document.getElementById('state-json').textContent`); !reflect.DeepEqual(got, want) {
			t.Fatalf("replay at %d: the page's state %v, the API's %v", v, got, want)
		}
	}
}
