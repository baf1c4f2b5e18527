package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// batchWriter gathers log lines and writes them out at most every period
// (or when its buffer fills): the access log writes a line per RPC, and a
// write call for each would cost the node a system call per RPC. A crash
// loses at most the last period's lines; Close writes what is left.
type batchWriter struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newBatchWriter(w io.Writer, period time.Duration) *batchWriter {
	b := &batchWriter{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.mu.Lock()
				_ = b.w.Flush()
				b.mu.Unlock()
			}
		}
	}()
	return b
}

func (b *batchWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Close stops the timer and writes out what is buffered.
func (b *batchWriter) Close() error {
	close(b.stop)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}
