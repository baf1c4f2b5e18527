package auth

import (
	"context"
	"time"

	"github.com/hangarhq/hangar/store"
)

type (
	playerKey struct{}
	tokenKey  struct{}
	apiKeyKey struct{}
	expiryKey struct{}
)

// Caller returns the authenticated player of a request.
func Caller(ctx context.Context) (store.Player, bool) {
	p, ok := ctx.Value(playerKey{}).(store.Player)
	return p, ok
}

// CallerToken returns the hash of the token a request was made with.
func CallerToken(ctx context.Context) []byte {
	h, _ := ctx.Value(tokenKey{}).([]byte)
	return h
}

// CallerExpiry returns when the identity provider's token a request was
// made with expires (zero for a Hangar token, whose session is re-read).
func CallerExpiry(ctx context.Context) time.Time {
	t, _ := ctx.Value(expiryKey{}).(time.Time)
	return t
}

// CallerKey returns the API key a request was made with.
func CallerKey(ctx context.Context) (store.APIKey, bool) {
	k, ok := ctx.Value(apiKeyKey{}).(store.APIKey)
	return k, ok
}

type notesKey struct{}

// Notes are what authentication learnt of a call's caller, for the access
// log: the player, the API key's id, the identity provider.
type Notes struct{ Player, APIKey, Issuer string }

// WithNotes returns a context in which authentication fills in n.
func WithNotes(ctx context.Context, n *Notes) context.Context {
	return context.WithValue(ctx, notesKey{}, n)
}

// noteCaller records the authenticated caller for the access log.
func noteCaller(ctx context.Context, p store.Player) {
	if e, ok := ctx.Value(notesKey{}).(*Notes); ok {
		e.Player = p.ID
	}
}

// noteKey records the id of the API key a call was made with.
func noteKey(ctx context.Context, id string) {
	if e, ok := ctx.Value(notesKey{}).(*Notes); ok {
		e.APIKey = id
	}
}

// noteIssuer records the identity provider whose token authenticated a
// call.
func noteIssuer(ctx context.Context, iss string) {
	if e, ok := ctx.Value(notesKey{}).(*Notes); ok {
		e.Issuer = iss
	}
}

// WithCaller returns ctx with p as its authenticated player, as
// authentication leaves it (tests and benchmarks that call handlers
// directly).
func WithCaller(ctx context.Context, p store.Player) context.Context {
	return context.WithValue(ctx, playerKey{}, p)
}
