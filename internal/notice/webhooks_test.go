package notice

import (
	"testing"
	"time"
)

// TestWebhookBackoff: the wait after the n-th failed attempt doubles from
// MinBackoff up to MaxBackoff, within ±20%.
func TestWebhookBackoff(t *testing.T) {
	w := NewWebhooks(WebhookOptions{URL: "http://x", Secret: "s", MinBackoff: time.Second, MaxBackoff: time.Minute}, nil, nil, time.Now, nil, nil)
	for _, tc := range []struct {
		attempts int
		base     time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {6, 32 * time.Second}, {7, time.Minute}, {50, time.Minute}} {
		for range 20 {
			if d := w.backoff(tc.attempts); d < tc.base*8/10 || d > tc.base*12/10 {
				t.Fatalf("backoff after %d attempts: %v, want %v ±20%%", tc.attempts, d, tc.base)
			}
		}
	}
}

// TestSign: the signature is HMAC-SHA256 over "<t>.<body>" (the README's
// example verifies it).
func TestSign(t *testing.T) {
	got := Sign("secret", time.Unix(1700000000, 0), []byte(`{"a":1}`))
	const want = "t=1700000000,v1=" // followed by 64 hex digits
	if len(got) != len(want)+64 || got[:len(want)] != want {
		t.Fatalf("Sign = %q", got)
	}
	if Sign("secret", time.Unix(1700000000, 0), []byte(`{"a":2}`)) == got || Sign("other", time.Unix(1700000000, 0), []byte(`{"a":1}`)) == got {
		t.Fatal("the signature does not depend on the body and the key")
	}
}
