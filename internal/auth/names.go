package auth

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/hangarhq/hangar/internal/fault"
)

// CheckDisplayName accepts 1 to 64 printable characters that show: at least
// one letter, digit, punctuation or symbol that is not drawn blank (the
// Hangul fillers, the blank Braille pattern), each carrying at most
// maxMarks combining marks (scripts such as Devanagari or Thai put two or
// three on a letter; a "zalgo" name piles up dozens). Its errors wrap fault.ErrInvalid.
func CheckDisplayName(n string) error {
	if n == "" || utf8.RuneCountInString(n) > 64 || !utf8.ValidString(n) {
		return fmt.Errorf("%w: display_name must be 1 to 64 characters of UTF-8", fault.ErrInvalid)
	}
	visible, marks := false, 0
	for _, r := range n {
		switch {
		case !unicode.IsPrint(r):
			return fmt.Errorf("%w: display_name has a non-printable character", fault.ErrInvalid)
		case unicode.Is(unicode.M, r):
			if marks++; marks > maxMarks {
				return fmt.Errorf("%w: display_name has too many combining marks on one character", fault.ErrInvalid)
			}
		default:
			marks = 0
			visible = visible || (r != ' ' && !blank[r])
		}
	}
	if !visible {
		return fmt.Errorf("%w: display_name must show at least one character", fault.ErrInvalid)
	}
	return nil
}

// maxMarks is the most combining marks a display name may stack on one
// character.
const maxMarks = 4

// blank are printable characters that are drawn as nothing.
var blank = map[rune]bool{
	'\u115F': true, // HANGUL CHOSEONG FILLER
	'\u1160': true, // HANGUL JUNGSEONG FILLER
	'\u3164': true, // HANGUL FILLER
	'\uFFA0': true, // HALFWIDTH HANGUL FILLER
	'\u2800': true, // BRAILLE PATTERN BLANK
}
