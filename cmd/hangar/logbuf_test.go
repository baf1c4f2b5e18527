package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/nodetest"
)

// TestBatchWriter: lines from many writers come out whole, none lost, by
// the next tick or at Close at the latest.
func TestBatchWriter(t *testing.T) {
	out := &nodetest.Buffer{}
	bw := newBatchWriter(out, 10*time.Millisecond)
	if _, err := bw.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); out.String() != "first\n"; {
		if time.Now().After(deadline) {
			t.Fatal("a line was not written out by the ticks")
		}
		time.Sleep(time.Millisecond) // waiting for the ticker: no signal to wait on
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				fmt.Fprintf(bw, "writer %d line %d %s\n", w, i, strings.Repeat("x", 100))
			}
		}()
	}
	wg.Wait()
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8001 {
		t.Fatalf("%d lines, want 8001", len(lines))
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "writer ") || !strings.HasSuffix(l, strings.Repeat("x", 100)) {
			t.Fatalf("a torn line: %q", l)
		}
	}
}
