package page

import (
	"slices"
	"strconv"
	"testing"
)

// Cut at the page boundary: a read of size+1 rows has a next page, whose
// token is the last kept row's; size rows or fewer are the last page.
func TestCut(t *testing.T) {
	token := func(last int) string { return strconv.Itoa(last) }
	cases := []struct {
		rows, want []int
		next       string
	}{
		{nil, nil, ""},
		{[]int{1, 2}, []int{1, 2}, ""},
		{[]int{1, 2, 3}, []int{1, 2, 3}, ""},
		{[]int{1, 2, 3, 4}, []int{1, 2, 3}, "3"},
	}
	for _, c := range cases {
		got, next := Cut(c.rows, 3, token)
		if !slices.Equal(got, c.want) || next != c.next {
			t.Errorf("Cut(%v, 3) = %v, %q; want %v, %q", c.rows, got, next, c.want, c.next)
		}
	}
}
