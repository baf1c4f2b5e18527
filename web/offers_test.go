package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

// until waits until the page's expression js is true.
func until(ctx context.Context, t *testing.T, what, js string) {
	t.Helper()
	do(ctx, t, what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
}

// click waits for the element sel to be visible and clicks it.
func click(ctx context.Context, t *testing.T, what, sel string) {
	t.Helper()
	do(ctx, t, what, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// TestLongWebOffersChat has two people, each on a phone, do what a match
// between people offers beside the moves: they become friends (a request
// from a player's page, accepted on the friends page, which shows the
// other online and whose turn it is), play Carcassonne on a per-move clock
// made in the lobby's form, chat in the players' channel, decline a draw,
// take back a placed tile, agree a draw, and follow the rematch into the
// new match.
func TestLongWebOffersChat(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr() + "/"
	ann := browser(t, 2*time.Minute, sizes[1])
	ben := browser(t, 2*time.Minute, sizes[1])
	// Each signs in with a token made through the API, as a returning
	// player whose browser remembers them (the other tests sign up).
	for name, p := range map[string]context.Context{"Ann": ann, "Ben": ben} {
		pl := nodetest.NewPlayer(t, n.Addr(), name)
		do(p, t, name+" returns", chromedp.Navigate(base),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('hangar.session', JSON.stringify({token: %q, expireTime: new Date(Date.now() + 3600e3).toISOString()}))`, pl.Token)),
			chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("quick-aeroplane")))
	}
	meOf := func(p context.Context) string {
		return get(p, t, "read the player id", chromedp.Evaluate[string](`decodeURIComponent(document.getElementById('me').getAttribute('href').split('/')[2])`))
	}
	annID, benID := meOf(ann), meOf(ben)
	conn := nodetest.Dial(t, n.Addr())
	api := nodetest.AsPlayer(conn, token(ann, t))

	// Friends: Ben asks from Ann's page; Ann accepts on her friends page,
	// which then lists Ben, online.
	do(ben, t, "open Ann's page", chromedp.Navigate(base+"#/player/"+annID), chromedp.WaitVisible(chromedp.ID("friend-add")))
	fits(ben, t, "a player's page")
	click(ben, t, "ask Ann", "#friend-add")
	until(ben, t, "the request is sent", `document.getElementById('relation')?.dataset.relation === 'asked'`)
	click(ann, t, "open the friends page", "#nav-friends")
	click(ann, t, "accept Ben", fmt.Sprintf(`#incoming [data-player=%q] button.accept`, benID))
	until(ann, t, "Ben in Ann's friends, online", fmt.Sprintf(`document.querySelector('#friend-list [data-player=%q]')?.dataset.online === 'true'`, benID))
	fits(ann, t, "the friends page")
	axe(ann, t, "the friends page")
	screenshot(ann, t, "web-phone-friends.png")

	// Ann makes a Carcassonne match for two people with a day per move,
	// the server playing a timed-out turn; Ben joins it.
	do(ann, t, "the lobby", chromedp.Navigate(base+"#/"), chromedp.WaitVisible(chromedp.ID("create-match")))
	do(ann, t, "choose a clock", chromedp.Evaluate[chromedp.Void](`(() => {
		const set = (id, v) => { const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event('change')); };
		set('game', 'carcassonne'); set('seats', '2'); set('bots', '0'); set('clock', 'per-move'); set('clock-minutes', '1440');
	})()`))
	do(ann, t, "the clock's fields show", chromedp.WaitVisible(chromedp.ID("timeout-policy")))
	click(ann, t, "pause on weekends", "#pause-weekends")
	fits(ann, t, "the lobby's form with a clock")
	screenshot(ann, t, "web-phone-clock-form.png")
	do(ann, t, "create the match", chromedp.Click(chromedp.ID("create-match")),
		chromedp.WaitVisible(chromedp.CSS(`#match[data-status="open"]`)))
	id := matchID(ann, t)
	do(ben, t, "open the match", chromedp.Navigate(base+"#/match/"+id))
	click(ben, t, "join", "#join")
	for _, p := range []context.Context{ann, ben} {
		do(p, t, "the match starts", chromedp.WaitVisible(chromedp.CSS(`#match[data-status="live"][data-view="carcassonne"]`)))
	}
	m := api.Match(t, id)
	if tc := m.GetTimeControl(); tc.GetKind() != hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE || tc.GetPerMove().AsDuration() != 24*time.Hour {
		t.Fatalf("the match's time control is %v, want 24 h per move", tc)
	}
	if !m.GetTimeControl().GetPauseWeekends() {
		t.Errorf("the match's time control is %v, want it paused on weekends", m.GetTimeControl())
	}
	pages := map[string]context.Context{"Ann": ann, "Ben": ben}
	ids := map[string]string{"Ann": annID, "Ben": benID}
	mover := m.GetSeats()[m.GetTurnSeat()].GetDisplayName()
	other := map[string]string{"Ann": "Ben", "Ben": "Ann"}[mover]
	mv, ot := pages[mover], pages[other]
	// The seat to act counts down from a day; the line under the seats says so.
	until(mv, t, "the mover's clock", fmt.Sprintf(`(() => {
		const c = document.querySelector('#seats .clock[data-seat="%d"]');
		return c && Number(c.dataset.ms) > 23 * 3600e3 && Number(c.dataset.ms) <= 24 * 3600e3 && c.textContent.includes('23h');
	})()`, m.GetTurnSeat()))
	if line := get(mv, t, "read the clock line", chromedp.Text(chromedp.ID("clock-line"))); !strings.Contains(line, "per move") {
		t.Errorf("the clock line says %q", line)
	}

	// The other's friends page links to the match where it is the mover's turn.
	do(ot, t, "the friends page", chromedp.Navigate(base+"#/friends"))
	click(ot, t, "follow the turn link", fmt.Sprintf(`#friend-list [data-player=%q] a.turn-match[data-match=%q]`, ids[mover], id))
	do(ot, t, "back in the match", chromedp.WaitVisible(chromedp.CSS(`#match[data-status="live"] #chat`)))

	// Chat in the players' channel, both ways.
	say := func(p context.Context, text string) {
		t.Helper()
		do(p, t, "write "+text, chromedp.WaitVisible(chromedp.CSS(`#chat[data-channel="players"] #chat-text`)),
			chromedp.SendKeys(chromedp.ID("chat-text"), text), chromedp.Click(chromedp.ID("chat-send")))
	}
	heard := func(p context.Context, who, text string) {
		t.Helper()
		until(p, t, "hear "+text, fmt.Sprintf(`[...document.querySelectorAll('#chat-log li')].some(li => li.textContent.includes(%q) && li.textContent.includes(%q))`, who, text))
	}
	say(mv, "good luck")
	heard(ot, mover, "good luck")
	say(ot, "you too")
	heard(mv, other, "you too")

	// A draw offered and declined.
	click(mv, t, "offer a draw", "#offer-draw")
	click(ot, t, "decline the draw", `#offers[data-offer="draw"] #offer-decline`)
	until(mv, t, "the decline shows", `(document.getElementById('offer-note')?.textContent || '').includes('declines the offer of a draw')`)
	fits(ot, t, "an offer declined, with the chat")
	axe(ot, t, "an offer declined, with the chat")
	screenshot(ot, t, "web-phone-offer-chat.png")

	// The mover places a tile, then asks to take it back; the other accepts,
	// and the mover has the tile to place again.
	waitUI(mv, t, 0, "", "place")
	click(mv, t, "click a cell", `#board .spot`)
	click(mv, t, "place the tile", "#place:not([disabled])")
	placed := waitUI(mv, t, 0, "", "follower")
	if placed != "follower" {
		t.Fatalf("after the placement the page is in %q", placed)
	}
	before := version(mv, t)
	click(mv, t, "ask to take back", "#offer-takeback")
	click(ot, t, "accept the takeback", `#offers[data-offer="takeback"] #offer-accept`)
	waitUI(mv, t, before+1, "", "place")
	until(mv, t, "the log tells of it", `[...document.querySelectorAll('#log li')].some(li => li.textContent.includes('taken back'))`)
	var takenBack bool
	evs, err := api.Matches.ListMatchEvents(api.Ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id, PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.GetEvents() {
		takenBack = takenBack || e.GetMovesTakenBack() != nil
	}
	if !takenBack {
		t.Fatal("the API has no MovesTakenBack after the takeback was accepted")
	}

	// A draw offered and accepted ends the match, both first.
	click(mv, t, "offer a draw", "#offer-draw")
	click(ot, t, "accept the draw", `#offers[data-offer="draw"] #offer-accept`)
	for who, p := range pages {
		do(p, t, who+" sees the end", chromedp.WaitVisible(chromedp.ID("result")))
	}
	end := api.Match(t, id)
	if end.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("after the draw the match is %v", end.GetStatus())
	}
	for _, s := range end.GetSeats() {
		if s.GetPlace() != 1 {
			t.Errorf("after the draw seat %d is at place %d", s.GetSeat(), s.GetPlace())
		}
	}

	// A rematch: Ann offers it, Ben (whose page learns of it after the
	// match's end) accepts, and both follow it into the new match.
	// Each page reads the ended match's new events once its watch has ended.
	for who, p := range pages {
		until(p, t, who+"'s page is at the end", fmt.Sprintf(`(() => { const m = document.getElementById('match'); return m.dataset.polling !== undefined && m.dataset.version === '%d'; })()`, end.GetVersion()))
	}
	click(ann, t, "offer a rematch", "#offer-rematch")
	until(ann, t, "Ann's offer is open", `!!document.querySelector('#offers[data-offer="rematch"] #offer-open')`)
	click(ben, t, "accept the rematch", `#offers[data-offer="rematch"] #offer-accept`)
	fits(ann, t, "the result with a rematch")
	axe(ann, t, "the result with a rematch")
	for who, p := range pages {
		click(p, t, who+" goes to the rematch", "#rematch-go")
		do(p, t, who+" is in the rematch", chromedp.WaitVisible(chromedp.CSS(`#match[data-status="live"][data-view="carcassonne"]`)))
	}
	screenshot(ben, t, "web-phone-rematch.png")
	re := api.Match(t, matchID(ann, t))
	if re.GetRematchOf() != id || matchID(ben, t) != re.GetMatchId() {
		t.Fatalf("Ann is in %s (rematch of %q), Ben in %s; the old match is %s", re.GetMatchId(), re.GetRematchOf(), matchID(ben, t), id)
	}
	if got := api.Match(t, id).GetRematchMatchId(); got != re.GetMatchId() {
		t.Fatalf("the old match's rematch is %q, the pages are in %q", got, re.GetMatchId())
	}

	// On her own page Ann sets her time zone and starts a day's vacation.
	do(ann, t, "Ann's own page", chromedp.Navigate(base+"#/player/"+annID), chromedp.WaitVisible(chromedp.CSS(`#calendar[data-loaded]`)))
	do(ann, t, "choose a time zone", chromedp.SetValue(chromedp.ID("time-zone"), "Pacific/Auckland"))
	click(ann, t, "save the time zone", "#time-zone-save")
	until(ann, t, "the zone is saved", `document.getElementById('vacation-status').textContent.includes('Pacific/Auckland')`)
	click(ann, t, "start a day's vacation", "#vacation-start")
	do(ann, t, "the vacation shows", chromedp.WaitVisible(chromedp.ID("vacation-end")))
	fits(ann, t, "a player's own page with the calendar")
	axe(ann, t, "a player's own page with the calendar")
	screenshot(ann, t, "web-phone-calendar.png")
	cal, err := hangarv1.NewCalendarServiceClient(conn).GetCalendar(api.Ctx(), &hangarv1.GetCalendarRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cal.GetCalendar(); c.GetTimeZone() != "Pacific/Auckland" || c.GetVacation().GetDays() != 1 || c.GetDaysUsed() != 1 {
		t.Fatalf("GetCalendar is %v, want Pacific/Auckland with a running vacation of 1 day", c)
	}
}
