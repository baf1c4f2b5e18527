package match

import (
	"testing"
	"time"
)

// TestPauses: when a seat's clock runs out, and how much of a stretch of
// time it ran, across weekends in two time zones (December 2026: Auckland
// is UTC+13, Los Angeles UTC-8), a vacation that runs into a weekend, and
// a weekend that a daylight-saving change makes 49 hours long.
func TestPauses(t *testing.T) {
	t.Parallel()
	utc := func(mo time.Month, d, h int) time.Time { return time.Date(2026, mo, d, h, 0, 0, 0, time.UTC) }
	akl, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	lax, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	const day = 24 * time.Hour
	for _, c := range []struct {
		name string
		p    pauses
		from time.Time
		d    time.Duration
		want time.Time
	}{
		{"no pauses", pauses{}, utc(12, 4, 20), day, utc(12, 5, 20)},
		// Friday 20:00 UTC is Saturday 09:00 in Auckland: the turn begins
		// in the weekend, which ends on Sunday 11:00 UTC.
		{"Auckland, from inside the weekend", pauses{zone: akl}, utc(12, 4, 20), day, utc(12, 7, 11)},
		// In Los Angeles the weekend begins on Saturday 08:00 UTC: 12 hours
		// run before it and 12 after it.
		{"Los Angeles, across the weekend", pauses{zone: lax}, utc(12, 4, 20), day, utc(12, 7, 20)},
		{"Auckland, a weekday turn", pauses{zone: akl}, utc(12, 1, 9), day, utc(12, 2, 9)},
		// 12 hours run, then the vacation, then the weekend it runs into.
		{"vacation into the weekend", pauses{zone: lax, vacations: []span{{utc(12, 3, 0), utc(12, 5, 12)}}},
			utc(12, 2, 12), 2 * day, utc(12, 8, 20)},
		{"vacation alone", pauses{vacations: []span{{utc(12, 3, 0), utc(12, 5, 12)}}}, utc(12, 2, 12), 2 * day, utc(12, 7, 0)},
		{"a vacation over before the turn", pauses{vacations: []span{{utc(11, 3, 0), utc(11, 5, 12)}}}, utc(12, 2, 12), day, utc(12, 3, 12)},
		// Daylight saving time ends on Sunday 1 November in Los Angeles:
		// Saturday 00:00 PDT is 07:00 UTC, Monday 00:00 PST 08:00 UTC.
		{"Los Angeles, a 49-hour weekend", pauses{zone: lax}, utc(10, 30, 19), day, utc(11, 2, 20)},
		{"ends as the weekend begins", pauses{zone: lax}, utc(12, 4, 8), day, utc(12, 5, 8)},
		{"an overdrawn bank", pauses{zone: lax}, utc(12, 5, 12), -time.Hour, utc(12, 5, 11)},
	} {
		if got := c.p.deadline(c.from, c.d); !got.Equal(c.want) {
			t.Errorf("%s: deadline %v, want %v", c.name, got.UTC(), c.want)
		}
		if got := c.p.running(c.from, c.want); c.d > 0 && got != c.d {
			t.Errorf("%s: %v ran from %v to the deadline, want %v", c.name, got, c.from, c.d)
		}
	}
	// Auckland's weekend takes 48 of the 72 hours from Friday to Monday.
	if got := (pauses{zone: akl}).running(utc(12, 4, 9), utc(12, 7, 9)); got != day {
		t.Errorf("Auckland, Friday to Monday: ran %v, want %v", got, day)
	}
}
