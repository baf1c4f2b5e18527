package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/service"
)

// watchPlayerPath is WatchPlayer's REST path.
const watchPlayerPath = "/v1/me/notices:watch"

// restWatchPlayer serves WatchPlayer over REST as restWatch serves
// WatchMatch: newline-delimited JSON, or server-sent events whose id is
// the notice's seq (a reconnecting EventSource resumes with Last-Event-ID).
func (m *Server) restWatchPlayer(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeStatus(w, status.New(codes.Unimplemented, "WatchPlayer over REST is GET "+watchPlayerPath))
		return
	}
	after, err := restAfterSeq(r, "a notice's seq")
	if err != nil {
		writeStatus(w, status.Convert(err))
		return
	}
	req := &hangarv1.WatchPlayerRequest{AfterSeq: after}
	m.local.serve(r, hangarv1.NoticeService_WatchPlayer_FullMethodName, req, newRestWriter(m.json, w, r, func(r *hangarv1.WatchPlayerResponse) int64 { return r.GetNotice().GetSeq() }))
}

// checkWebhook checks the webhook's flags: a URL needs a secret to sign
// with, and is http or https; the secret and the skip need a URL.
func checkWebhook(o service.WebhookOptions) error {
	if o.URL == "" {
		if o.Secret != "" {
			return errors.New("--webhook-secret needs --webhook-url")
		}
		if o.SkipPresent {
			return errors.New("--webhook-skip-present needs --webhook-url")
		}
		return nil
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("--webhook-url %q is not an http or https URL", o.URL)
	}
	if o.Secret == "" {
		return errors.New("--webhook-url needs --webhook-secret (the key its requests are signed with)")
	}
	return nil
}
