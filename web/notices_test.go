package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestLongWebNotices: the lobby's Notices card on a phone. 22 players ask
// Ann to be friends while her lobby is open: the card shows the latest 20,
// newest first, as they arrive. After a reload it shows the same 20 from
// the log (the page boundary: notices 3 to 22), the latest 5 until she
// asks for the rest. Then a match of hers
// starts with her turn: its notices come in live at the top, once each,
// and the your-turn one leads to the match.
func TestLongWebNotices(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr() + "/"
	ann := browser(t, 3*time.Minute, sizes[1])
	signIn(ann, t, base, "Ann")
	conn := nodetest.Dial(t, n.Addr())
	me := nodetest.AsPlayer(conn, token(ann, t))
	r, err := me.Players.GetPlayer(me.Ctx(), &hangarv1.GetPlayerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	annID := r.GetPlayer().GetPlayerId()
	friends := hangarv1.NewFriendServiceClient(conn)

	// seqs are the notices the card shows, top first, and its last seq.
	seqs := func(what string, last int) []int {
		t.Helper()
		get(ann, t, what, chromedp.Poll[bool](fmt.Sprintf(`Number(document.getElementById('notices-card')?.dataset.last) >= %d`, last),
			chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
		return get(ann, t, "read the notices", chromedp.Evaluate[[]int](`[...document.querySelectorAll('#notices li')].map(li => Number(li.dataset.seq))`))
	}
	span := func(from, to int) []int { // to down to from
		var out []int
		for s := to; s >= from; s-- {
			out = append(out, s)
		}
		return out
	}
	top := func() string {
		t.Helper()
		return get(ann, t, "read the top notice", chromedp.Evaluate[string](`document.querySelector('#notices li').textContent`))
	}

	for i := 1; i <= 22; i++ {
		p := nodetest.NewPlayer(t, n.Addr(), fmt.Sprintf("P%02d", i))
		if _, err := friends.SendFriendRequest(p.Ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: annID}); err != nil {
			t.Fatal(err)
		}
	}
	if got := seqs("the friend requests arrive live", 22); !slices.Equal(got, span(3, 22)) {
		t.Errorf("live: the card shows notices %v, want 22 down to 3", got)
	}
	if got := top(); !strings.HasPrefix(got, "P22 asks to be your friend") {
		t.Errorf("the top notice reads %q", got)
	}
	do(ann, t, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("quick-aeroplane")))
	if got := seqs("the card reads the log", 22); !slices.Equal(got, span(3, 22)) {
		t.Errorf("after a reload: the card shows notices %v, want 22 down to 3", got)
	}
	visible := func() int {
		return get(ann, t, "count the notices shown", chromedp.Evaluate[int](`[...document.querySelectorAll('#notices li')].filter(li => li.getBoundingClientRect().height > 0).length`))
	}
	if v := visible(); v != 5 {
		t.Errorf("%d notices shown before Show more, want the latest 5", v)
	}
	fits(ann, t, "the lobby with 5 of 20 notices")
	do(ann, t, "show the earlier notices", chromedp.Click(chromedp.ID("notices-more")))
	if v := visible(); v != 20 {
		t.Errorf("%d notices shown after Show more, want 20", v)
	}
	fits(ann, t, "the lobby with 20 notices")
	axe(ann, t, "the lobby with 20 notices")

	// Ann's match starts when Cy joins, and it is her turn.
	opts, err := anypb.New(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := me.Matches.CreateMatch(me.Ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Options: opts, RequestId: "notices-1"})
	if err != nil {
		t.Fatal(err)
	}
	cy := nodetest.NewPlayer(t, n.Addr(), "Cy")
	if _, err := cy.Matches.JoinMatch(cy.Ctx(), &hangarv1.JoinMatchRequest{MatchId: cr.GetMatch().GetMatchId()}); err != nil {
		t.Fatal(err)
	}
	got := seqs("the match's notices arrive live", 24)
	if !slices.Equal(got, span(5, 24)) {
		t.Errorf("the card shows notices %v, want 24 down to 5", got)
	}
	kinds := get(ann, t, "read the kinds", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#notices li')].slice(0, 2).map(li => li.dataset.kind)`))
	if !slices.Equal(kinds, []string{"yourTurn", "matchStarted"}) {
		t.Errorf("the latest notices are %v, want yourTurn over matchStarted", kinds)
	}
	if got := top(); !strings.HasPrefix(got, "Your turn in Aeroplane Chess") {
		t.Errorf("the your-turn notice reads %q", got)
	}
	screenshot(ann, t, "notices-phone")
	do(ann, t, "open the match from its notice",
		chromedp.Click(`#notices li:first-child a`),
		chromedp.WaitVisible(chromedp.ID("match")))
	if id := matchID(ann, t); id != cr.GetMatch().GetMatchId() {
		t.Errorf("the notice led to match %q, want %q", id, cr.GetMatch().GetMatchId())
	}
}
