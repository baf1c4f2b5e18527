// Package page bounds the pages of the API's listings and makes their page
// tokens: base64url of a kind byte, 8 bytes of position (a time in Unix
// nanoseconds, or a score's float bits) and an id. A token of one kind is
// refused by a listing of another.
//
// page imports fault and ident and nothing else of Hangar's.
package page

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
)

// The kinds of token.
const (
	Ended   = 'E' // a history listing: store.EndCursor
	Created = 'C' // a listing of matches not ended: store.Cursor
	Score   = 'S' // a leaderboard: store.ScoreCursor
	Chat    = 'T' // a chat channel: a seq and the channel's name
	Player  = 'P' // a list of players by id (friends, blocks)
)

// Size is the page size a request asks for with n: def when n is 0. An n
// below 0 or above max is an error wrapping fault.ErrInvalid.
func Size(n, def, max int32) (int, error) {
	switch {
	case n == 0:
		return int(def), nil
	case n < 0 || n > max:
		return 0, fmt.Errorf("%w: page_size must be 1 to %d", fault.ErrInvalid, max)
	}
	return int(n), nil
}

// Token is the page token of kind that follows position pos and id.
func Token(kind byte, pos uint64, id string) string {
	b := binary.BigEndian.AppendUint64([]byte{kind}, pos)
	return base64.RawURLEncoding.EncodeToString(append(b, id...))
}

// Parse returns the position and id of t, a Token of kind. A token that is
// not one is an error wrapping fault.ErrInvalid.
func Parse(t string, kind byte) (uint64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(b) < 10 || len(b) > 9+64 || b[0] != kind || !ident.Printable(string(b[9:])) {
		return 0, "", fmt.Errorf("%w: bad page_token", fault.ErrInvalid)
	}
	return binary.BigEndian.Uint64(b[1:9]), string(b[9:]), nil
}

// Time is the time at position pos of an Ended or Created token.
func Time(pos uint64) time.Time { return time.Unix(0, int64(pos)).UTC() }

// Cut trims rows, read with a limit of size+1, to one page of size rows,
// and returns the next page's token, made by token from the page's last
// row: "" when rows was the last page.
func Cut[T any](rows []T, size int, token func(last T) string) ([]T, string) {
	if len(rows) <= size {
		return rows, ""
	}
	rows = rows[:size]
	return rows, token(rows[size-1])
}
