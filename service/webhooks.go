package service

import (
	"context"
	"time"

	"github.com/hangarhq/hangar/internal/notice"
)

// Webhook headers (see package notice).
const (
	SignatureHeader   = notice.SignatureHeader
	IdempotencyHeader = notice.IdempotencyHeader
)

// WebhookOptions configure the delivery of notices to an app backend (see
// package notice).
type WebhookOptions = notice.WebhookOptions

// WebhookObserver is told of webhook deliveries (metrics): an Observer
// that implements it gets them.
type WebhookObserver = notice.WebhookObserver

// Sign returns the Hangar-Signature header of body sent at t with secret.
func Sign(secret string, t time.Time, body []byte) string { return notice.Sign(secret, t, body) }

// present reports whether player holds a live stream on this node or, by
// the shared presence record, on another (social.Presence.Watched); when
// the record cannot be read, the player counts as absent, so that the
// notice is delivered.
func (s *Service) present(ctx context.Context, player string) bool {
	if s.limits.Watching(player) {
		return true
	}
	on, err := s.presence.Watched(ctx, player)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("webhook: read presence", "err", err)
	}
	return on
}
