package auth

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Moderation is what the AdminService does to players, for an API key of
// scope server or admin: it signs them out, suspends, reinstates and
// deletes them (deletion.go), and writes each act, and each act on a
// match, to the audit log. Which player a key may name is checked by
// Authenticator.Target.
type Moderation struct {
	st  store.Store
	log *slog.Logger
	now func() time.Time
	// revoke ends sessions on this node and announces it to the others
	// (Authenticator.revoke).
	revoke  func(context.Context, store.Revocation)
	deleted *DeletedSet
}

// SignOutPlayer ends every session of player p on every node and returns
// how many it ended.
func (m *Moderation) SignOutPlayer(ctx context.Context, p store.Player) (int, error) {
	n, err := m.st.RevokePlayerTokens(ctx, p.ID, m.now().UTC())
	if err != nil {
		return 0, err
	}
	m.revoke(ctx, store.Revocation{Player: p.ID})
	m.audit(ctx, "sign_out_player", p, "", n)
	return n, nil
}

// SuspendPlayer suspends player p for reason: its sessions end on every
// node and it gets no new token until reinstated. It returns how many
// sessions it ended.
func (m *Moderation) SuspendPlayer(ctx context.Context, p store.Player, reason string) (int, error) {
	if err := CheckReason(reason); err != nil {
		return 0, err
	}
	n, err := m.st.SuspendPlayer(ctx, p.ID, m.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return 0, err
	}
	m.revoke(ctx, store.Revocation{Player: p.ID})
	m.audit(ctx, "suspend_player", p, reason, n)
	return n, nil
}

// ReinstatePlayer lifts player p's suspension.
func (m *Moderation) ReinstatePlayer(ctx context.Context, p store.Player, reason string) error {
	if err := CheckReason(reason); err != nil {
		return err
	}
	if err := m.st.ReinstatePlayer(ctx, p.ID); err != nil {
		return err
	}
	m.audit(ctx, "reinstate_player", p, reason, 0)
	return nil
}

// AuditMatch writes the audit log's record of an action on match id by
// the caller's API key.
func (m *Moderation) AuditMatch(ctx context.Context, action, id, reason string) {
	if m.log == nil {
		return
	}
	k, _ := CallerKey(ctx)
	m.log.LogAttrs(ctx, slog.LevelInfo, "audit", slog.String("action", action), slog.String("api_key", k.ID),
		slog.String("api_key_scopes", strings.Join(k.Scopes, " ")), slog.String("match", id), slog.String("reason", reason))
}

// audit writes the audit log's record of an action on player p by the
// caller's API key.
func (m *Moderation) audit(ctx context.Context, action string, p store.Player, reason string, revoked int) {
	if m.log == nil {
		return
	}
	k, _ := CallerKey(ctx)
	attrs := []slog.Attr{slog.String("action", action), slog.String("api_key", k.ID),
		slog.String("api_key_scopes", strings.Join(k.Scopes, " ")), slog.String("player", p.ID)}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	if revoked > 0 {
		attrs = append(attrs, slog.Int("revoked", revoked))
	}
	m.log.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
}
