package bench

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// The webhook phase (Config.Webhook): the server the bench starts posts
// every player notice of the load's matches (turns, starts, ends) to a
// receiver in the bench, which answers 200 at once and records when each
// notice id first arrived. After the load's window the bench waits for the
// outbox to drain (no new notice for a second) and reports how many
// notices arrived, at what rate, and their lag: receipt minus the notice's
// time, which is its command's commit time on the server's clock (the
// same machine's).

// webhookSecret signs the bench's deliveries (the receiver does not check
// them: the tests do).
const webhookSecret = "hangar-bench"

// WebhookResult is what the receiver of the server's webhook got.
type WebhookResult struct {
	// Notices counts the distinct notices received; Duplicates the
	// deliveries of a notice received already.
	Notices    int64 `json:"notices"`
	Duplicates int64 `json:"duplicates"`
	// Seconds runs from the first receipt to the last; PerSec is Notices
	// over it.
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"per_sec"`
	// Lag is receipt minus the notice's commit time.
	Lag LatencyStats `json:"lag"`
	// DrainSeconds is how long the last notice arrived after the load's
	// window closed.
	DrainSeconds float64 `json:"drain_seconds"`
}

// hookReceiver is the bench's webhook endpoint.
type hookReceiver struct {
	srv *http.Server
	url string

	mu          sync.Mutex
	seen        map[string]bool
	lags        []time.Duration
	dups        int64
	first, last time.Time
}

func startReceiver() (*hookReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &hookReceiver{seen: map[string]bool{}, url: "http://" + l.Addr().String() + "/hook"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(req.Body)
	var n struct {
		Time time.Time `json:"time"`
	}
	if err == nil {
		err = json.Unmarshal(body, &n)
	}
	if err != nil {
		http.Error(w, "bad notice", http.StatusBadRequest)
		return
	}
	key := req.Header.Get("Idempotency-Key")
	r.mu.Lock()
	if r.seen[key] {
		r.dups++
	} else {
		r.seen[key] = true
		r.lags = append(r.lags, now.Sub(n.Time))
		if r.first.IsZero() {
			r.first = now
		}
		r.last = now
	}
	r.mu.Unlock()
}

// drain waits until no notice has arrived for quiet (at most limit after
// the window closed at end), and returns the result.
func (r *hookReceiver) drain(ctx context.Context, end time.Time, quiet, limit time.Duration) *WebhookResult {
	for time.Since(end) < limit && ctx.Err() == nil {
		r.mu.Lock()
		last := r.last
		r.mu.Unlock()
		if time.Since(last) >= quiet && time.Since(end) >= quiet {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &WebhookResult{Notices: int64(len(r.seen)), Duplicates: r.dups, Lag: stats(r.lags)}
	if !r.first.IsZero() {
		res.Seconds = r.last.Sub(r.first).Seconds()
		res.DrainSeconds = max(0, r.last.Sub(end).Seconds())
	}
	if res.Seconds > 0 {
		res.PerSec = float64(res.Notices) / res.Seconds
	}
	return res
}

func (r *hookReceiver) close() { r.srv.Close() }
