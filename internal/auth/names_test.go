package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/fault"
)

func TestCheckDisplayName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"Ada", true},
		{"Zoë", true},       // a precomposed letter
		{"Zoe\u0308", true}, // the same with a combining diaeresis
		{"हिन्दी", true},    // Devanagari: vowel signs and a virama on letters
		{"ภาษาไทย", true},   // Thai
		{"王小明", true},       // Han
		{"🛩️ pilot", true},  // emoji with a variation selector
		{"  Ada  ", true},   // spaces around a name that shows
		{strings.Repeat("a", 64), true},
		{"", false},
		{"   ", false},    // spaces only
		{"\u3164", false}, // Hangul filler
		{"\u3164 \u115F\u1160", false},
		{"\uFFA0\u2800", false},                    // halfwidth filler, blank Braille
		{"\u3000", false},                          // an ideographic space is not printable here
		{"\u200B", false},                          // zero width space
		{"a\u0301\u0302\u0303\u0304\u0305", false}, // five marks on one letter
		{"\u0301\u0301", false},                    // marks on nothing
		{"Ada\x00", false},
		{"a\nb", false},
		{string([]byte{0xff}), false},
		{strings.Repeat("a", 65), false},
	} {
		err := CheckDisplayName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("%q: %v is not invalid argument", tc.name, err)
		}
	}
}
