package natstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/testport"
)

// Cluster is a NATS cluster of the test's own: nats-server processes with
// JetStream, routed to each other on ports of their own, each with a
// temporary store directory and a monitoring port.
type Cluster struct {
	Servers []*Server
	// Monitor holds each server's monitoring address (host:port).
	Monitor []string
}

// StartCluster starts a cluster of n servers for tb and waits until its
// JetStream answers on every server (a meta leader is elected); the
// servers are stopped when tb ends. Without nats-server tb skips (fails
// under CI=true).
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		need(tb, fmt.Sprintf("natstest: a NATS cluster of the test's own: %v", err))
	}
	ports := func() []int {
		ps := make([]int, n)
		for i := range ps {
			p, err := testport.Free()
			if err != nil {
				tb.Fatal(err)
			}
			ps[i] = p
		}
		return ps
	}
	client, route, monitor := ports(), ports(), ports()
	var routes []string
	for _, p := range route {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &Cluster{}
	for i := range n {
		dir, err := os.MkdirTemp("", "hangar-nats-")
		if err != nil {
			tb.Fatal(err)
		}
		s := &Server{Port: client[i], Dir: dir, bin: bin, URL: fmt.Sprintf("nats://127.0.0.1:%d", client[i]),
			args: []string{"--server_name", fmt.Sprint("n", i), "--cluster_name", "hangar-test",
				"--cluster", routes[i], "--routes", strings.Join(routes, ","), "-m", fmt.Sprint(monitor[i])}}
		tb.Cleanup(s.Stop)
		c.Servers = append(c.Servers, s)
		c.Monitor = append(c.Monitor, fmt.Sprintf("127.0.0.1:%d", monitor[i]))
	}
	// A server answers clients before its routes are up: start them all,
	// then wait for JetStream's health on each.
	errs := make(chan error, n)
	for _, s := range c.Servers {
		go func() { errs <- s.Start() }()
	}
	for range n {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	for i := range n {
		if err := c.waitHealthy(i, 30*time.Second); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// URLs is the client URLs of every server, comma-separated, as a --bus.
func (c *Cluster) URLs() string {
	var us []string
	for _, s := range c.Servers {
		us = append(us, s.URL)
	}
	return strings.Join(us, ",")
}

// Index returns the index of the server whose client URL is u, or -1.
func (c *Cluster) Index(u string) int {
	for i, s := range c.Servers {
		if s.URL == u {
			return i
		}
	}
	return -1
}

// waitHealthy waits until server i's /healthz says its JetStream is
// current with the cluster.
func (c *Cluster) waitHealthy(i int, d time.Duration) error {
	deadline := time.Now().Add(d)
	hc := &http.Client{Timeout: time.Second}
	for {
		r, err := hc.Get("http://" + c.Monitor[i] + "/healthz")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(r.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("natstest: NATS server %d of the cluster is not healthy: %v: %s", i, err, c.Servers[i].logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StreamInfo is what the cluster's monitoring says of a stream.
type StreamInfo struct {
	// Leader is the index of the server that leads the stream.
	Leader int
	// Replicas is how many servers hold it (its configured replicas).
	Replicas int
	// LastSeq is the last message's sequence number.
	LastSeq uint64
}

// Stream asks server i's monitoring (/jsz) about the stream named name.
func (c *Cluster) Stream(i int, name string) (StreamInfo, error) {
	hc := &http.Client{Timeout: 2 * time.Second}
	r, err := hc.Get("http://" + c.Monitor[i] + "/jsz?accounts=true&streams=true&config=true")
	if err != nil {
		return StreamInfo{}, err
	}
	defer r.Body.Close()
	var jsz struct {
		Accounts []struct {
			Streams []struct {
				Name    string `json:"name"`
				Cluster struct {
					Leader string `json:"leader"`
				} `json:"cluster"`
				Config struct {
					Replicas int `json:"num_replicas"`
				} `json:"config"`
				State struct {
					LastSeq uint64 `json:"last_seq"`
				} `json:"state"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := json.NewDecoder(r.Body).Decode(&jsz); err != nil {
		return StreamInfo{}, err
	}
	for _, a := range jsz.Accounts {
		for _, s := range a.Streams {
			if s.Name != name {
				continue
			}
			leader := -1
			for k := range c.Servers {
				if s.Cluster.Leader == fmt.Sprint("n", k) {
					leader = k
				}
			}
			return StreamInfo{Leader: leader, Replicas: s.Config.Replicas, LastSeq: s.State.LastSeq}, nil
		}
	}
	return StreamInfo{}, fmt.Errorf("natstest: server %d knows no stream %s", i, name)
}
