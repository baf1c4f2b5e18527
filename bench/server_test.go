package bench

import (
	"strings"
	"testing"
)

// TestSharedOnHugePages reads Postgres's main shared memory from maps
// texts as Linux writes them: on huge pages, on 4 KiB pages, and a
// process without it.
func TestSharedOnHugePages(t *testing.T) {
	const (
		huge = "7f2224400000-7f222d400000 rw-s 00000000 00:11 36862                      /anon_hugepage (deleted)\n"
		zero = "7f6f1a200000-7f6f23400000 rw-s 00000000 00:01 1029                       /dev/zero (deleted)\n"
		sysv = "7f222fa23000-7f222fa24000 rw-s 00000000 00:01 22                         /SYSV000b6050 (deleted)\n"
		priv = "7f2224400000-7f222d400000 rw-p 00000000 00:00 0                          /anon_hugepage\n" +
			"55e4eb000000-55e4eb100000 r-xp 00000000 08:01 123                        /usr/lib/postgresql/15/bin/postgres\n"
		heap = "55e4ec000000-55e4ec100000 rw-p 00000000 00:00 0                          [heap]\n"
	)
	for _, c := range []struct {
		name     string
		maps     string
		huge, ok bool
	}{
		{"huge pages", heap + sysv + huge, true, true},
		{"4 KiB pages", heap + zero + sysv, false, true},
		{"no shared memory", heap + priv, false, false},
		{"only System V", sysv, false, false},
		{"empty", "", false, false},
	} {
		if huge, ok := sharedOnHugePages(c.maps); huge != c.huge || ok != c.ok {
			t.Errorf("%s: sharedOnHugePages = %v, %v; want %v, %v", c.name, huge, ok, c.huge, c.ok)
		}
	}
}

// TestAutogroupOf reads sched_autogroup_enabled as Linux writes it, and
// the report names the setting only when it is known.
func TestAutogroupOf(t *testing.T) {
	for _, c := range []struct {
		text string
		want string
	}{
		{"1\n", "on"}, {"0\n", "off"}, {"0", "off"}, {"", "unknown"}, {"2\n", "unknown"}, {"yes\n", "unknown"},
	} {
		got := "unknown"
		if on := autogroupOf(c.text); on != nil {
			got = map[bool]string{true: "on", false: "off"}[*on]
		}
		if got != c.want {
			t.Errorf("autogroupOf(%q) = %s; want %s", c.text, got, c.want)
		}
		if n := autogroupNote(autogroupOf(c.text)); (n == "") != (c.want == "unknown") || (c.want == "on") != strings.Contains(n, "=1") {
			t.Errorf("autogroupNote for %q = %q", c.text, n)
		}
	}
}
