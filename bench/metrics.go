package bench

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// storeCounters are the server's store counters at one moment, from the
// Prometheus text of its admin listener's /metrics.
type storeCounters struct {
	appends, commits, commitAppends int64
	appendSecs, commitSecs          float64
}

// metricsClient reads a server's metrics; a read that does not answer
// within a second is skipped rather than stalling the run.
var metricsClient = &http.Client{Timeout: time.Second}

// readStoreCounters reads the store counters of the server whose admin
// listener is at addr, or nil when they cannot be read (no such listener,
// or a store without a combiner: no hangar_store_batch_appends).
func readStoreCounters(addr string) *storeCounters {
	resp, err := metricsClient.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var c storeCounters
	seen := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "hangar_store_append_seconds_count":
			c.appends = int64(v)
		case "hangar_store_append_seconds_sum":
			c.appendSecs = v
		case "hangar_store_batch_appends_count":
			c.commits = int64(v)
		case "hangar_store_batch_appends_sum":
			c.commitAppends = int64(v)
		case "hangar_store_batch_seconds_sum":
			c.commitSecs = v
		default:
			continue
		}
		seen++
	}
	if sc.Err() != nil || seen < 5 {
		return nil
	}
	return &c
}
