// Package phrase is the phrasebook of Hangar's clients: what just happened
// in a match, in plain English. The phrases are data (phrases.json), so
// the terminal client (play/, through this package) and the web client
// (web/app, which imports the same file into its bundle) say the same
// thing in the same words, and a change of wording is made once.
//
// A phrase is a template with named places: "{who} rolls {die}". The
// caller names each seat, plane and square (with colour on a terminal);
// the phrasebook only orders the words.
package phrase

import (
	_ "embed"
	"encoding/json"
	"strings"
)

//go:embed phrases.json
var raw []byte

// book is phrases.json, read once.
var book = func() map[string]string {
	m := map[string]string{}
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("phrase: phrases.json: " + err.Error()) // embedded, and tested
	}
	return m
}()

// Has reports whether the phrasebook has a phrase named key.
func Has(key string) bool {
	_, ok := book[key]
	return ok
}

// Say fills the phrase named key with args, given as name, value pairs:
// Say("aeroplane.rolled", "who", "Red", "die", "6") is "Red rolls 6". A
// place without a value stays as written ("{die}"); a key the phrasebook
// lacks comes back as itself, so a missing phrase shows, never panics.
func Say(key string, args ...string) string {
	p, ok := book[key]
	if !ok {
		return key
	}
	if len(args) == 0 {
		return p
	}
	pairs := make([]string, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, "{"+args[i]+"}", args[i+1])
	}
	return strings.NewReplacer(pairs...).Replace(p)
}
