package bench

import (
	"strings"
	"testing"
	"time"
)

// TestPacerSpacesSlots: slots come one interval apart however many ask at
// once, and a pause banks no burst: the first slot after it is now.
func TestPacerSpacesSlots(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	p := newPacer(100, func() time.Time { return now }) // 10 ms apart
	for i := range 5 {
		if got, want := p.reserve(), now.Add(time.Duration(i)*10*time.Millisecond); !got.Equal(want) {
			t.Fatalf("slot %d at %v, want %v", i, got.Sub(now), want.Sub(now))
		}
	}
	now = now.Add(time.Second) // idle for a second
	if got := p.reserve(); !got.Equal(now) {
		t.Fatalf("the first slot after a pause is %v from now, want now", got.Sub(now))
	}
	if got, want := p.reserve(), now.Add(10*time.Millisecond); !got.Equal(want) {
		t.Fatalf("the next is %v from now, want 10ms", got.Sub(now))
	}
}

// samples is n samples a minute apart with node A's RSS and goroutines
// given by f, the rest steady.
func samples(n int, f func(i int) (rss float64, g int)) []SoakSample {
	var out []SoakSample
	for i := range n {
		rss, g := f(i)
		out = append(out, SoakSample{Elapsed: time.Duration(i) * time.Minute, A: NodeSample{RSSMB: rss, Goroutines: g, FDs: 50},
			B: NodeSample{RSSMB: 40, Goroutines: 200, FDs: 60}, PGConns: 12})
	}
	return out
}

func TestTrends(t *testing.T) {
	t.Parallel()
	flat := func(ts []Trend) map[string]bool {
		m := map[string]bool{}
		for _, tr := range ts {
			m[tr.Name] = tr.Flat
		}
		return m
	}
	// Steady after a warm-up that doubles everything: flat.
	ts, err := Trends(samples(40, func(i int) (float64, int) {
		if i < 5 {
			return 20, 50
		}
		return 60 + float64(i%3), 200 + i%7
	}), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for name, ok := range flat(ts) {
		if !ok {
			t.Errorf("%s judged growing in a steady run: %+v", name, ts)
		}
	}
	// RSS growing 2 MB a minute and a goroutine leaked a minute: caught,
	// the steady series not.
	ts, err = Trends(samples(40, func(i int) (float64, int) { return 60 + 2*float64(i), 200 + i }), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := flat(ts)
	if got["A RSS (MB)"] || got["A goroutines"] || !got["A open files"] || !got["Postgres sessions"] {
		t.Errorf("growing RSS and goroutines: %+v", ts)
	}
	if _, err := Trends(samples(10, func(int) (float64, int) { return 1, 1 }), 5*time.Minute); err == nil {
		t.Error("five samples after the warm-up were judged; want an error")
	}
}

func TestTableRows(t *testing.T) {
	t.Parallel()
	s := samples(31, func(i int) (float64, int) { return float64(i), i })
	s = append(s, SoakSample{Elapsed: 30*time.Minute + 20*time.Second, At: time.Unix(1, 0)})
	rows := strings.Split(strings.TrimSpace(Table(s, 5*time.Minute)), "\n")[2:]
	var mins []string
	for _, r := range rows {
		mins = append(mins, strings.Fields(r)[1])
	}
	if got, want := strings.Join(mins, " "), "0.0 5.0 10.0 15.0 20.0 25.0 30.0 30.3"; got != want {
		t.Errorf("the table's minutes are %s, want %s", got, want)
	}
}
