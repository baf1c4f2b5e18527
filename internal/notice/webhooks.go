package notice

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/store"
)

// Webhooks: with a URL configured, every notice is also written to the
// store's outbox, in the append's transaction (store.Notice.Deliver), and
// delivery workers post it to the URL as JSON (a hangarv1.WebhookEvent: the
// notice, its player's external id, and whether a your-turn notice is
// superseded by the time it is sent) until the URL answers 2xx:
// at least once, retried with exponential backoff (capped), never given
// up. Each delivery carries the notice's id as its idempotency key, so the
// receiver drops repeats. Workers claim outbox rows for a lease (on
// Postgres with SKIP LOCKED, so every node's workers share the outbox); a
// worker that dies mid-delivery loses its claim when the lease passes and
// the notice is delivered again. Workers wake on this node's commits of
// notices, and poll for the rest (retries, other nodes' notices whose node
// stopped).
//
// The request is signed: the header
//
//	Hangar-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// lets the receiver check that the body came from Hangar and is recent
// (see docs/notices.md).

// Webhook headers.
const (
	SignatureHeader   = "Hangar-Signature"
	IdempotencyHeader = "Idempotency-Key"
)

// WebhookOptions configure the delivery of notices to an app backend. URL
// and Secret are required; the zero value of the rest is the production
// setting.
type WebhookOptions struct {
	URL    string
	Secret string
	// Workers deliver at once (default 4); each claims up to Batch
	// notices at a time (default 32) and posts them concurrently.
	Workers, Batch int
	// Timeout bounds one delivery (default 10s).
	Timeout time.Duration
	// MinBackoff is the wait after a first failure (default 1s), doubled
	// after each further one up to MaxBackoff (default 5m).
	MinBackoff, MaxBackoff time.Duration
	// Poll is how often an idle worker looks for notices due (default 1s).
	Poll time.Duration
	// Client replaces the HTTP client (tests).
	Client *http.Client
	// SkipPresent drops the delivery of a your-turn notice or a reminder
	// when Present says that its player holds a live stream at delivery
	// time: the app is open, so a push would only repeat what the stream
	// shows. The notice stays stored and listed.
	SkipPresent bool
	// Present reports whether a player holds a live stream on some node
	// (set by the service; nil: nobody is present).
	Present func(ctx context.Context, player string) bool
}

// WebhookObserver is told of webhook deliveries (metrics): an observer
// that implements it gets them.
type WebhookObserver interface {
	// WebhookDelivered: a notice committed lag ago was delivered.
	WebhookDelivered(lag time.Duration)
	// WebhookFailed: a delivery of a notice committed lag ago failed (it
	// will be retried).
	WebhookFailed(lag time.Duration)
	// WebhookSkipped: a notice was taken out of the outbox unsent, for
	// reason ("present").
	WebhookSkipped(reason string)
}

// Sign returns the Hangar-Signature header of body sent at t with secret.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// webhookJSON writes webhook events as REST writes messages: every field,
// zeros included, 64-bit integers as strings.
var webhookJSON = protojson.MarshalOptions{EmitUnpopulated: true}

// Webhooks are the workers that deliver notices to an app backend.
type Webhooks struct {
	o       WebhookOptions
	games   *game.Registry
	st      store.Store
	now     func() time.Time
	log     *slog.Logger
	observe WebhookObserver
	wake    chan struct{}
	// failures aggregates the failed deliveries' log lines (failures.go).
	failures *failureLog
}

// NewWebhooks returns the workers of o, for the notices of games' matches;
// obs, when it implements WebhookObserver, is told of deliveries.
func NewWebhooks(o WebhookOptions, games *game.Registry, st store.Store, now func() time.Time, log *slog.Logger, obs any) *Webhooks {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Batch <= 0 {
		o.Batch = 32
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	w := &Webhooks{o: o, st: st, now: now, log: log, wake: make(chan struct{}, o.Workers),
		failures: newFailureLog(log, o.URL, time.Minute)}
	w.observe, _ = obs.(WebhookObserver)
	return w
}

// Kick wakes an idle worker.
func (w *Webhooks) Kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// lease is how long a claim holds: a batch's deliveries run at once, each
// within the timeout.
func (w *Webhooks) lease() time.Duration { return 2*w.o.Timeout + 5*time.Second }

// Start runs the workers until ctx ends.
func (w *Webhooks) Start(ctx context.Context, wg *sync.WaitGroup) {
	for range w.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		w.failures.stop()
	}()
}

func (w *Webhooks) run(ctx context.Context) {
	t := time.NewTicker(w.o.Poll)
	defer t.Stop()
	for ctx.Err() == nil {
		now := w.now()
		ds, err := w.st.ClaimDeliveries(ctx, now, now.Add(w.lease()), w.o.Batch)
		if err != nil && ctx.Err() == nil {
			w.log.Warn("webhook: claim deliveries", "err", err)
		}
		if len(ds) > 0 {
			w.deliver(ctx, ds)
			if len(ds) == w.o.Batch {
				continue // more may be due
			}
		}
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-t.C:
		}
	}
}

// deliver posts a batch of claimed notices at once, then takes the
// delivered ones out of the outbox and sets when the others are due again.
func (w *Webhooks) deliver(ctx context.Context, ds []store.Delivery) {
	ok := make([]bool, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.skip(ctx, d.Notice) {
				ok[i] = true // taken out of the outbox unsent
				if w.observe != nil {
					w.observe.WebhookSkipped("present")
				}
				return
			}
			err := w.post(ctx, d.Notice)
			if err != nil {
				if ctx.Err() == nil {
					w.failures.failed(ID(d.Notice.Player, d.Notice.Seq), d.Attempts, err)
				}
				if w.observe != nil {
					w.observe.WebhookFailed(w.now().Sub(d.Notice.Time))
				}
				return
			}
			ok[i] = true
			if w.observe != nil {
				w.observe.WebhookDelivered(w.now().Sub(d.Notice.Time))
			}
		}()
	}
	wg.Wait()
	// What was delivered is recorded even when the node is stopping (the
	// rest's claims lapse, and they are delivered after the restart).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var done []store.NoticeKey
	for i, d := range ds {
		key := store.NoticeKey{Player: d.Notice.Player, Seq: d.Notice.Seq}
		if ok[i] {
			done = append(done, key)
			continue
		}
		if ctx.Err() != nil {
			continue
		}
		if err := w.st.RetryDelivery(sctx, key, w.now().Add(w.backoff(d.Attempts))); err != nil {
			w.log.Warn("webhook: retry delivery", "err", err) // the lease passes instead
		}
	}
	if err := w.st.Delivered(sctx, done); err != nil {
		// They stay queued and are delivered again: at least once.
		w.log.Warn("webhook: delivered", "notices", len(done), "err", err)
	}
}

// The stored kinds of a your-turn notice and a reminder (Kind).
const (
	yourTurnKind = "your_turn"
	reminderKind = "reminder"
)

// skip reports whether notice n is not to be sent: a your-turn notice
// or a reminder of a player who is present, with SkipPresent on.
func (w *Webhooks) skip(ctx context.Context, n store.Notice) bool {
	return w.o.SkipPresent && w.o.Present != nil && (n.Kind == yourTurnKind || n.Kind == reminderKind) && w.o.Present(ctx, n.Player)
}

// backoff is the wait before the next attempt after the attempts-th
// failed: MinBackoff doubled per earlier failure, capped at MaxBackoff,
// with ±20% jitter so that retries of many notices spread out.
func (w *Webhooks) backoff(attempts int) time.Duration {
	d := w.o.MinBackoff
	for i := 1; i < attempts && d < w.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, w.o.MaxBackoff)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// event is the body of notice n's delivery: n with its player's external
// id and whether it is superseded, read now.
func (w *Webhooks) event(ctx context.Context, n *hangarv1.Notice) (*hangarv1.WebhookEvent, error) {
	ext, err := w.st.ExternalID(ctx, n.GetPlayerId())
	if err != nil {
		return nil, err
	}
	ev := &hangarv1.WebhookEvent{Notice: n, ExternalId: ext}
	// A your-turn notice or a reminder is superseded once its turn has
	// passed: the match moved on from the version it names.
	version := int64(-1)
	if yt := n.GetYourTurn(); yt != nil {
		version = yt.GetVersion()
	} else if r := n.GetReminder(); r != nil {
		version = r.GetVersion()
	}
	if version >= 0 {
		m, err := w.st.Match(ctx, n.GetMatchId())
		if err != nil {
			return nil, err
		}
		ev.Superseded = m.Status != store.StatusActive || m.Version > version
	}
	return ev, nil
}

// post sends one notice.
func (w *Webhooks) post(ctx context.Context, sn store.Notice) error {
	n, err := Decode(w.games, sn)
	if err != nil {
		return err
	}
	ev, err := w.event(ctx, n)
	if err != nil {
		return err
	}
	body, err := Body(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, w.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.o.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Hangar-Webhook/1")
	req.Header.Set(IdempotencyHeader, n.GetNoticeId())
	req.Header.Set(SignatureHeader, Sign(w.o.Secret, w.now(), body))
	resp, err := w.o.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s answered %s", w.o.URL, resp.Status)
	}
	return nil
}

// Body returns the webhook body of ev, as a delivery writes it.
func Body(ev *hangarv1.WebhookEvent) ([]byte, error) { return webhookJSON.Marshal(ev) }
