package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/store"
)

// TestPlan pins how a batch's appends become statements: the first append
// of each existing match joins a run written by one statement; a create
// with later appends of its match, and a match's later appends, take a
// statement each and end the run before them; a create alone takes a
// statement after all the others; a run of one is appendManySQL too. Each case is the
// queued appends (match id and expected version, in id order) and the
// statements, {…} for appendManySQL and […] for a single one.
func TestPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		appends, want string
	}{
		{"a1 b1 c1", "{a1 b1 c1}"},
		{"a1 b1", "{a1 b1}"},
		{"a1 a2", "{a1} [a2]"},
		{"a1 b1 b2 c1 d1", "{a1 b1} [b2] {c1 d1}"},
		{"a1 b1 b2 b3 c1", "{a1 b1} [b2] [b3] {c1}"},
		{"a0 b1 c1", "{b1 c1} [a0]"},
		{"a1 b0 c1", "{a1 c1} [b0]"},
		{"a0 a1 b1 c0 d1", "[a0] [a1] {b1 d1} [c0]"},
		{"a1 b0 b1 c1 d1", "{a1} [b0] [b1] {c1 d1}"},
		{"a1 b1 c0", "{a1 b1} [c0]"},
		{"a1 a0 b1 c1", "{a1} [a0] {b1 c1}"},
		{"a0 a0 b0", "[a0] [a0] [b0]"},
	} {
		var as []store.Append
		var queued []int
		for i, f := range strings.Fields(tc.appends) {
			var v int64
			fmt.Sscan(f[1:], &v)
			as = append(as, store.Append{Match: store.Match{ID: f[:1], Version: v + 1}, Expected: v,
				Events: []store.Event{{Type: "t"}}})
			queued = append(queued, i)
		}
		var got []string
		for _, st := range plan(as, queued) {
			var names []string
			for _, i := range st.appends {
				names = append(names, strings.Fields(tc.appends)[i])
			}
			switch {
			case st.many && st.sql == appendManyQ.sql:
				got = append(got, "{"+strings.Join(names, " ")+"}")
			case len(st.appends) == 1 && !st.many && st.sql != appendManyQ.sql:
				got = append(got, "["+names[0]+"]")
			default:
				got = append(got, fmt.Sprintf("?%v", names))
			}
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%s: %s, want %s", tc.appends, s, tc.want)
		}
	}
}

// TestAppendManyParameters: appendManyArgs lays out the arguments of
// appendManySQL and of appendManySmallSQL alike, so the two must number
// the same parameters the same way.
func TestAppendManyParameters(t *testing.T) {
	t.Parallel()
	if !slices.Equal(appendManyQ.names, appendManySmallQ.names) {
		t.Errorf("appendManySQL numbers %q, appendManySmallSQL %q", appendManyQ.names, appendManySmallQ.names)
	}
	if appendManyQ.sql == appendManySmallQ.sql || strings.Contains(appendManySmallQ.sql, "FOR UPDATE") {
		t.Errorf("appendManySmallSQL locks its rows ahead of the update:\n%s", appendManySmallQ.sql)
	}
}
