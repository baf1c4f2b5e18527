package phrase

import (
	"regexp"
	"testing"
)

func TestSay(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"aeroplane.rolled", "Red rolls 6"},
		{"aeroplane.jumped", "Red 1+3 jumps 38 -> 42"},
		{"carcassonne.ended", "game over"},
		{"no.such.phrase", "no.such.phrase"},
	} {
		got := Say(c.key, "who", "Red", "die", "6", "planes", "Red 1+3", "from", "38", "to", "42")
		if got != c.want {
			t.Errorf("Say(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

// TestPlaces checks that every phrase's places are names the clients
// fill: a typo ("{wh0}") would show on both screens.
func TestPlaces(t *testing.T) {
	known := map[string]bool{}
	for _, n := range []string{"game", "seats", "who", "seat", "seatName", "status", "count", "n", "die", "planes",
		"from", "to", "place", "next", "ranking", "tile", "at", "rotation", "feature", "roll", "points", "kind", "reason"} {
		known[n] = true
	}
	re := regexp.MustCompile(`\{([^}]*)\}`)
	for k, p := range book {
		for _, m := range re.FindAllStringSubmatch(p, -1) {
			if !known[m[1]] {
				t.Errorf("%s: unknown place {%s} in %q", k, m[1], p)
			}
		}
	}
}
