package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/testclock"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// h2GuardConn is a connection that serves scripted reads and records what
// is written to it.
type h2GuardConn struct {
	net.Conn // nil: the guard calls only the methods below
	reads    [][]byte
	written  bytes.Buffer
	closed   atomic.Bool
}

func (c *h2GuardConn) Read(p []byte) (int, error) {
	if len(c.reads) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.reads[0])
	if c.reads[0] = c.reads[0][n:]; len(c.reads[0]) == 0 {
		c.reads = c.reads[1:]
	}
	return n, nil
}

func (c *h2GuardConn) Write(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.written.Write(p)
}

func (c *h2GuardConn) Close() error { c.closed.Store(true); return nil }

func (c *h2GuardConn) SetReadDeadline(time.Time) error { return nil }

func (c *h2GuardConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242}
}

// h2FrameStream builds a byte stream of HTTP/2 frames and notes where each frame
// ends.
type h2FrameStream struct {
	buf  bytes.Buffer
	fr   *http2.Framer
	ends []int // offsets at which another frame may begin
}

func newH2FrameStream(preface bool) *h2FrameStream {
	s := &h2FrameStream{}
	s.fr = http2.NewFramer(&s.buf, nil)
	if preface {
		s.buf.WriteString(http2.ClientPreface)
	}
	s.ends = append(s.ends, s.buf.Len())
	return s
}

// add writes a frame with write; end says whether it ends a header block.
func (s *h2FrameStream) add(t *testing.T, end bool, write func(*http2.Framer) error) {
	t.Helper()
	if err := write(s.fr); err != nil {
		t.Fatal(err)
	}
	if end {
		s.ends = append(s.ends, s.buf.Len())
	}
}

func h2Headers(id uint32, endHeaders bool, pad uint8) func(*http2.Framer) error {
	return func(fr *http2.Framer) error {
		return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: []byte{0x83, 0x86}, EndHeaders: endHeaders, PadLength: pad})
	}
}

func h2Reset(id uint32) func(*http2.Framer) error {
	return func(fr *http2.Framer) error { return fr.WriteRSTStream(id, http2.ErrCodeCancel) }
}

func h2Data(id uint32, n int) func(*http2.Framer) error {
	return func(fr *http2.Framer) error { return fr.WriteData(id, false, bytes.Repeat([]byte{0x5a}, n)) }
}

// h2GoAwayBytes is the GOAWAY the guard sends with lastStream.
func h2GoAwayBytes(t *testing.T, lastStream uint32) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := http2.NewFramer(&b, nil).WriteGoAway(lastStream, http2.ErrCodeEnhanceYourCalm, []byte("too_many_resets")); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var h2GuardEpoch = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// TestH2GuardReadSplits feeds a client's frames to the guard in two reads
// split at every byte, and one byte per read: the guard passes the bytes
// through unchanged, counts the three resets and finds the highest stream,
// whatever the split.
func TestH2GuardReadSplits(t *testing.T) {
	t.Parallel()
	s := newH2FrameStream(true)
	s.add(t, true, func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	})
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
	s.add(t, true, h2Headers(1, true, 0))
	s.add(t, true, h2Data(1, 300))
	s.add(t, true, h2Reset(1))
	s.add(t, false, h2Headers(3, false, 0))
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteContinuation(3, true, []byte{0x84}) })
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteWindowUpdate(0, 1<<16) })
	s.add(t, true, h2Headers(5, true, 7)) // padded
	s.add(t, true, h2Reset(3))
	s.add(t, true, func(fr *http2.Framer) error { return fr.WritePing(false, [8]byte{1, 2, 3}) })
	s.add(t, true, h2Reset(5))
	s.add(t, true, h2Headers(9, true, 0))
	s.add(t, true, h2Data(9, 0))
	in := s.buf.Bytes()

	splits := [][][]byte{}
	for i := range len(in) + 1 {
		splits = append(splits, [][]byte{in[:i], in[i:]})
	}
	var bytewise [][]byte
	for i := range in {
		bytewise = append(bytewise, in[i:i+1])
	}
	splits = append(splits, bytewise)

	for _, reads := range splits {
		c := &h2GuardConn{reads: reads}
		g := newH2Guard(c, 100, func(net.Addr) { t.Fatal("sent away") })
		g.now = func() time.Time { return h2GuardEpoch }
		got, err := io.ReadAll(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, in) {
			t.Fatalf("reads %d+…: the guard changed the bytes", len(reads[0]))
		}
		if used := 200 - g.resets.TokensAt(h2GuardEpoch); used != 3 {
			t.Fatalf("reads %d+…: %v resets counted, want 3", len(reads[0]), used)
		}
		if g.lastStream != 9 {
			t.Fatalf("reads %d+…: last stream %d, want 9", len(reads[0]), g.lastStream)
		}
		if !g.in.boundary() || c.written.Len() != 0 || c.closed.Load() {
			t.Fatalf("reads %d+…: boundary %v, wrote %d bytes, closed %v", len(reads[0]), g.in.boundary(), c.written.Len(), c.closed.Load())
		}
	}
}

// TestH2GuardReadSendsAway: with a stream limit of 1 the budget is a burst
// of 2 resets, so the third reset sends the client away, whatever the
// split: GOAWAY naming the last stream opened before it, then close. The
// HEADERS after the reset is never counted.
func TestH2GuardReadSendsAway(t *testing.T) {
	t.Parallel()
	s := newH2FrameStream(true)
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteSettings() })
	for id := uint32(1); id <= 7; id += 2 {
		s.add(t, true, h2Headers(id, true, 0))
		s.add(t, true, h2Reset(id))
	}
	in := s.buf.Bytes()
	want := h2GoAwayBytes(t, 5)
	for i := range len(in) + 1 {
		c := &h2GuardConn{reads: [][]byte{in[:i], in[i:]}}
		var away []net.Addr
		g := newH2Guard(c, 1, func(a net.Addr) { away = append(away, a) })
		g.now = func() time.Time { return h2GuardEpoch }
		_, err := io.ReadAll(g)
		if !errors.Is(err, errTooManyResets) {
			t.Fatalf("split at %d: read error %v, want errTooManyResets", i, err)
		}
		if !bytes.Equal(c.written.Bytes(), want) || !c.closed.Load() {
			t.Fatalf("split at %d: wrote %x (closed %v), want GOAWAY %x", i, c.written.Bytes(), c.closed.Load(), want)
		}
		if len(away) != 1 || away[0].String() != c.RemoteAddr().String() {
			t.Fatalf("split at %d: onAbuse called with %v", i, away)
		}
		if _, err := g.Read(make([]byte, 8)); !errors.Is(err, errTooManyResets) {
			t.Fatalf("split at %d: read after GOAWAY: %v", i, err)
		}
		if n, err := g.Write([]byte{0}); n != 1 || err != nil || !bytes.Equal(c.written.Bytes(), want) {
			t.Fatalf("split at %d: write after GOAWAY: %d, %v, wrote %x; want it dropped", i, n, err, c.written.Bytes())
		}
	}
}

// TestH2GuardGoAwayAtFrameBoundary sends the client away after grpc-go has
// written every prefix of its output, in two Writes: the GOAWAY goes out at
// once if the prefix ends a frame, or else right after the Write that
// finishes the frame, never inside a frame nor between HEADERS and its
// CONTINUATION.
func TestH2GuardGoAwayAtFrameBoundary(t *testing.T) {
	t.Parallel()
	s := newH2FrameStream(false)
	s.add(t, true, func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	})
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteWindowUpdate(0, 1<<16) })
	s.add(t, false, h2Headers(1, false, 0))
	s.add(t, true, func(fr *http2.Framer) error { return fr.WriteContinuation(1, true, []byte{0x88}) })
	s.add(t, true, h2Data(1, 1000))
	s.add(t, true, func(fr *http2.Framer) error { return fr.WritePing(true, [8]byte{9}) })
	s.add(t, true, h2Headers(1, true, 0))
	s.add(t, true, h2Reset(3))
	s.add(t, true, h2Data(5, 0))
	s.add(t, true, h2Data(5, 17))
	out := s.buf.Bytes()
	goAway := h2GoAwayBytes(t, 7)

	for i := range len(out) + 1 {
		c := &h2GuardConn{}
		g := newH2Guard(c, 100, nil)
		g.lastStream = 7
		for _, p := range [][]byte{out[:i/2], out[i/2 : i]} {
			if n, err := g.Write(p); n != len(p) || err != nil {
				t.Fatalf("prefix %d: Write = %d, %v", i, n, err)
			}
		}
		end := i // the first boundary at or after i
		for _, e := range s.ends {
			if e >= i {
				end = e
				break
			}
		}
		if pending := g.goAway(); pending != (end != i) {
			t.Fatalf("prefix %d: pending %v, the frame ends at %d", i, pending, end)
		}
		if end != i {
			// The rest is taken whole: what follows the frame's end is
			// dropped, the client having been sent away.
			n, err := g.Write(out[i:])
			if n != len(out)-i || err != nil {
				t.Fatalf("prefix %d: Write of the rest = %d, %v; want %d, nil", i, n, err, len(out)-i)
			}
		}
		want := append(bytes.Clone(out[:end]), goAway...)
		if !bytes.Equal(c.written.Bytes(), want) {
			t.Fatalf("prefix %d: wrote\n%x, want\n%x", i, c.written.Bytes(), want)
		}
		if n, err := g.Write(out); n != len(out) || err != nil || !bytes.Equal(c.written.Bytes(), want) {
			t.Fatalf("prefix %d: Write after GOAWAY = %d, %v; want it dropped", i, n, err)
		}
	}
}

// TestH2GuardReadWaitsForFrame sends the client away from Read while
// grpc-go is half way through a DATA frame: Read returns once the Write that
// ends the frame has written the GOAWAY after it. If that Write never comes
// (a client that stops reading blocks it), Read closes the connection
// without the GOAWAY after the grace period.
func TestH2GuardReadWaitsForFrame(t *testing.T) {
	t.Parallel()
	in := newH2FrameStream(true)
	for id := uint32(1); id <= 5; id += 2 {
		in.add(t, true, h2Headers(id, true, 0))
		in.add(t, true, h2Reset(id))
	}
	out := newH2FrameStream(false)
	out.add(t, true, func(fr *http2.Framer) error { return fr.WriteSettings() })
	out.add(t, true, h2Data(1, 1000))
	half, end := out.ends[1]+500, out.ends[2]

	for _, finish := range []bool{true, false} {
		c := &h2GuardConn{reads: [][]byte{in.buf.Bytes()}}
		g := newH2Guard(c, 1, nil)
		g.now = func() time.Time { return h2GuardEpoch }
		if finish {
			g.grace = time.Hour
		} else {
			g.grace = time.Millisecond
		}
		if _, err := g.Write(out.buf.Bytes()[:half]); err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(g)
			read <- err
		}()
		want := out.buf.Bytes()[:half]
		if finish {
			// Whether this Write comes before Read finds the client over
			// budget or after, it ends the frame and the GOAWAY follows.
			if _, err := g.Write(out.buf.Bytes()[half:end]); err != nil && !errors.Is(err, errTooManyResets) {
				t.Fatal(err)
			}
			want = append(bytes.Clone(out.buf.Bytes()[:end]), h2GoAwayBytes(t, 5)...)
		}
		if err := <-read; !errors.Is(err, errTooManyResets) {
			t.Fatalf("finish %v: read error %v", finish, err)
		}
		if !c.closed.Load() {
			t.Fatalf("finish %v: the connection is open", finish)
		}
		g.wmu.Lock()
		got := bytes.Clone(c.written.Bytes())
		g.wmu.Unlock()
		if !bytes.Equal(got, want) {
			t.Fatalf("finish %v: wrote\n%x, want\n%x", finish, got, want)
		}
	}
}

// TestH2GuardBudget runs clients that reset one stream after another on a
// fake clock against the budget of 100 streams: a burst of 200 resets and
// 100 more per second.
func TestH2GuardBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		every  time.Duration // between resets
		resets int
		away   int // the reset that sends the client away; 0 for none
	}{
		{"at the refill rate forever", 10 * time.Millisecond, 4000, 0},
		{"the burst at once", 0, 200, 0},
		{"one more than the burst at once", 0, 201, 201},
		// 200 + (n-1)/2 tokens for n resets: the 400th has none left.
		{"twice the refill rate", 5 * time.Millisecond, 4000, 400},
		{"rapid reset", 0, 4000, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := testclock.At(h2GuardEpoch)
			g := newH2Guard(&h2GuardConn{}, 100, nil)
			g.now = clock.Now
			if g.scanIn([]byte(http2.ClientPreface)) {
				t.Fatal("the preface sent the client away")
			}
			for i := 1; i <= tc.resets; i++ {
				s := newH2FrameStream(false)
				s.add(t, true, h2Headers(uint32(2*i-1), true, 0))
				s.add(t, true, h2Reset(uint32(2*i-1)))
				if g.scanIn(s.buf.Bytes()) {
					if i != tc.away {
						t.Fatalf("reset %d sent the client away, want %d", i, tc.away)
					}
					return
				}
				clock.Advance(tc.every)
			}
			if tc.away != 0 {
				t.Fatalf("%d resets did not send the client away, want reset %d to", tc.resets, tc.away)
			}
		})
	}
}

// h2GuardTestStreams is the test server's MaxConcurrentStreams.
const h2GuardTestStreams = 100

// h2GuardService is a test service: Block waits until the call is
// cancelled, Echo sends each message back.
type h2GuardService struct {
	started, cancelled chan struct{}
}

var h2GuardServiceDesc = grpc.ServiceDesc{
	ServiceName: "hangar.test.H2Guard",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Block",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			s := srv.(*h2GuardService)
			if err := dec(&emptypb.Empty{}); err != nil {
				return nil, err
			}
			s.started <- struct{}{}
			<-ctx.Done()
			s.cancelled <- struct{}{}
			return nil, status.FromContextError(ctx.Err()).Err()
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName: "Echo",
		Handler: func(_ any, stream grpc.ServerStream) error {
			for {
				var m wrapperspb.BytesValue
				if err := stream.RecvMsg(&m); errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				if err := stream.SendMsg(&m); err != nil {
					return err
				}
			}
		},
		ServerStreams: true,
		ClientStreams: true,
	}},
}

// h2GuardServer is a grpc.Server whose connections are guarded.
type h2GuardServer struct {
	addr   string
	svc    *h2GuardService
	clock  *testclock.Clock // nil: the guards run on time.Now
	away   chan net.Addr
	mu     sync.Mutex
	guards []*h2Guard
}

// h2GuardListener wraps each connection it accepts.
type h2GuardListener struct {
	net.Listener
	wrap func(net.Conn) net.Conn
}

func (l *h2GuardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.wrap(c), nil
}

// startH2GuardServer serves the health service and h2GuardService on
// 127.0.0.1, each connection guarded, until t ends. With a clock the guards
// run on it; without, the server wraps with guardH2 as the node does.
func startH2GuardServer(t *testing.T, clock *testclock.Clock) *h2GuardServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &h2GuardServer{
		addr:  lis.Addr().String(),
		svc:   &h2GuardService{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)},
		clock: clock,
		away:  make(chan net.Addr, 16),
	}
	onAbuse := func(a net.Addr) { srv.away <- a }
	wrap := func(c net.Conn) net.Conn { return guardH2(c, h2GuardTestStreams, onAbuse) }
	if clock != nil {
		wrap = func(c net.Conn) net.Conn {
			g := newH2Guard(c, h2GuardTestStreams, onAbuse)
			g.now = clock.Now
			srv.mu.Lock()
			defer srv.mu.Unlock()
			srv.guards = append(srv.guards, g)
			return g
		}
	}
	s := grpc.NewServer(grpc.MaxConcurrentStreams(h2GuardTestStreams))
	healthpb.RegisterHealthServer(s, health.NewServer())
	s.RegisterService(&h2GuardServiceDesc, srv.svc)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(&h2GuardListener{Listener: lis, wrap: wrap})
	}()
	t.Cleanup(func() {
		s.Stop()
		<-served
	})
	return srv
}

func (srv *h2GuardServer) client(t *testing.T) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// TestH2GuardRapidReset attacks a guarded grpc-go server with rapid reset:
// HEADERS of a health check, then at once RST_STREAM(CANCEL), up to 5000
// times on one connection. On the frozen clock the 201st reset is over the
// budget: the attacker reads GOAWAY(ENHANCE_YOUR_CALM, "too_many_resets")
// naming stream 401, the last it opened, and then the connection closes.
func TestH2GuardRapidReset(t *testing.T) {
	t.Parallel()
	srv := startH2GuardServer(t, testclock.At(h2GuardEpoch))
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A hang guard only: the guard answers long before.
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))

	type result struct {
		goAway    bool
		lastID    uint32
		code      http2.ErrCode
		debug     string
		afterward error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		rd := http2.NewFramer(nil, c)
		for {
			f, err := rd.ReadFrame()
			if err != nil {
				r.afterward = err
				done <- r
				return
			}
			if ga, ok := f.(*http2.GoAwayFrame); ok {
				r.goAway, r.lastID, r.code, r.debug = true, ga.LastStreamID, ga.ErrCode, string(ga.DebugData())
			}
		}
	}()

	bw := bufio.NewWriter(c)
	fr := http2.NewFramer(bw, nil)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	fields := []hpack.HeaderField{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/grpc.health.v1.Health/Check"},
		{Name: ":authority", Value: srv.addr},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"},
	}
	_, err = bw.WriteString(http2.ClientPreface)
	if err == nil {
		err = fr.WriteSettings()
	}
	for i := 0; err == nil && i < 5000; i++ {
		id := uint32(2*i + 1)
		block.Reset()
		for _, f := range fields {
			if err := enc.WriteField(f); err != nil {
				t.Fatal(err)
			}
		}
		err = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true})
		if err == nil {
			err = fr.WriteRSTStream(id, http2.ErrCodeCancel)
		}
		if err == nil && i%50 == 49 {
			err = bw.Flush()
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	t.Logf("the attacker stopped writing on %v", err)

	r := <-done
	if !r.goAway || r.code != http2.ErrCodeEnhanceYourCalm || r.debug != "too_many_resets" || r.lastID != 401 {
		t.Fatalf("GOAWAY %v: code %v, debug %q, last stream %d; want ENHANCE_YOUR_CALM, too_many_resets, 401", r.goAway, r.code, r.debug, r.lastID)
	}
	var ne net.Error
	if errors.As(r.afterward, &ne) && ne.Timeout() {
		t.Fatalf("the connection stayed open after GOAWAY: %v", r.afterward)
	}
	if a := <-srv.away; a.String() != c.LocalAddr().String() {
		t.Fatalf("onAbuse got %v, want the attacker %v", a, c.LocalAddr())
	}
}

// TestH2GuardHonestClient makes 400 health checks on a grpc-go client while
// it cancels 40 calls one after another, each once its handler runs: each
// cancel is a RST_STREAM the guard counts, and the client is never sent
// away.
func TestH2GuardHonestClient(t *testing.T) {
	t.Parallel()
	clock := testclock.At(h2GuardEpoch)
	srv := startH2GuardServer(t, clock)
	cc := srv.client(t)
	hc := healthpb.NewHealthClient(cc)
	const checks, cancels = 400, 40

	var wg sync.WaitGroup
	errs := make(chan error, checks+cancels)
	for range checks {
		wg.Go(func() {
			r, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{})
			if err == nil && r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				err = errors.New(r.GetStatus().String())
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Go(func() {
		for range cancels {
			ctx, cancel := context.WithCancel(t.Context())
			called := make(chan error, 1)
			go func() { called <- cc.Invoke(ctx, "/hangar.test.H2Guard/Block", &emptypb.Empty{}, &emptypb.Empty{}) }()
			<-srv.svc.started
			cancel()
			<-srv.svc.cancelled
			if err := <-called; status.Code(err) != codes.Canceled {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	select {
	case a := <-srv.away:
		t.Fatalf("the honest client %v was sent away", a)
	default:
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var used float64
	for _, g := range srv.guards {
		used += 2*h2GuardTestStreams - g.resets.TokensAt(clock.Now())
	}
	if used != cancels {
		t.Fatalf("the guards counted %v resets, want %d", used, cancels)
	}
}

// TestH2GuardLargeMessages checks that the guard, parsing both directions,
// leaves grpc-go's frames intact: four bidirectional streams echo messages
// of a quarter megabyte and more, whose DATA frames grpc-go splits across
// writes and the guard sees across reads, while health checks run beside
// them.
func TestH2GuardLargeMessages(t *testing.T) {
	t.Parallel()
	srv := startH2GuardServer(t, nil)
	cc := srv.client(t)
	hc := healthpb.NewHealthClient(cc)

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for s := range 4 {
		wg.Go(func() {
			stream, err := cc.NewStream(t.Context(), &h2GuardServiceDesc.Streams[0], "/hangar.test.H2Guard/Echo")
			if err != nil {
				errs <- err
				return
			}
			rnd := rand.New(rand.NewChaCha8([32]byte{byte(s)}))
			for i := range 8 {
				msg := make([]byte, 1<<18+i*7919)
				for j := range msg {
					msg[j] = byte(rnd.Uint32())
				}
				if err := stream.SendMsg(wrapperspb.Bytes(msg)); err != nil {
					errs <- err
					return
				}
				var got wrapperspb.BytesValue
				if err := stream.RecvMsg(&got); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got.GetValue(), msg) {
					errs <- errors.New("an echoed message differs")
					return
				}
			}
			if err := stream.CloseSend(); err != nil {
				errs <- err
				return
			}
			if err := stream.RecvMsg(&wrapperspb.BytesValue{}); !errors.Is(err, io.EOF) {
				errs <- err
			}
		})
	}
	for range 32 {
		wg.Go(func() {
			if _, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case a := <-srv.away:
		t.Fatalf("the client %v was sent away", a)
	default:
	}
}
