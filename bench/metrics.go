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

// readServerMetrics reads the store counters of the server whose admin
// listener is at addr, nil when they cannot be read (no such listener, or
// a store without a combiner: no hangar_store_batch_appends), and the Ps
// it runs Go code on (go_sched_gomaxprocs_threads; 0: not read).
func readServerMetrics(addr string) (*storeCounters, int) {
	resp, err := metricsClient.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, 0
	}
	procs := 0
	if mf := mfs["go_sched_gomaxprocs_threads"]; mf != nil && len(mf.GetMetric()) == 1 && mf.GetMetric()[0].GetGauge() != nil {
		procs = int(mf.GetMetric()[0].GetGauge().GetValue())
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
		return nil, procs
	}
	c.commitAppends = int64(batched)
	return &c, procs
}
