// Package ident makes the random identifiers and secrets Hangar hands out
// (players, matches, tickets, tokens, API keys, invite codes) and the hash
// under which a secret is stored.
//
// It also rejects what cannot be one of its identifiers (Check).
//
// ident imports fault and nothing else of Hangar's.
package ident

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hangarhq/hangar/internal/fault"
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// New returns a random identifier with the given prefix.
func New(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + strings.ToLower(b32.EncodeToString(b[:]))
}

// Secret returns a fresh secret with the given prefix and the hash the
// store keeps.
func Secret(prefix string) (string, []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := prefix + strings.ToLower(b32.EncodeToString(b[:]))
	return tok, Hash(tok)
}

// Hash is the hash under which the store keeps secret tok.
func Hash(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

// Derived is the identifier with the given prefix made from b (a hash of
// what determines it), in the alphabet of New.
func Derived(prefix string, b []byte) string {
	return prefix + strings.ToLower(b32.EncodeToString(b))
}

// Check rejects ids that cannot be ours, before any store lookup; its
// errors wrap fault.ErrInvalid.
func Check(field, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is required", fault.ErrInvalid, field)
	}
	if len(id) > 64 || !Printable(id) {
		return fmt.Errorf("%w: %s is malformed", fault.ErrInvalid, field)
	}
	return nil
}

// Printable reports whether s is valid UTF-8 without control characters
// (which no id of ours has, and Postgres text cannot hold NUL).
func Printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// CheckRequestID validates a client request id.
func CheckRequestID(id string, required bool) error {
	if id == "" && !required {
		return nil
	}
	if id == "" || len(id) > 128 || !Printable(id) {
		return fmt.Errorf("%w: request_id must be 1 to 128 bytes of printable UTF-8", fault.ErrInvalid)
	}
	return nil
}
