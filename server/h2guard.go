package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/time/rate"
)

// errTooManyResets is what a guarded connection's Read returns once the
// guard has sent the client away for resetting streams too fast.
var errTooManyResets = errors.New("h2guard: client reset too many streams")

// h2GoAwayGrace bounds how long the guard waits for grpc-go to finish the
// frame it is writing before it closes the connection without the GOAWAY.
// grpc-go flushes a frame it has begun before it waits for more work, so only
// a client that stops reading makes the guard wait this long.
const h2GoAwayGrace = time.Second

// h2DrainBytes bounds what the guard reads and discards after a GOAWAY.
const h2DrainBytes = 64 << 10

// h2Guard answers HTTP/2 rapid reset (CVE-2023-44487) on a connection that
// grpc-go's own transport serves, as net/http's HTTP/2 server does on TLS.
// grpc-go caps the handlers running on a connection at MaxConcurrentStreams,
// but a stream the client resets frees its slot at once: a client that opens
// and resets streams in a loop keeps the server starting handlers, and
// grpc-go never sends it away.
//
// The guard reads the client's frames as they pass through Read, without
// changing them. It counts the RST_STREAM frames against a token bucket and
// notes the highest stream the client opened. When the bucket is empty it
// sends GOAWAY (ENHANCE_YOUR_CALM, "too_many_resets"), discards what the
// client sends for up to a second or 64 KiB (closing a socket with bytes
// unread would reset the connection and lose the GOAWAY with it; net/http's
// server lingers the same way), and closes the connection. So that the GOAWAY never lands inside one of grpc-go's frames,
// Write follows the frames grpc-go writes too: the GOAWAY goes out at once if
// grpc-go's output ends on a frame boundary, or else right after the Write
// that ends the current frame.
type h2Guard struct {
	net.Conn
	onAbuse func(net.Addr)
	now     func() time.Time
	grace   time.Duration // h2GoAwayGrace but in tests

	// Read's own; grpc-go reads from one goroutine.
	in         h2Frames
	resets     *rate.Limiter
	lastStream uint32 // the highest stream the client opened
	abused     bool

	// wmu serialises writes to the connection: grpc-go's and the GOAWAY.
	wmu  sync.Mutex
	out  h2Frames // what grpc-go has written
	away []byte   // a GOAWAY waiting for the end of grpc-go's current frame
	sent bool     // the GOAWAY is written (or failed); grpc-go's writes are dropped

	sentCh    chan struct{} // closed once the GOAWAY is written
	gone      chan struct{} // closed by Close
	closeOnce sync.Once
}

// guardH2 wraps c, a cleartext HTTP/2 connection that grpc-go serves and
// whose first bytes are the client preface, in an h2Guard. maxStreams is the
// server's MaxConcurrentStreams. onAbuse, if not nil, is called once for each
// connection the guard sends away, from grpc-go's reading goroutine, before
// the GOAWAY is written; it must not block.
//
// The budget is a burst of 2×maxStreams resets, refilled at maxStreams resets
// per second. A call cancelled by a deadline of a second or more was open for
// that second, and at most maxStreams calls are open at once, so a client
// whose calls time out or are cancelled that way stays within the refill
// however many of them fail; the burst lets it abandon every open call at
// once, twice over. Calls cancelled sooner spend the burst: a client that
// keeps cancelling more than maxStreams calls per second, each within a
// second of its start, is sent away (a grpc-go client then reconnects).
// A rapid-reset client resets a stream as soon as it opens
// it and goes far faster: the attack measured on the node ran at about 940
// resets per second per connection, more than nine times the refill at the
// default 100 streams.
func guardH2(c net.Conn, maxStreams int, onAbuse func(net.Addr)) net.Conn {
	return newH2Guard(c, maxStreams, onAbuse)
}

func newH2Guard(c net.Conn, maxStreams int, onAbuse func(net.Addr)) *h2Guard {
	// Below 1 is HTTP/2's recommended minimum of 100. The node's "no limit"
	// (MaxInt32) is 2^20, which keeps 2×maxStreams an int on every platform.
	if maxStreams < 1 {
		maxStreams = 100
	}
	maxStreams = min(maxStreams, 1<<20)
	return &h2Guard{
		Conn:    c,
		onAbuse: onAbuse,
		now:     time.Now,
		grace:   h2GoAwayGrace,
		in:      h2Frames{preface: len(http2.ClientPreface)},
		resets:  rate.NewLimiter(rate.Limit(maxStreams), 2*maxStreams),
		sentCh:  make(chan struct{}),
		gone:    make(chan struct{}),
	}
}

// Read reads from the connection and follows the client's frames. Once the
// client has reset too many streams it returns errTooManyResets, after the
// GOAWAY is written or the connection closed.
func (g *h2Guard) Read(p []byte) (int, error) {
	if g.abused {
		return 0, errTooManyResets
	}
	n, err := g.Conn.Read(p)
	if !g.scanIn(p[:n]) {
		return n, err
	}
	g.abused = true
	if g.onAbuse != nil {
		g.onAbuse(g.RemoteAddr())
	}
	// The timer also frees a goAway that waits on a Write the client
	// blocks by not reading.
	t := time.AfterFunc(g.grace, func() { g.Close() })
	if g.goAway() {
		select {
		case <-g.sentCh:
		case <-g.gone:
		}
	}
	t.Stop()
	// Let the client read the GOAWAY before the close: a client that
	// stops sending has a second; one that goes on flooding is cut off
	// after h2DrainBytes (its GOAWAY may then be lost to the reset).
	_ = g.Conn.SetReadDeadline(time.Now().Add(g.grace))
	_, _ = io.Copy(io.Discard, io.LimitReader(g.Conn, h2DrainBytes))
	g.Close()
	return 0, errTooManyResets
}

// scanIn follows the client's frames in p and reports whether a reset in
// them is over the budget; it stops there.
func (g *h2Guard) scanIn(p []byte) (abused bool) {
	for len(p) > 0 {
		n, h, ok := g.in.next(p)
		p = p[n:]
		if !ok {
			continue
		}
		switch h.Type {
		case http2.FrameHeaders:
			g.lastStream = max(g.lastStream, h.StreamID)
		case http2.FrameRSTStream:
			if !g.resets.AllowN(g.now(), 1) {
				return true
			}
		}
	}
	return false
}

// goAway writes the GOAWAY and closes the connection if grpc-go's output is
// on a frame boundary. Otherwise it leaves the GOAWAY to the Write that ends
// grpc-go's current frame and reports that it is pending.
func (g *h2Guard) goAway() (pending bool) {
	var b bytes.Buffer
	// Writing to a bytes.Buffer does not fail.
	_ = http2.NewFramer(&b, nil).WriteGoAway(g.lastStream, http2.ErrCodeEnhanceYourCalm, []byte("too_many_resets"))
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if g.sent {
		return false
	}
	g.away = b.Bytes()
	if !g.out.boundary() {
		return true
	}
	g.sendAwayLocked()
	return false
}

// sendAwayLocked writes the pending GOAWAY; Read closes the connection.
func (g *h2Guard) sendAwayLocked() {
	_, _ = g.Conn.Write(g.away)
	g.away, g.sent = nil, true
	close(g.sentCh)
}

// Write writes grpc-go's bytes and follows its frames. With a GOAWAY
// pending it writes p only up to the end of the current frame, then the
// GOAWAY. Once the GOAWAY is out, grpc-go's writes are dropped: the client
// has been sent away, and the connection stays open only for it to read
// that (grpc-go ends the connection when Read fails).
func (g *h2Guard) Write(p []byte) (int, error) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if g.sent {
		return len(p), nil
	}
	k := len(p)
	if g.away != nil {
		k = g.out.toBoundary(p)
	}
	n, err := g.Conn.Write(p[:k])
	g.out.skip(p[:n])
	if err != nil || g.away == nil || !g.out.boundary() {
		return n, err
	}
	g.sendAwayLocked()
	return len(p), nil
}

// Close closes the connection; a Read waiting for a pending GOAWAY returns.
func (g *h2Guard) Close() error {
	g.closeOnce.Do(func() { close(g.gone) })
	return g.Conn.Close()
}

// h2Frames follows the frame boundaries of one direction of an HTTP/2
// connection from the bytes that pass, in whatever pieces they come.
type h2Frames struct {
	preface int // bytes of the client preface still to come
	hdr     [9]byte
	nhdr    int    // bytes of hdr seen so far
	payload uint32 // payload bytes of the current frame still to come
	// inBlock is true inside a header block that CONTINUATION frames carry
	// on: no other frame may come between them.
	inBlock bool
}

// boundary reports whether the bytes so far end where another frame may
// begin.
func (f *h2Frames) boundary() bool {
	return f.preface == 0 && f.nhdr == 0 && f.payload == 0 && !f.inBlock
}

// next consumes p up to the end of the preface, of a frame header or of a
// payload, whichever comes first. It returns the bytes consumed and, if
// they complete a frame header, that header.
func (f *h2Frames) next(p []byte) (n int, h http2.FrameHeader, ok bool) {
	switch {
	case f.preface > 0:
		n = min(f.preface, len(p))
		f.preface -= n
		return n, h, false
	case f.payload > 0:
		n = len(p)
		if uint64(n) > uint64(f.payload) {
			n = int(f.payload)
		}
		f.payload -= uint32(n)
		return n, h, false
	}
	n = copy(f.hdr[f.nhdr:], p)
	f.nhdr += n
	if f.nhdr < len(f.hdr) {
		return n, h, false
	}
	f.nhdr = 0
	h = http2.FrameHeader{
		Length:   uint32(f.hdr[0])<<16 | uint32(f.hdr[1])<<8 | uint32(f.hdr[2]),
		Type:     http2.FrameType(f.hdr[3]),
		Flags:    http2.Flags(f.hdr[4]),
		StreamID: binary.BigEndian.Uint32(f.hdr[5:]) & (1<<31 - 1),
	}
	f.payload = h.Length
	switch h.Type {
	case http2.FrameHeaders, http2.FramePushPromise, http2.FrameContinuation:
		f.inBlock = !h.Flags.Has(http2.FlagHeadersEndHeaders)
	}
	return n, h, true
}

// skip consumes p.
func (f *h2Frames) skip(p []byte) {
	for len(p) > 0 {
		n, _, _ := f.next(p)
		p = p[n:]
	}
}

// toBoundary returns how many bytes of p it takes to reach the next
// boundary, or len(p) if p ends before it.
func (f *h2Frames) toBoundary(p []byte) int {
	probe, k := *f, 0
	for k < len(p) && !probe.boundary() {
		n, _, _ := probe.next(p[k:])
		k += n
	}
	return k
}
