package web_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
)

// settle waits until no movable plane is flying along its path, so that
// a click lands on a plane where it stands.
func settle(ctx context.Context, t *testing.T) {
	t.Helper()
	do(ctx, t, "wait for the planes to land", chromedp.Poll[chromedp.Void](`!document.querySelector('#board .plane.movable.flying')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
}

// onlyPath is the engine's path (MovePreview.path) for the one move plane
// index of the caller may make now, or nil when it has none or several,
// and the version it was read at.
func onlyPath(t *testing.T, c *nodetest.Player, id string, index int) ([]int32, int64) {
	t.Helper()
	l, err := c.Moves.ListLegalActions(c.Ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	var found []int32
	n := 0
	for _, a := range l.GetActions() {
		m := new(aeroplanev1.Move)
		if a.UnmarshalTo(m) != nil || m.GetKind() == aeroplanev1.MoveKind_MOVE_KIND_PASS || int(m.GetPlane()) != index {
			continue
		}
		n++
		found = m.GetPreview().GetPath()
	}
	if n != 1 {
		return nil, l.GetVersion()
	}
	return found, l.GetVersion()
}

// flewAlong waits until the board's plane seat/index has flown along
// path: its data-path, the squares the page animated it over, equals the
// engine's path for the move, read at version at.
func flewAlong(ctx context.Context, t *testing.T, seat, index int, path []int32, at int64) {
	t.Helper()
	want := make([]string, len(path))
	for i, p := range path {
		want[i] = strconv.Itoa(int(p))
	}
	sel := fmt.Sprintf(`#board .plane[data-seat="%d"][data-index="%d"]`, seat, index)
	wctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	_, err := chromedp.Run(wctx, chromedp.Poll[bool](fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.path === %q`, sel, strings.Join(want, " ")),
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
	if err != nil {
		shown := get(ctx, t, "read the plane's path", chromedp.Evaluate[string](fmt.Sprintf(`(() => { const p = document.querySelector(%q) || {dataset: {}, classList: []}, m = document.getElementById('match').dataset; return (p.dataset.path || '') + '" at ' + p.dataset.position + ' (' + [...p.classList].join(' ') + '), the page ' + m.ui + ' at version ' + m.version + ' (legal actions at ' + m.legal + ', events to ' + m.seq + '), last: ' + document.getElementById('last').textContent + ', error: ' + ((document.querySelector('.error') || {}).textContent || 'none') + ', on top of its body: ' + (() => { const b = p.querySelector && p.querySelector('.body'); if (!b) return 'no body'; const r = b.getBoundingClientRect(), e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return e ? e.tagName + '#' + e.id + '.' + e.getAttribute('class') : 'nothing'; })() + ' "'; })()`, sel)))
		t.Fatalf("plane %d/%d flew over %q, the engine's path at version %d is %q (%v)", seat, index, shown, at, strings.Join(want, " "), err)
	}
}

// apiDie is the die of Aeroplane match id at version v, as the API shows it.
func apiDie(t *testing.T, c *nodetest.Player, id string, v int) int32 {
	t.Helper()
	r, err := c.Matches.GetMatch(c.Ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: int64(v)})
	if err != nil {
		t.Fatal(err)
	}
	return unpack(t, r.GetMatch().GetState(), new(aeroplanev1.State)).GetDie()
}

// dieShows waits for the die to stop rolling and checks that it ends on
// the rolled face: the face drawn (its pips), the last face of the roll
// and data-die all equal want. It returns the faces the roll showed.
func dieShows(ctx context.Context, t *testing.T, want int32) []string {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[chromedp.Void](`(() => { const d = document.getElementById('roll'); return d && !('rolling' in d.dataset); })()`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("the die does not stop rolling: %v; it is %s", err, get(ctx, t, "read the die", chromedp.Evaluate[string](`(document.getElementById('roll') || {outerHTML: 'gone'}).outerHTML`)))
	}
	r := get(ctx, t, "read the die", chromedp.Evaluate[[]string](`(() => { const d = document.getElementById('roll'); return [d.dataset.die, String(d.querySelectorAll('.pip').length), d.dataset.faces]; })()`))
	faces := strings.Fields(r[2])
	w := strconv.Itoa(int(want))
	if r[0] != w || r[1] != w || len(faces) == 0 || faces[len(faces)-1] != w {
		t.Fatalf("the die rolled %s: data-die %s, %s pips drawn, faces %q", w, r[0], r[1], r[2])
	}
	return faces
}
