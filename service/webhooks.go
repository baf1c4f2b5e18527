package service

import (
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
