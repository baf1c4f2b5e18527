package web_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// size is a screen the tests play on: a laptop's, and a phone's (with
// touch, as Chromium emulates it).
type size struct {
	name   string
	w, h   int64
	mobile bool
}

var sizes = []size{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}}

// browser starts a headless Chromium for t with a screen of size sz and
// returns a context of its tab bounded by timeout; the browser ends with
// t. Without Chromium the test skips (under CI=true it fails).
func browser(t *testing.T, timeout time.Duration, sz size) context.Context {
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
		chromedp.WindowSize(int(sz.w), int(sz.h)),
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
	opts2 := []chromedp.EmulateViewportOption{}
	if sz.mobile {
		opts2 = append(opts2, chromedp.EmulateMobile)
	}
	if _, err := chromedp.Run(tab, chromedp.EmulateViewport(sz.w, sz.h, opts2...)); err != nil {
		t.Fatalf("emulate %s: %v", sz.name, err)
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
// actionTimeout bounds one action of the page.
var actionTimeout = 15 * time.Second

func get[T any](ctx context.Context, t *testing.T, what string, a chromedp.Action[T]) T {
	t.Helper()
	actx, cancelAction := context.WithTimeout(ctx, actionTimeout)
	defer cancelAction()
	v, err := chromedp.Run(actx, a)
	if err != nil {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		page, _ := chromedp.Run(c, chromedp.Evaluate[string](`(document.getElementById('match')||document.getElementById('replay')||document.body).outerHTML.slice(0, 3000)`))
		errText, _ := chromedp.Run(c, chromedp.Evaluate[string](`(document.getElementById('error')||{}).textContent||''`))
		if png, err := chromedp.Run(c, chromedp.CaptureScreenshot()); err == nil {
			p := filepath.Join(artifacts(t), "failed-"+strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())+".png")
			if os.WriteFile(p, png, 0o644) == nil {
				t.Logf("screenshot: %s", p)
			}
		}
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

// The page at both sizes plays full matches of both games against a bot,
// through clicks on the board (a plane or where it goes; a cell, the
// rotation, a follower), and checks what a player relies on: no sideways
// scroll, controls a finger can hit (44 px), and no serious or critical
// axe-core violation. Screenshots go to $HANGAR_TEST_ARTIFACTS.

// signIn opens the page, signs up as name and waits for the lobby.
func signIn(ctx context.Context, t *testing.T, base, name string) {
	t.Helper()
	do(ctx, t, "sign up",
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.Click(chromedp.ID("create-player")),
		chromedp.WaitVisible(chromedp.ID("quick-aeroplane")),
	)
}

// token is the page's bearer token, from localStorage.
func token(ctx context.Context, t *testing.T) string {
	t.Helper()
	return get(ctx, t, "read the token", chromedp.Evaluate[string](`JSON.parse(localStorage.getItem('hangar.session')).token`))
}

// matchID is the match the page shows, from its address.
func matchID(ctx context.Context, t *testing.T) string {
	t.Helper()
	return get(ctx, t, "read the match id", chromedp.Evaluate[string](`decodeURIComponent(location.hash.split('/')[2] || '')`))
}

// fits checks that the page does not scroll sideways and that every
// visible thing that takes a click or a tap is at least 44 px each way:
// buttons, links, form fields (a checkbox by its label), everything with
// a button's role or in the tab order (the board's movable planes, cells
// and follower spots), and the targets on the board.
func fits(ctx context.Context, t *testing.T, where string) {
	t.Helper()
	bad := get(ctx, t, "measure "+where, chromedp.Evaluate[[]string](`(() => {
		const out = [];
		const w = document.documentElement.scrollWidth, vw = window.innerWidth;
		if (w > vw) out.push('the page is ' + w + ' px wide in a ' + vw + ' px window');
		for (const c of document.querySelectorAll('button, a[href], select, input, [role=button], [tabindex]:not([tabindex="-1"]), #board .target')) {
			const e = c.matches('input[type=checkbox]') ? c.closest('label') || c : c;
			const r = e.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) continue; // hidden
			if (r.width < 43.5 || r.height < 43.5) out.push((e.id || e.className.baseVal || e.className || e.tagName) + ' "' + (e.textContent || e.getAttribute('aria-label') || '').trim().slice(0, 30) + '" is ' + Math.round(r.width) + 'x' + Math.round(r.height));
		}
		return out;
	})()`))
	for _, b := range bad {
		t.Errorf("%s: %s", where, b)
	}
}

// axeSource is axe-core's script, from web/app's node_modules (npm ci
// there, as scripts/gen does), or "" without it.
var axeSource = sync.OnceValue(func() string {
	b, err := os.ReadFile(filepath.Join("app", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		return ""
	}
	return string(b)
})

// axe runs axe-core on the page and fails t on each serious or critical
// violation. Without axe-core installed it says so and skips the check
// (under CI=true it fails).
func axe(ctx context.Context, t *testing.T, where string) {
	t.Helper()
	src := axeSource()
	if src == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no web/app/node_modules/axe-core: run npm ci in web/app (scripts/gen does)")
		}
		t.Logf("%s: no axe-core (npm ci in web/app): accessibility not checked", where)
		return
	}
	do(ctx, t, "load axe-core", chromedp.Evaluate[chromedp.Void](`window.axe ? undefined : (0, eval)(`+strconv.Quote(src)+`)`))
	found := get(ctx, t, "run axe-core on "+where, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ['violations']}).then(r =>
		r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')))`,
		chromedp.EvalAwaitPromise))
	for _, f := range found {
		t.Errorf("axe-core on %s: %s", where, f)
	}
}

// waitUI waits until the match page is in one of the states of want at a
// version after last, or in the state over, and returns the state.
func waitUI(ctx context.Context, t *testing.T, last int, extra string, want ...string) string {
	t.Helper()
	js := fmt.Sprintf(`(() => {
		const m = document.getElementById('match');
		if (!m) return false;
		const u = m.dataset.ui;
		if (u === 'over') return u;
		%s
		if (%q.split(' ').includes(u) && Number(m.dataset.version) > %d) return u;
		return false;
	})()`, extra, strings.Join(want, " "), last)
	return get(ctx, t, fmt.Sprintf("wait for %v after version %d", want, last), chromedp.Poll[string](js,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
}

func version(ctx context.Context, t *testing.T) int {
	t.Helper()
	return get(ctx, t, "read the version", chromedp.Evaluate[int](`Number(document.getElementById('match').dataset.version)`))
}

// finished checks the page's result against the API: the match is over at
// the version the page shows, each seat at its place.
func finished(ctx context.Context, t *testing.T, n *server.Server, tok, id string) *hangarv1.Match {
	t.Helper()
	do(ctx, t, "wait for the result", chromedp.WaitVisible(chromedp.ID("result")))
	result := get(ctx, t, "read the result", chromedp.Text(chromedp.ID("result")))
	ver := version(ctx, t)
	c := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), tok)
	m := c.Match(t, id)
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || m.GetVersion() != int64(ver) {
		t.Fatalf("API: %v at version %d; page: version %d", m.GetStatus(), m.GetVersion(), ver)
	}
	for _, s := range m.GetSeats() {
		if s.GetPlace() == 0 || !strings.Contains(result, fmt.Sprintf("%d. %s", s.GetPlace(), s.GetDisplayName())) {
			t.Errorf("seat %d (%s) place %d: page says %q", s.GetSeat(), s.GetDisplayName(), s.GetPlace(), result)
		}
	}
	t.Logf("result: %s", result)
	return m
}

// TestLongWebAeroplane plays Aeroplane Chess against a bot at both sizes,
// with the server rolling (auto_roll, the lobby's quick start), by clicking
// a glowing plane or, when a plane has a choice, where it goes (and once
// by the keyboard). Then it
// opens the replay one step back, the lobby's finished list, and the
// player's page.
func TestLongWebAeroplane(t *testing.T) {
	nodetest.Long(t)
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			t.Parallel() // two browsers at once: the tests mostly wait on the page and the bot
			webAeroplane(t, sz)
		})
	}
}

func webAeroplane(t *testing.T, sz size) {
	ctx := browser(t, 3*time.Minute, sz)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr() + "/"
	do(ctx, t, "open the page", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("name")))
	fits(ctx, t, "the sign-in")
	axe(ctx, t, "the sign-in")
	screenshot(ctx, t, "web-"+sz.name+"-sign-in.png")
	signIn(ctx, t, base, "Ada")
	fits(ctx, t, "the lobby")
	axe(ctx, t, "the lobby")
	screenshot(ctx, t, "web-"+sz.name+"-lobby.png")
	do(ctx, t, "start a match", chromedp.Click(chromedp.ID("quick-aeroplane")), chromedp.WaitVisible(chromedp.CSS(`#match[data-view="aeroplane"]`)))
	tok, id := token(ctx, t), matchID(ctx, t)
	api := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), tok)
	rng := rand.New(rand.NewPCG(1, uint64(len(sz.name))))
	last, clicks, targets, lobbyChecked := 0, 0, 0, false
	paths, rolled, longest := 0, 0, 0
	for {
		ui := waitUI(ctx, t, last, `if (u === 'move' && document.querySelector('#board .plane.chosen')) return 'chosen';`, "roll", "move")
		if ui == "over" {
			break
		}
		if clicks > 1000 {
			t.Fatalf("no end after %d clicks", clicks)
		}
		clicks++
		switch ui {
		case "roll": // not with auto_roll, but the page may offer it
			last = version(ctx, t)
			do(ctx, t, "roll", chromedp.Click(chromedp.ID("roll")))
		case "chosen":
			targets++
			do(ctx, t, "click where the plane goes", chromedp.Click(chromedp.CSS(`#board .target`)))
		case "move":
			last = version(ctx, t)
			// The die ends on the face the server rolled, after a roll
			// of several faces.
			if faces := dieShows(ctx, t, apiDie(t, api, id, last)); len(faces) > 1 {
				rolled++
			}
			count := get(ctx, t, "count movable planes", chromedp.Evaluate[int](`document.querySelectorAll('#board .plane.movable').length`))
			if count == 0 {
				// Only a pass: the move list has it.
				do(ctx, t, "pass", chromedp.Click(chromedp.CSS(`#moves button.move`)))
				continue
			}
			if clicks == 6 {
				fits(ctx, t, "a turn")
				axe(ctx, t, "a turn")
				screenshot(ctx, t, "web-"+sz.name+"-aeroplane-turn.png")
			}
			if clicks >= 10 && !lobbyChecked {
				lobbyChecked = true
				// The lobby marks the match: it is the player's turn.
				do(ctx, t, "the lobby mid-match", chromedp.Navigate(base+"#/"),
					chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#live .your-turn[data-match=%q] .badge.turn`, id))))
				screenshot(ctx, t, "web-"+sz.name+"-lobby-your-turn.png")
				do(ctx, t, "back to the match", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#live [data-match=%q] a.button`, id))),
					chromedp.WaitVisible(chromedp.CSS(`#match[data-view="aeroplane"]`)))
				last = 0
				continue
			}
			if clicks == 3 {
				// Keyboard play: 1 plays the first move the list shows.
				do(ctx, t, "press 1", chromedp.KeyEvent("1"))
				continue
			}
			k := rng.IntN(count)
			settle(ctx, t)
			sel := fmt.Sprintf(`#board .plane.movable:nth-child(%d of .movable)`, k+1)
			sp := get(ctx, t, "read the plane", chromedp.Evaluate[[]int](fmt.Sprintf(`[Number(document.querySelector(%q).dataset.seat), Number(document.querySelector(%q).dataset.index)]`, sel, sel)))
			path, at := onlyPath(t, api, id, sp[1])
			// A finger taps the plane's body: the box of its hit circle
			// reaches past the board at a corner. The plane is scrolled to
			// the middle first, as a player scrolls to see it: one in sight
			// but under the phone's sticky turn bar would take no scroll
			// from Click, and the bar would take the tap.
			get(ctx, t, "scroll to the plane", chromedp.Evaluate[bool](fmt.Sprintf(`(document.querySelector(%q).scrollIntoView({block: 'center'}), true)`, sel+" .body")))
			do(ctx, t, "click a plane", chromedp.Click(chromedp.CSS(sel+" .body")))
			if path != nil {
				// The plane flies square by square along the engine's path.
				flewAlong(ctx, t, sp[0], sp[1], path, at)
				paths++
				longest = max(longest, len(path))
			}
		}
	}
	t.Logf("%d moves flown along the engine's path (the longest %d squares), %d rolls animated", paths, longest, rolled)
	if paths == 0 || rolled == 0 {
		t.Errorf("%d paths and %d rolls checked: want some of each", paths, rolled)
	}
	m := finished(ctx, t, n, tok, id)
	if got, want := pagePlanes(ctx, t), apiPlanes(t, m); !slices.Equal(got, want) {
		t.Fatalf("page planes %v, API planes %v", got, want)
	}
	t.Logf("%d clicks on the board (%d on a destination)", clicks, targets)
	fits(ctx, t, "the result")
	axe(ctx, t, "the result")
	screenshot(ctx, t, "web-"+sz.name+"-aeroplane-finished.png")

	// The replay, one event back: the planes GetMatch at_version shows.
	end := m.GetVersion()
	do(ctx, t, "open the replay", chromedp.Click(chromedp.ID("to-replay")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"] #board`, end))),
		chromedp.Click(chromedp.ID("prev")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"][data-ui="replay"]`, end-1))))
	c := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), tok)
	r, err := c.Matches.GetMatch(c.Ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: end - 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pagePlanes(ctx, t), apiPlanes(t, r.GetMatch()); !slices.Equal(got, want) {
		t.Fatalf("replay at %d: page planes %v, API planes %v", end-1, got, want)
	}
	axe(ctx, t, "the replay")
	do(ctx, t, "step the replay forward", chromedp.Click(chromedp.ID("next")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#replay[data-version="%d"] #board[data-version="%d"]`, end, end))))
	if got, want := pagePlanes(ctx, t), apiPlanes(t, m); !slices.Equal(got, want) {
		t.Fatalf("replay at %d: page planes %v, API planes %v", end, got, want)
	}
	screenshot(ctx, t, "web-"+sz.name+"-aeroplane-replay.png")

	// The lobby lists it as finished, with its replay; the player's page
	// has it too.
	do(ctx, t, "the lobby", chromedp.Navigate(base+"#/"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#finished [data-match=%q] a.replay`, id))))
	do(ctx, t, "the player's page", chromedp.Click(chromedp.ID("me")),
		chromedp.WaitVisible(chromedp.CSS(`#player .matches a.replay`)))
	fits(ctx, t, "the player's page")
	axe(ctx, t, "the player's page")
	screenshot(ctx, t, "web-"+sz.name+"-player.png")
	do(ctx, t, "the leaderboard", chromedp.Click(chromedp.CSS(`#nav a[href="#/leaders"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#leaders table, #leaders .empty`)))
	axe(ctx, t, "the leaderboard")
}

// TestLongWebCarcassonne plays Carcassonne against a bot at both sizes by
// clicking a highlighted cell, sometimes turning the tile, placing it,
// and then a follower's spot on the large tile beside the board (the
// picker), a follower button, or none.
func TestLongWebCarcassonne(t *testing.T) {
	nodetest.Long(t)
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			t.Parallel() // two browsers at once: the tests mostly wait on the page and the bot
			webCarcassonne(t, sz)
		})
	}
}

func webCarcassonne(t *testing.T, sz size) {
	ctx := browser(t, 3*time.Minute, sz)
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	signIn(ctx, t, "http://"+n.Addr()+"/", "Bea")
	do(ctx, t, "start a match", chromedp.Click(chromedp.ID("quick-carcassonne")), chromedp.WaitVisible(chromedp.CSS(`#match[data-view="carcassonne"]`)))
	tok, id := token(ctx, t), matchID(ctx, t)
	rng := rand.New(rand.NewPCG(5, uint64(len(sz.name))))
	last, tiles, followers, turns, pickerChecked := 0, 0, 0, 0, false
	for {
		ui := waitUI(ctx, t, last, `if (u === 'place' && document.querySelector('#board .spot.chosen')) return 'chosen';`, "place", "follower")
		if ui == "over" {
			break
		}
		if tiles > 200 {
			t.Fatalf("no end after %d tiles", tiles)
		}
		switch ui {
		case "place":
			last = version(ctx, t)
			count := get(ctx, t, "count cells", chromedp.Evaluate[int](`document.querySelectorAll('#board .spot').length`))
			k := rng.IntN(count)
			do(ctx, t, "click a cell", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#board .spot:nth-child(%d of .spot)`, k+1))))
		case "chosen":
			tiles++
			if rng.IntN(2) == 0 && get(ctx, t, "can it turn", chromedp.Evaluate[bool](`!document.getElementById('rotate').disabled`)) {
				if tiles%2 == 0 {
					do(ctx, t, "rotate", chromedp.Click(chromedp.ID("rotate")))
				} else {
					do(ctx, t, "press R", chromedp.KeyEvent("r"))
				}
			}
			if tiles == 5 {
				fits(ctx, t, "a placement")
				axe(ctx, t, "a placement")
				screenshot(ctx, t, "web-"+sz.name+"-carcassonne-place.png")
			}
			do(ctx, t, "place the tile", chromedp.Click(chromedp.ID("place")))
		case "follower":
			last = version(ctx, t)
			turns++
			spots := get(ctx, t, "count follower spots", chromedp.Evaluate[int](`document.querySelectorAll('#picker .follower-spot').length`))
			if spots > 0 && !pickerChecked {
				// The picker's spots are a finger wide at both sizes.
				pickerChecked = true
				fits(ctx, t, "a follower's choice")
				axe(ctx, t, "a follower's choice")
				screenshot(ctx, t, "web-"+sz.name+"-carcassonne-follower.png")
			}
			switch k := rng.IntN(3); {
			case spots > 0 && k == 0:
				followers++
				do(ctx, t, "click a follower spot", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#picker .follower-spot:nth-of-type(%d)`, 1+rng.IntN(spots)))))
			case spots > 0 && k == 1:
				followers++
				do(ctx, t, "a follower button", chromedp.Click(chromedp.CSS(`#controls button.deploy`)))
			default:
				do(ctx, t, "no follower", chromedp.Click(chromedp.ID("no-follower")))
			}
		}
	}
	m := finished(ctx, t, n, tok, id)
	st := unpack(t, m.GetState(), new(carcassonnev1.State))
	if got := get(ctx, t, "count tiles", chromedp.Evaluate[int](`document.querySelectorAll('#board .tile[data-tile]').length`)); got != len(st.GetBoard()) {
		t.Fatalf("page shows %d tiles, API %d", got, len(st.GetBoard()))
	}
	t.Logf("%d tiles placed through the page, %d followers, %d turns", tiles, followers, turns)
	fits(ctx, t, "the result")
	axe(ctx, t, "the result")
	screenshot(ctx, t, "web-"+sz.name+"-carcassonne-finished.png")
}

// TestLongWebJoin joins a match another player opened, from the lobby's
// open matches, and sees it start with the opener to play or itself.
func TestLongWebJoin(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	ctx := browser(t, 2*time.Minute, sizes[1])
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	c := nodetest.NewPlayer(t, n.Addr(), "Cy")
	cr, err := c.Matches.CreateMatch(c.Ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: "join-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	signIn(ctx, t, "http://"+n.Addr()+"/", "Dee")
	do(ctx, t, "join from the lobby",
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#open [data-match=%q] button.join`, id))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#open [data-match=%q] button.join`, id))),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-status="live"]`)))
	ui := get(ctx, t, "read the state", chromedp.Evaluate[string](`document.getElementById('match').dataset.ui`))
	if ui != "wait" && ui != "place" {
		t.Fatalf("after joining, the page is in state %q", ui)
	}
	prompt := get(ctx, t, "read the prompt", chromedp.Evaluate[string](`document.getElementById('prompt').textContent`))
	t.Logf("the page says: %s", prompt)
	axe(ctx, t, "a match against a person")
	screenshot(ctx, t, "web-phone-joined.png")
}

// TestLongWebRatings has two players play a rated Aeroplane match through
// the API, then opens the winner's page and the leaderboard in the page:
// the rating's line, and both players ranked.
func TestLongWebRatings(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	ctx := browser(t, 2*time.Minute, sizes[0])
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	a, b := nodetest.NewPlayer(t, n.Addr(), "Eve"), nodetest.NewPlayer(t, n.Addr(), "Fay")
	opts, err := anypb.New(&aeroplanev1.Options{AutoRoll: true})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := a.Matches.CreateMatch(a.Ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", Options: opts, SeatCount: 2, RequestId: "rated-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	if _, err := b.Matches.JoinMatch(b.Ctx(), &hangarv1.JoinMatchRequest{MatchId: id, ExpectedVersion: cr.GetMatch().GetVersion(), RequestId: "rated-2"}); err != nil {
		t.Fatal(err)
	}
	// Each plays its first legal action whenever it has one.
	for i := 0; ; i++ {
		if i > 5000 {
			t.Fatal("no end after 5000 rounds")
		}
		if a.Match(t, id).GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			break
		}
		for _, p := range []*nodetest.Player{a, b} {
			l, err := p.Moves.ListLegalActions(p.Ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
			if err != nil || len(l.GetActions()) == 0 {
				continue
			}
			// A conflict (the other moved meanwhile) is tried again next round.
			p.Moves.Act(p.Ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: l.GetVersion(), Action: l.GetActions()[0], RequestId: fmt.Sprintf("%s-%d", p.ID, i)})
		}
	}
	do(ctx, t, "sign in as Eve",
		chromedp.Navigate("http://"+n.Addr()+"/"),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('hangar.session', JSON.stringify({token: %q, expireTime: new Date(Date.now() + 3600e3).toISOString()})); location.hash = '#/player/%s'`, a.Token, a.ID)),
		chromedp.WaitVisible(chromedp.CSS(`#player .rating-line`)))
	axe(ctx, t, "a rated player's page")
	screenshot(ctx, t, "web-desktop-player-rated.png")
	do(ctx, t, "the leaderboard", chromedp.Navigate("http://"+n.Addr()+"/#/leaders/aeroplane"),
		chromedp.WaitVisible(chromedp.CSS(`#leaders tbody tr:nth-child(2)`)))
	axe(ctx, t, "the leaderboard")
	screenshot(ctx, t, "web-desktop-leaderboard.png")
}
