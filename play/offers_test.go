package play_test

import (
	"io"
	"regexp"
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

// TestPlayOffers: two people in `hangar play`; Ada's draw is refused with
// what is allowed (Aeroplane Chess has none), her abort reaches Bob, and
// Bob's accept ends the match for both clients.
func TestPlayOffers(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	ada := startPlay(t, n.Addr(), "Ada", "-create", "-seats", "2")
	_, m := ada.sc.await(createdRE)
	id := m[1]
	bob := startPlay(t, n.Addr(), "Bob", "-join", id)
	bob.sc.await(regexp.MustCompile(`joined match ` + id))
	ada.sc.await(regexp.MustCompile(`match started`))
	type line struct {
		tm   *terminal
		text string
		want *regexp.Regexp
	}
	for _, l := range []line{
		{ada, "draw", regexp.MustCompile(`no draw offered: .*no draw by agreement`)},
		{ada, "abort", nil},
		{bob, "", regexp.MustCompile(`offers an abort \(accept or decline\)`)},
		{bob, "accept", regexp.MustCompile(`accepts the offer`)},
		{ada, "", regexp.MustCompile(`accepts the offer`)},
	} {
		if l.text != "" {
			if _, err := io.WriteString(l.tm.in, l.text+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		if l.want != nil {
			l.tm.sc.await(l.want)
		}
	}
	ada.wait(t)
	bob.wait(t)
	if st := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), readFile(t, ada.tokenFile)).Match(t, id).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED {
		t.Fatalf("match %s is %v after the accepted abort", id, st)
	}
}

// TestPlayChatAndRematch: two people in `hangar play -rematch` at
// Carcassonne; each hears the other's chat line; a draw ends the match,
// both clients stay for the rematch, Ada's rematch offer reaches Bob, his
// accept starts it, and both clients follow into the new match, where
// they chat again before quitting.
func TestPlayChatAndRematch(t *testing.T) {
	t.Parallel()
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	ada := startPlay(t, n.Addr(), "Ada", "-create", "-game", "carcassonne", "-seats", "2", "-rematch")
	_, m := ada.sc.await(createdRE)
	id := m[1]
	bob := startPlay(t, n.Addr(), "Bob", "-join", id, "-rematch")
	bob.sc.await(regexp.MustCompile(`joined match ` + id))
	ada.sc.await(regexp.MustCompile(`match started`))
	type line struct {
		tm   *terminal
		text string
		want *regexp.Regexp
	}
	for i, l := range []line{
		{ada, "say good luck", regexp.MustCompile(`you say: good luck`)},
		{bob, "", regexp.MustCompile(`\(Ada\) says: good luck`)},
		{bob, "say thanks", regexp.MustCompile(`you say: thanks`)},
		{ada, "", regexp.MustCompile(`\(Bob\) says: thanks`)},
		{ada, "draw", nil},
		{bob, "", regexp.MustCompile(`offers a draw \(accept or decline\)`)},
		{bob, "accept", regexp.MustCompile(`type rematch to offer a rematch`)},
		{ada, "", regexp.MustCompile(`type rematch to offer a rematch`)},
		{ada, "rematch", nil},
		{bob, "", regexp.MustCompile(`offers a rematch \(accept or decline\)`)},
		{bob, "accept", regexp.MustCompile(`following into the rematch (m_\w+)`)},
		{ada, "", regexp.MustCompile(`following into the rematch (m_\w+)`)},
		{ada, "", regexp.MustCompile(`back in match m_\w+`)},
		{bob, "", regexp.MustCompile(`back in match m_\w+`)},
		{bob, "say again", nil},
		{ada, "", regexp.MustCompile(`\(Bob\) says: again`)},
		{ada, "q", nil},
		{bob, "q", nil},
	} {
		if l.text != "" {
			if _, err := io.WriteString(l.tm.in, l.text+"\n"); err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
		}
		if l.want != nil {
			l.tm.sc.await(l.want)
		}
	}
	ada.wait(t)
	bob.wait(t)
	me := nodetest.AsPlayer(nodetest.Dial(t, n.Addr()), readFile(t, ada.tokenFile))
	old := me.Match(t, id)
	if old.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || old.GetRematchMatchId() == "" {
		t.Fatalf("match %s: %v, rematch %q", id, old.GetStatus(), old.GetRematchMatchId())
	}
	if st := me.Match(t, old.GetRematchMatchId()).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("the rematch is %v", st)
	}
}
