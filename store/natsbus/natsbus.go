// Package natsbus carries the notifications between the nodes sharing a
// store — "match M reached version N" (store.Feed) and revoked sessions
// (store.RevocationFeed) — over NATS JetStream instead of Postgres's
// LISTEN/NOTIFY. It is the only importer of nats.go.
//
// The bus only wakes: the store stays the source of truth. A node that
// misses notifications is told so (onGap) and re-reads the store, and the
// service's poll and its watchers' reads by sequence number deliver every
// event whatever the bus does. So the bus is built for speed and for
// telling the truth about gaps, not for durability:
//
//   - Each kind of notification has a stream of its own (<prefix>_changes
//     on subject <prefix>.changes, <prefix>_revocations on
//     <prefix>.revocations), so that a stream's sequence numbers count one
//     kind's messages without holes: a hole seen by a listener is a gap.
//   - The streams keep their messages in memory, for a minute (limits
//     retention, 64 MiB at most, oldest discarded). A restarted NATS server
//     comes back with empty streams, which every listener sees as a gap;
//     file storage would only keep notifications that the store holds
//     anyway, at a disk write per batch. In a NATS cluster the streams
//     can be replicated (Config.Replicas): losing a server then loses no
//     notification, and the listeners resume without a gap.
//   - Publishing waits for the stream's acknowledgement, so a publish that
//     fails is known (the service publishes the changes again).
//   - Each Listen is an ephemeral consumer without acks, created from the
//     stream's end on the first connection. After a reconnection it resumes
//     at the sequence after the last one it saw when the stream still holds
//     it (nothing was missed: no gap); otherwise — the stream was recreated
//     or has dropped what was not yet read — it starts at the end and calls
//     onGap, as it does for any hole in the sequence.
//
// A node starts whether or not NATS answers: the connection is retried in
// the background for as long as the node runs, and the node meanwhile
// relies on its poll, as it would with a lost notification.
package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hangarhq/hangar/store"
)

var (
	_ store.Feed           = (*Bus)(nil)
	_ store.RevocationFeed = (*Bus)(nil)
)

// ErrDisconnected is returned by the publishers while the bus has no
// connection to NATS.
var ErrDisconnected = errors.New("natsbus: not connected to NATS")

// DefaultPrefix names the streams and subjects of a bus whose Config
// names none.
const DefaultPrefix = "hangar"

// Defaults of the streams the bus creates.
const (
	// DefaultMaxAge is how long a stream keeps a notification: long enough
	// for a node to resume after a short break in its connection, short
	// enough that a stream stays small.
	DefaultMaxAge = time.Minute
	// maxBytes bounds a stream's memory.
	maxBytes = 64 << 20
	// MaxReplicas is the most replicas NATS gives a stream.
	MaxReplicas = 5
)

const (
	// maxPayload keeps a message of changes well under NATS's default
	// limit (1 MiB).
	maxPayload = 64 << 10
	// publishWait is how long a publisher waits for a broken connection to
	// come back before it returns ErrDisconnected.
	publishWait = time.Second
	// requestTimeout bounds each request to NATS (publish, stream and
	// consumer management).
	requestTimeout = 5 * time.Second
)

// Config configures a Bus.
type Config struct {
	// URL is the NATS server, nats://host:port (or tls://…), or several
	// separated by commas; user:password@ in a URL authenticates.
	URL string
	// Prefix names the streams (<prefix>_changes, <prefix>_revocations)
	// and subjects (<prefix>.changes, <prefix>.revocations); deployments
	// sharing a NATS server keep apart by it. Default DefaultPrefix.
	Prefix string
	// MaxAge is how long the streams keep a notification (default
	// DefaultMaxAge). It applies when the bus creates a stream.
	MaxAge time.Duration
	// Replicas is how many servers of a NATS cluster hold each stream
	// (1 to 5; default 1). It applies when the bus creates a stream; a
	// stream that exists already keeps its own, with a warning in the log
	// when they differ.
	Replicas int
	// Name names the connection to the NATS server (its monitoring shows
	// it).
	Name string
	// Log takes the connection's changes (lost, back); default
	// slog.Default().
	Log *slog.Logger
}

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// CheckURL returns an error unless u is a list of NATS server URLs
// (nats://, tls://, ws:// or wss://, separated by commas).
func CheckURL(u string) error {
	if strings.TrimSpace(u) == "" {
		return errors.New("natsbus: no NATS URL")
	}
	for s := range strings.SplitSeq(u, ",") {
		p, err := url.Parse(strings.TrimSpace(s))
		if err != nil || p.Host == "" {
			return fmt.Errorf("natsbus: %q is not a NATS URL (nats://host:port)", s)
		}
		switch p.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("natsbus: %q is not a NATS URL (nats://host:port)", s)
		}
	}
	return nil
}

// topic is one kind of notification: its stream and subject.
type topic struct {
	stream, subject, desc string
}

// Bus is one node's connection to the NATS bus. It implements store.Feed
// and store.RevocationFeed.
type Bus struct {
	cfg         Config
	log         *slog.Logger
	nc          *nats.Conn
	js          jetstream.JetStream
	changes     topic
	revocations topic

	// warnedReplicas is set once the log has said that a stream's
	// replicas differ from the configured ones.
	warnedReplicas atomic.Bool

	mu sync.Mutex
	// event is closed, and replaced, whenever the connection is lost or
	// comes back: listeners then re-create their consumers.
	event chan struct{}
}

// Open checks cfg and starts connecting to NATS. It returns at once,
// connected or not: the connection is retried in the background until
// Close. It returns an error only for a bad Config.
func Open(cfg Config) (*Bus, error) {
	if err := CheckURL(cfg.URL); err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if !prefixRE.MatchString(cfg.Prefix) {
		return nil, fmt.Errorf("natsbus: prefix %q: use letters, digits, - and _", cfg.Prefix)
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Replicas < 1 || cfg.Replicas > MaxReplicas {
		return nil, fmt.Errorf("natsbus: %d replicas: a stream has 1 to %d", cfg.Replicas, MaxReplicas)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	b := &Bus{cfg: cfg, log: cfg.Log, event: make(chan struct{}),
		changes: topic{stream: cfg.Prefix + "_changes", subject: cfg.Prefix + ".changes",
			desc: "Hangar: match M reached version N (wake-ups; the store is the truth)"},
		revocations: topic{stream: cfg.Prefix + "_revocations", subject: cfg.Prefix + ".revocations",
			desc: "Hangar: revoked sessions (wake-ups; the store is the truth)"}}
	nc, err := nats.Connect(cfg.URL,
		nats.Name(cfg.Name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		// A server that vanished without closing the connection is noticed
		// within about 20 s.
		nats.PingInterval(10*time.Second),
		nats.MaxPingsOutstanding(2),
		// Publishes fail at once while disconnected (see ready) rather than
		// being buffered and sent late.
		nats.ReconnectBufSize(-1),
		nats.ConnectHandler(func(*nats.Conn) {
			b.log.Info("nats bus connected", "url", redact(cfg.URL))
			b.changed()
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			b.log.Info("nats bus reconnected", "url", redact(cfg.URL))
			b.changed()
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if !nc.IsClosed() { // not our own Close
				b.log.Warn("nats bus disconnected: the poll delivers meanwhile", "err", err)
			}
			b.changed()
		}),
		nats.ClosedHandler(func(*nats.Conn) { b.changed() }),
	)
	if err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	if !nc.IsConnected() {
		b.log.Warn("nats bus not reachable yet: retrying in the background; the poll delivers meanwhile", "url", redact(cfg.URL))
	}
	b.nc = nc
	if b.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	return b, nil
}

// redact drops the passwords of a URL list, for the log.
func redact(u string) string {
	var out []string
	for s := range strings.SplitSeq(u, ",") {
		if p, err := url.Parse(strings.TrimSpace(s)); err == nil {
			out = append(out, p.Redacted())
		}
	}
	return strings.Join(out, ",")
}

// Close closes the connection; listeners return when their contexts end.
func (b *Bus) Close() error {
	b.nc.Close()
	return nil
}

// Connected says whether the bus has a connection to NATS now.
func (b *Bus) Connected() bool { return b.nc.IsConnected() }

// Server is the URL of the NATS server the bus is connected to now,
// without credentials; empty while it is not connected.
func (b *Bus) Server() string {
	if !b.nc.IsConnected() {
		return ""
	}
	return b.nc.ConnectedUrlRedacted()
}

// changed signals a connection event to the waiting listeners.
func (b *Bus) changed() {
	b.mu.Lock()
	close(b.event)
	b.event = make(chan struct{})
	b.mu.Unlock()
}

// events returns the channel closed at the next connection event.
func (b *Bus) events() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.event
}

// ready waits (up to publishWait) for a connection.
func (b *Bus) ready(ctx context.Context) error {
	if b.nc.IsConnected() {
		return nil
	}
	deadline := time.NewTimer(publishWait)
	defer deadline.Stop()
	for {
		ev := b.events()
		if b.nc.IsConnected() {
			return nil
		}
		if b.nc.IsClosed() {
			return ErrDisconnected
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return ErrDisconnected
		case <-ev:
		}
	}
}

// Publish implements store.Feed: the changes go out as JSON arrays of
// store.Change, several to a message, each message acknowledged by the
// stream. It returns ErrDisconnected while NATS is out of reach.
func (b *Bus) Publish(ctx context.Context, changes []store.Change) error {
	if len(changes) == 0 {
		return nil
	}
	buf := []byte{'['}
	for _, c := range changes {
		item, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("natsbus: %w", err)
		}
		if len(buf) > 1 && len(buf)+len(item)+1 > maxPayload {
			if err := b.publish(ctx, b.changes, append(buf, ']')); err != nil {
				return err
			}
			buf = []byte{'['}
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, item...)
	}
	return b.publish(ctx, b.changes, append(buf, ']'))
}

// PublishRevocation implements store.RevocationFeed: r as JSON, one
// message, acknowledged by the stream.
func (b *Bus) PublishRevocation(ctx context.Context, r store.Revocation) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	return b.publish(ctx, b.revocations, data)
}

func (b *Bus) publish(ctx context.Context, t topic, data []byte) error {
	if err := b.ready(ctx); err != nil {
		return err
	}
	msg := &nats.Msg{Subject: t.subject, Data: data}
	for try := 0; ; try++ {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err := b.js.PublishMsg(rctx, msg, jetstream.WithExpectStream(t.stream))
		cancel()
		if err == nil {
			return nil
		}
		// No stream yet (no node has listened since NATS started): make it
		// and publish again.
		if try == 0 && (errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders)) {
			if _, serr := b.stream(ctx, t); serr == nil {
				continue
			}
		}
		return fmt.Errorf("natsbus: publish to %s: %w", t.subject, err)
	}
}

// stream returns t's stream, creating it if it does not exist.
func (b *Bus) stream(ctx context.Context, t topic) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	s, err := b.js.Stream(ctx, t.stream)
	if err == nil {
		if got := s.CachedInfo().Config.Replicas; got != b.cfg.Replicas && b.warnedReplicas.CompareAndSwap(false, true) {
			b.log.Warn("nats bus: the stream exists with another number of replicas: it is used as it is",
				"stream", t.stream, "replicas", got, "configured", b.cfg.Replicas)
		}
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return s, err
	}
	s, err = b.js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        t.stream,
		Description: t.desc,
		Subjects:    []string{t.subject},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.MemoryStorage,
		Discard:     jetstream.DiscardOld,
		MaxAge:      b.cfg.MaxAge,
		MaxBytes:    maxBytes,
		Replicas:    b.cfg.Replicas,
	})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // another node made it first
		return b.js.Stream(ctx, t.stream)
	}
	return s, err
}

// Listen implements store.Feed (see the package doc for when onGap comes).
// It returns when ctx ends.
func (b *Bus) Listen(ctx context.Context, onChange func(store.Change), onGap func()) error {
	return b.listen(ctx, b.changes, func(data []byte) error {
		var cs []store.Change
		if err := json.Unmarshal(data, &cs); err != nil {
			return err
		}
		for _, c := range cs {
			onChange(c)
		}
		return nil
	}, onGap)
}

// ListenRevocations implements store.RevocationFeed like Listen.
func (b *Bus) ListenRevocations(ctx context.Context, onRevoke func(store.Revocation), onGap func()) error {
	return b.listen(ctx, b.revocations, func(data []byte) error {
		var r store.Revocation
		if err := json.Unmarshal(data, &r); err != nil {
			return err
		}
		onRevoke(r)
		return nil
	}, onGap)
}

// cursor is where a listener stands in a stream: the stream (by its
// creation time: a recreated stream numbers from 1 again) and the last
// sequence number it handled.
type cursor struct {
	mu      sync.Mutex
	created time.Time
	last    uint64
	// gen numbers the listener's consumers: a message of an earlier one,
	// arriving late, is dropped.
	gen int
}

func (b *Bus) listen(ctx context.Context, t topic, handle func([]byte) error, onGap func()) error {
	cur := &cursor{}
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		ev := b.events()
		if !b.nc.IsConnected() {
			select {
			case <-ctx.Done():
			case <-ev:
			}
			continue
		}
		err := b.consume(ctx, t, cur, ev, handle, onGap)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			b.log.Warn("nats bus listener", "stream", t.stream, "err", err)
			select { // the connection is up but something failed: pause
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
	}
	return ctx.Err()
}

// consume runs one consumer of t's stream until ctx ends, the connection
// changes (ev closes) or the consumer fails; it returns nil in the first
// two cases.
func (b *Bus) consume(ctx context.Context, t topic, cur *cursor, ev <-chan struct{}, handle func([]byte) error, onGap func()) error {
	s, err := b.stream(ctx, t)
	if err != nil {
		return err
	}
	info := s.CachedInfo()
	cur.mu.Lock()
	cur.gen++
	gen := cur.gen
	// Resume after the last message handled when the stream is the same
	// one and still holds everything after it; else start at its end.
	resume := !cur.created.IsZero() && info.Created.Equal(cur.created) &&
		info.State.FirstSeq <= cur.last+1 && cur.last <= info.State.LastSeq
	if !resume {
		cur.created, cur.last = info.Created, info.State.LastSeq
	}
	start := cur.last + 1
	cur.mu.Unlock()

	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	cons, err := s.CreateConsumer(cctx, jetstream.ConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   start,
		AckPolicy:     jetstream.AckNonePolicy,
		Description:   b.cfg.Name,
	})
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		// Best effort: an ephemeral consumer without pulls goes away by
		// itself after a few seconds anyway.
		if b.nc.IsConnected() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.DeleteConsumer(dctx, cons.CachedInfo().Name)
			cancel()
		}
	}()
	failed := make(chan error, 1)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		md, err := m.Metadata()
		if err != nil {
			return
		}
		cur.mu.Lock()
		defer cur.mu.Unlock()
		seq := md.Sequence.Stream
		if gen != cur.gen || seq <= cur.last {
			return // a replaced consumer's, or one already handled
		}
		if seq != cur.last+1 {
			onGap() // the stream dropped messages this node had not read
		}
		cur.last = seq
		if err := handle(m.Data()); err != nil {
			b.log.Warn("nats bus: undecodable message", "stream", t.stream, "seq", seq, "err", err)
			onGap()
		}
	}, jetstream.PullHeartbeat(2*time.Second), jetstream.PullExpiry(10*time.Second),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
				errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConnectionClosed) {
				select {
				case failed <- err:
				default:
				}
			}
		}))
	if err != nil {
		return err
	}
	defer cc.Stop()
	if !resume {
		// Anything published before the consumer started was missed.
		cur.mu.Lock()
		if gen == cur.gen {
			onGap()
		}
		cur.mu.Unlock()
	}
	select {
	case <-ctx.Done():
		return nil
	case <-ev:
		return nil
	case err := <-failed:
		return err
	}
}

// DeleteStreams removes the bus's streams and what they hold (tests, and
// an operator retiring a prefix); a stream that does not exist is no
// error. Listeners still running re-create them.
func (b *Bus) DeleteStreams(ctx context.Context) error {
	if err := b.ready(ctx); err != nil {
		return err
	}
	for _, t := range []topic{b.changes, b.revocations} {
		if err := b.js.DeleteStream(ctx, t.stream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("natsbus: delete %s: %w", t.stream, err)
		}
	}
	return nil
}
