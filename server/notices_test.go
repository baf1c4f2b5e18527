package server

import (
	"testing"

	"github.com/hangarhq/hangar/service"
)

// TestCheckWebhook: the webhook's flags are refused when one needs another
// that is missing, and accepted when complete or all off.
func TestCheckWebhook(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    service.WebhookOptions
		ok   bool
	}{
		{"off", service.WebhookOptions{}, true},
		{"complete", service.WebhookOptions{URL: "https://backend.example/hook", Secret: "s", SkipPresent: true}, true},
		{"secret without URL", service.WebhookOptions{Secret: "s"}, false},
		{"skip without URL", service.WebhookOptions{SkipPresent: true}, false},
		{"URL without secret", service.WebhookOptions{URL: "https://backend.example/hook"}, false},
		{"not http", service.WebhookOptions{URL: "ftp://backend.example/hook", Secret: "s"}, false},
	} {
		if err := checkWebhook(tc.o); (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
}
