package server

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

func newTestWriter(accept string) (*restWriter, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/v1/matches/m_1:watch", nil)
	r.Header.Set("Accept", accept)
	return newRestWriter(jsonOptions, rec, r, func(r *hangarv1.WatchMatchResponse) int64 { return r.GetEvent().GetSeq() }), rec
}

// A watch queue sends from a goroutine of its own, which may still send
// after the handler has returned: once the stream has ended, a send fails
// and writes nothing (the response is no longer the stream's).
func TestRestWriterRefusesSendsAfterTheEnd(t *testing.T) {
	rw, rec := newTestWriter("")
	if err := rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	rw.end(nil)
	before := rec.Body.String()
	if err := rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: 2}}); err == nil {
		t.Fatal("a send after the end succeeded")
	}
	if after := rec.Body.String(); after != before || strings.Count(after, "\n") != 1 {
		t.Fatalf("body %q after the end, was %q", after, before)
	}
}

// Sends from several goroutines each write one whole line (go test -race
// checks that they do not write at once).
func TestRestWriterConcurrentSends(t *testing.T) {
	rw, rec := newTestWriter("")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 25 {
				_ = rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: int64(i*25 + j + 1)}})
			}
		})
	}
	wg.Wait()
	rw.end(nil)
	lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d lines, want 200", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"event":`) || !strings.HasSuffix(l, "}") {
			t.Fatalf("line %q is not one response", l)
		}
	}
}

// Over SSE each response is an event whose id is its seq, and a stream
// that ends well says so.
func TestRestWriterSSE(t *testing.T) {
	rw, rec := newTestWriter("text/event-stream")
	if err := rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: 7}}); err != nil {
		t.Fatal(err)
	}
	rw.end(nil)
	body := rec.Body.String()
	if rec.Header().Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(body, "id: 7\ndata: ") || !strings.HasSuffix(body, "event: end\ndata: {}\n\n") {
		t.Fatalf("%s\n%q", rec.Header().Get("Content-Type"), body)
	}
}
