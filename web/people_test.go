package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

// reduceMotion makes the tab ask for reduced motion, as a reader who
// turned animations off does.
func reduceMotion(ctx context.Context, t *testing.T) {
	t.Helper()
	do(ctx, t, "ask for reduced motion", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
		})
		return err
	}))
}

// logSeqs are the event numbers the page's log shows, oldest first.
func logSeqs(ctx context.Context, t *testing.T) []int {
	t.Helper()
	return get(ctx, t, "read the log", chromedp.Evaluate[[]int](`[...document.querySelectorAll('#log li')].map(li => Number(li.dataset.seq)).reverse()`))
}

// everyEvent checks that the page's log holds each event 1..n once, in order.
func everyEvent(ctx context.Context, t *testing.T, who string, n int) {
	t.Helper()
	got := logSeqs(ctx, t)
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s's log shows events %v, want 1..%d once each", who, got, n)
	}
}

// TestLongWebPeople has two people play a private Aeroplane match against
// each other, each in a browser of their own (a laptop, and a phone that
// asks for reduced motion), through clicks. Ann makes the match private
// in the lobby's form and its invite link on the match page; Ben does not
// see it among the open matches, follows the link and is seated. Each
// page learns of the other's moves from its live watch (no page is
// reloaded), and at the end each log holds every event once.
func TestLongWebPeople(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr() + "/"
	// Another player's public match, so that the open list has one to show.
	cy := nodetest.NewPlayer(t, n.Addr(), "Cy")
	pub, err := cy.Matches.CreateMatch(cy.Ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: "public-1"})
	if err != nil {
		t.Fatal(err)
	}
	ann := browser(t, 4*time.Minute, sizes[0])
	ben := browser(t, 4*time.Minute, sizes[1])
	reduceMotion(ben, t)
	signIn(ann, t, base, "Ann")
	signIn(ben, t, base, "Ben")

	do(ann, t, "create a private match",
		chromedp.SetValue(chromedp.ID("game"), "aeroplane"),
		chromedp.SetValue(chromedp.ID("seats"), "2"),
		chromedp.SetValue(chromedp.ID("bots"), "0"),
		chromedp.Click(chromedp.ID("private")),
		chromedp.Click(chromedp.ID("create-match")),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-status="open"] #make-invite`)))
	id := matchID(ann, t)
	do(ann, t, "make the invite link", chromedp.Click(chromedp.ID("make-invite")),
		chromedp.Poll[chromedp.Void](`document.getElementById('invite-link')?.value.includes('#/join/')`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
	// Read in one evaluation: the match view may draw the field anew when
	// the link's event arrives, and a node found first and read after is
	// gone by then (CI: "No node with given id found").
	link := get(ann, t, "read the link", chromedp.Evaluate[string](`document.getElementById('invite-link').value`))
	fits(ann, t, "the invite link")
	axe(ann, t, "the invite link")
	screenshot(ann, t, "web-desktop-invite.png")

	// Ben's lobby lists Cy's public match, not Ann's private one.
	do(ben, t, "Ben's lobby", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#open [data-match=%q]`, pub.GetMatch().GetMatchId()))))
	if shown := get(ben, t, "look for the private match", chromedp.Evaluate[bool](fmt.Sprintf(`!!document.querySelector('[data-match=%q]')`, id))); shown {
		t.Fatal("Ben's lobby shows Ann's private match before he is invited")
	}
	if _, err := cy.Matches.GetMatch(cy.Ctx(), &hangarv1.GetMatchRequest{MatchId: id}); err == nil {
		t.Fatal("Cy reads Ann's private match")
	}
	do(ben, t, "follow the link", chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-view="aeroplane"][data-status="live"]`)))
	if got := matchID(ben, t); got != id {
		t.Fatalf("the link took Ben to match %q, want %q", got, id)
	}
	screenshot(ben, t, "web-phone-joined-by-link.png")

	// They play: whoever's turn it is, by the API, clicks in their page.
	api := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), token(ann, t))
	pages := map[string]context.Context{"Ann": ann, "Ben": ben}
	moves := map[string]int{}
	animated := map[string]int{}
	for turn := 0; ; turn++ {
		if turn > 2000 {
			t.Fatal("no end after 2000 turns")
		}
		m := api.Match(t, id)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			break
		}
		who := ""
		for _, s := range m.GetSeats() {
			if s.GetSeat() == m.GetTurnSeat() {
				who = s.GetDisplayName()
			}
		}
		p := pages[who]
		// The page shows the turn once its watch brought the last event.
		ui := get(p, t, fmt.Sprintf("%s's page at version %d", who, m.GetVersion()), chromedp.Poll[string](fmt.Sprintf(`(() => {
			const m = document.getElementById('match');
			if (!m || Number(m.dataset.version) < %d) return false;
			const u = m.dataset.ui;
			return ['roll', 'move', 'over'].includes(u) ? u : false;
		})()`, m.GetVersion()), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
		switch ui {
		case "over":
			continue
		case "roll":
			do(p, t, "roll", chromedp.Click(chromedp.ID("roll")))
		case "move":
			if moves[who]%4 == 0 { // the die, every few turns: the test's time is the match's
				if faces := dieShows(p, t, apiDie(t, api, id, int(m.GetVersion()))); len(faces) > 1 {
					animated[who]++
				}
			}
			count := get(p, t, "count movable planes", chromedp.Evaluate[int](`document.querySelectorAll('#board .plane.movable').length`))
			if count == 0 {
				do(p, t, "pass", chromedp.Click(chromedp.CSS(`#moves button.move`)))
			} else {
				settle(p, t)
				do(p, t, "click a plane", chromedp.Click(chromedp.CSS(`#board .plane.movable .body`)))
				if get(p, t, "is a plane chosen", chromedp.Evaluate[bool](`!!document.querySelector('#board .plane.chosen')`)) {
					do(p, t, "click where it goes", chromedp.Click(chromedp.CSS(`#board .target`)))
				}
			}
			moves[who]++
		}
		// The move is durable before the page shows its outcome.
		do(p, t, "wait for the move", chromedp.Poll[chromedp.Void](fmt.Sprintf(`Number(document.getElementById('match').dataset.version) > %d`, m.GetVersion()),
			chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
	}
	end := api.Match(t, id)
	for who, p := range pages {
		do(p, t, who+" sees the end", chromedp.WaitVisible(chromedp.ID("result")))
		if v := version(p, t); v != int(end.GetVersion()) {
			t.Errorf("%s's page is at version %d, the match at %d", who, v, end.GetVersion())
		}
		everyEvent(p, t, who, int(end.GetVersion()))
	}
	t.Logf("moves: %v; animated rolls: %v; result: %s", moves, animated, get(ann, t, "read the result", chromedp.Text(chromedp.ID("result"))))
	if moves["Ann"] == 0 || moves["Ben"] == 0 {
		t.Fatalf("moves made through the pages: %v", moves)
	}
	if animated["Ann"] == 0 {
		t.Error("Ann's die never rolled")
	}
	if animated["Ben"] != 0 {
		t.Errorf("Ben asked for reduced motion, yet his die rolled %d times", animated["Ben"])
	}
	screenshot(ann, t, "web-desktop-people-finished.png")
	screenshot(ben, t, "web-phone-people-finished.png")
}

// TestLongWebGeneric plays a whole Aeroplane match against a bot through
// the generic view (?generic=1), the one the page shows for a game it does
// not draw: the state and the events as JSON, the legal actions as
// buttons. It clicks the first action whenever it has one, and checks the
// JSON against the API at the end.
func TestLongWebGeneric(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	ctx := browser(t, 3*time.Minute, sizes[0])
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr() + "/?generic=1"
	signIn(ctx, t, base, "Gus")
	do(ctx, t, "start a match", chromedp.Click(chromedp.ID("quick-aeroplane")),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-view="other"] #state-json`)))
	tok, id := token(ctx, t), matchID(ctx, t)
	last, clicks := 0, 0
	for {
		ui := waitUI(ctx, t, last, "", "act")
		if ui == "over" {
			break
		}
		if clicks > 2000 {
			t.Fatalf("no end after %d clicks", clicks)
		}
		if clicks == 3 {
			axe(ctx, t, "the generic view")
			screenshot(ctx, t, "web-desktop-generic.png")
		}
		clicks++
		last = version(ctx, t)
		do(ctx, t, "click the first action", chromedp.Click(chromedp.CSS(`#actions button.action`)))
	}
	m := finished(ctx, t, n, tok, id)
	raw := get(ctx, t, "read the state", chromedp.Text(chromedp.ID("state-json")))
	var st struct {
		Planes []struct {
			Seat, Index, Position int
		}
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatalf("the state is not JSON: %v\n%s", err, raw)
	}
	got := []string{}
	for _, p := range st.Planes {
		got = append(got, fmt.Sprintf("%d/%d@%d", p.Seat, p.Index, p.Position))
	}
	slices.Sort(got)
	if want := apiPlanes(t, m); !slices.Equal(got, want) {
		t.Fatalf("the JSON's planes %v, the API's %v", got, want)
	}
	// Each event is in the log once, as JSON naming its number.
	lines := get(ctx, t, "read the log", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#log li code.event-json')].map(c => c.textContent).reverse()`))
	if len(lines) != int(m.GetVersion()) {
		t.Fatalf("the log has %d JSON events, the match %d", len(lines), m.GetVersion())
	}
	for i, l := range lines {
		var ev struct{ Seq string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Seq != strconv.Itoa(i+1) {
			t.Fatalf("log line %d: %q (%v)", i+1, l, err)
		}
	}
	t.Logf("%d actions clicked; last event: %s", clicks, strings.TrimSpace(lines[len(lines)-1]))
}
