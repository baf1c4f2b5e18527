package server

import (
	"strings"
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestNearest: the nearest name by edit distance, a name cut short
// counting as near; nothing when no name is near.
func TestNearest(t *testing.T) {
	fields := []string{"game", "options", "seat_count", "bot_seats", "observe_only", "request_id", "turn_time", "bot_level"}
	for _, tc := range []struct{ in, want string }{
		{"seats", "seat_count"}, // cut short beats bot_seats' four insertions
		{"seatz", "seat_count"},
		{"botseats", "bot_seats"},
		{"gmae", "game"},
		{"turntime", "turn_time"},
		{"colour", ""},
		{"x", ""},
		{"BOT_LEVEL_HARD", ""}, // not a field at all
	} {
		if got := nearest(tc.in, fields, nil); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	levels := []string{"BOT_LEVEL_UNSPECIFIED", "BOT_LEVEL_GREEDY", "BOT_LEVEL_RANDOM"}
	for _, tc := range []struct{ in, want string }{
		{"BOT_LEVEL_GREDY", "BOT_LEVEL_GREEDY"},
		{"bot_level_random", "BOT_LEVEL_RANDOM"},
		{"BOT_LEVEL_HARDD", ""},
	} {
		if got := nearest(tc.in, levels, nil); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExplainJSON: the first fault of a body, and what would be right.
func TestExplainJSON(t *testing.T) {
	md := (&hangarv1.CreateMatchRequest{}).ProtoReflect().Descriptor()
	for _, tc := range []struct{ body, want string }{
		{`{"game":"aeroplane","seatCount":2}`, ""},
		{`{"game":"aeroplane","seat_count":"2","turnTime":"1.5s","botLevel":"BOT_LEVEL_RANDOM"}`, ""},
		{`{"game":"aeroplane","botLevel":2,"invitedPlayerIds":["p_1"]}`, ""},
		{`{"game":`, "not valid JSON (it ends early)"},
		{`{"game" "x"}`, "not valid JSON at byte 9"},
		{`{} {}`, "more than one JSON value"},
		{`"aeroplane"`, "must be a JSON object of CreateMatchRequest's fields, not the string"},
		{`{"seats":2}`, `unknown field "seats" in CreateMatchRequest; did you mean "seat_count"?`},
		{`{"seatCount":2.5}`, `field "seat_count" takes an integer (int32), not the number 2.5`},
		{`{"observeOnly":"yes"}`, `field "observe_only" takes true or false`},
		{`{"game":7}`, `field "game" takes a string, not the number 7`},
		{`{"botLevel":"GREEDY"}`, `invalid value "GREEDY" for field "bot_level"; valid values: BOT_LEVEL_UNSPECIFIED`},
		{`{"turnTime":"30"}`, `field "turn_time" takes a duration`},
		{`{"invitedPlayerIds":"p_1"}`, `field "invited_player_ids" takes a JSON array`},
		{`{"invitedPlayerIds":[1]}`, `field "invited_player_ids[0]" takes a string`},
		{`{"` + strings.Repeat("z", 100) + `":1}`, `unknown field "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"… in CreateMatchRequest; its fields are game,`},
	} {
		got := explainJSON([]byte(tc.body), md, nil)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("explainJSON(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
