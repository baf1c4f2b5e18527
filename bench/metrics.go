package bench

import (
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// storeCounters are the server's store counters at one moment, from its
// admin listener's /metrics.
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
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil
	}
	hist := func(name string) (count int64, sum float64, ok bool) {
		mf := mfs[name]
		if mf == nil || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetHistogram() == nil {
			return 0, 0, false
		}
		h := mf.GetMetric()[0].GetHistogram()
		return int64(h.GetSampleCount()), h.GetSampleSum(), true
	}
	var c storeCounters
	var batched float64
	var ok [3]bool
	c.appends, c.appendSecs, ok[0] = hist("hangar_store_append_seconds")
	c.commits, batched, ok[1] = hist("hangar_store_batch_appends")
	_, c.commitSecs, ok[2] = hist("hangar_store_batch_seconds")
	if ok != [3]bool{true, true, true} {
		return nil
	}
	c.commitAppends = int64(batched)
	return &c
}
