package play

import "strings"

// painter writes ANSI SGR colours, or plain text when off (NO_COLOR).
type painter struct{ on bool }

// paint wraps s in the SGR codes, resetting after it.
func (p painter) paint(s string, codes ...string) string {
	if !p.on || len(codes) == 0 || s == "" {
		return s
	}
	return "\x1b[" + strings.Join(codes, ";") + "m" + s + "\x1b[0m"
}

// colourCodes are the SGR foreground codes of the colour names the server
// suggests for seats, and of the extra ones Carcassonne's fifth seat needs.
var colourCodes = map[string]string{
	"red":     "31",
	"green":   "32",
	"yellow":  "33",
	"blue":    "34",
	"magenta": "35",
	"cyan":    "36",
	"black":   "90",
}

// fg is the foreground code of a colour name ("" for an unknown one).
func fg(colour string) string { return colourCodes[colour] }

// bg is the background code of a colour name ("" for an unknown one).
func bg(colour string) string {
	c := colourCodes[colour]
	if c == "" {
		return ""
	}
	if c == "90" {
		return "100"
	}
	return string(c[0]+1) + c[1:]
}

// onColour is the foreground that reads well on a colour's background.
func onColour(colour string) string {
	if colour == "yellow" || colour == "cyan" {
		return "30"
	}
	return "97"
}

// title is a colour name with a capital first letter.
func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
