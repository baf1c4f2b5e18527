package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// autogroupNote is how the report names Linux's sharing of the CPUs by
// session ("" when not known).
func autogroupNote(on *bool) string {
	switch {
	case on == nil:
		return ""
	case *on:
		return "; CPU shared by session first: sched_autogroup_enabled=1"
	}
	return "; sched_autogroup_enabled=0"
}

// Print writes the human-readable report.
func (r *Result) Print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "hangar bench: %d CPUs (%s%s), %s; server %s at %s, store %s",
		r.Machine.CPUs, r.Machine.CPUModel, autogroupNote(r.Machine.Autogroup), r.Machine.GoVersion, r.Server.Mode, r.Server.Address, r.Server.Store)
	if r.Server.PID != 0 {
		fmt.Fprintf(w, " (pid %d)", r.Server.PID)
	}
	var load []string
	if r.Machine.GOMAXPROCS < r.Machine.CPUs {
		load = append(load, fmt.Sprintf("at GOMAXPROCS=%d", r.Machine.GOMAXPROCS))
	}
	if c.LoadGOGC > 0 {
		load = append(load, fmt.Sprintf("at GOGC=%d", c.LoadGOGC))
	}
	if len(load) > 0 {
		fmt.Fprintf(w, "; the load generator %s", strings.Join(load, " and "))
	}
	if c.DBDelayUS > 0 {
		fmt.Fprintf(w, ", the database behind a delay of %v each way (round trip %v)", time.Duration(c.DBDelayUS)*time.Microsecond,
			time.Duration(c.DBRoundTripUS)*time.Microsecond)
	}
	if len(r.Server.Peers) > 0 {
		fmt.Fprintf(w, "; %d nodes sharing the store over the %s bus, the watchers on %s", len(r.Server.Peers)+1, busKind(c.Bus), r.Server.Peers[len(r.Server.Peers)-1])
	}
	fmt.Fprintln(w)
	if r.Idle != nil {
		i := r.Idle
		fmt.Fprintf(w, "\nidle: %d %s matches created in %.1fs (%.0f/s); server RSS %.1f MB -> %.1f MB (%.2f KB/match), peak %.1f MB\n",
			i.Matches, i.Kind, i.Seconds, i.PerSec, i.RSSBeforeMB, i.RSSAfterMB, i.KBPerMatch, i.PeakRSSMB)
		if i.InProcessNote != "" {
			fmt.Fprintln(w, "  note:", i.InProcessNote)
		}
	}
	if l := r.Load; l != nil {
		if c.Matches > 0 {
			over := "WatchMatch and unary calls"
			if c.Play {
				over = "a Play stream per seat"
			}
			if c.AutoRoll {
				over += ", the server rolling (auto_roll)"
			}
			if c.Conns > 0 {
				over += fmt.Sprintf(", the players sharing %d connections", l.PlayerConns)
			}
			fmt.Fprintf(w, "\nload: %d matches x %d seats over %s for %.1fs: %d durable commands (%d rolls + %d moves)\n",
				c.Matches, c.Seats, over, l.Seconds, l.Commands, l.Rolls, l.Moves)
			fmt.Fprintf(w, "  %.1f commands/s   %.1f moves/s   %d matches finished\n", l.CommandsPerSec, l.MovesPerSec, l.MatchesFinished)
		} else {
			fmt.Fprintf(w, "\nwindow: %.1fs (no load matches)\n", l.Seconds)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  rpc\tcount\tmean ms\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
		keys := make([]string, 0, len(l.Latency))
		for k := range l.Latency {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s := l.Latency[k]
			fmt.Fprintf(tw, "  %s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", k, s.Count, s.MeanMS, s.P50MS, s.P95MS, s.P99MS, s.MaxMS)
		}
		tw.Flush()
		if u := l.Usage; u != nil {
			if r.Server.Mode != "target" {
				who := "the server alone"
				if r.Server.IncludesLoadGenerator {
					who = "server and load generator in one process"
				}
				switch {
				case u.ServerProcs == 1:
					who += ", on 1 P at the end"
				case u.ServerProcs > 1:
					who += fmt.Sprintf(", on %d Ps at the end", u.ServerProcs)
				}
				fmt.Fprintf(w, "  server CPU %.2fs (%.0f%% of one core; %s), RSS %.1f MB, peak RSS %.1f MB\n",
					u.ServerCPUS, u.ServerCPUPercent, who, u.ServerRSSMB, u.ServerPeakRSSMB)
			}
			if !r.Server.IncludesLoadGenerator {
				fmt.Fprintf(w, "  load generator CPU %.2fs (%.0f%% of one core)\n", u.LoadGenCPUS, 100*u.LoadGenCPUS/l.Seconds)
			}
			switch {
			case r.Server.Mode == "target":
				fmt.Fprintf(w, "  processes named postgres on this machine: CPU %.2fs (%.0f%% of one core)\n", u.PostgresCPUS, 100*u.PostgresCPUS/l.Seconds)
			case !strings.HasPrefix(r.Server.Store, "sqlite"):
				fmt.Fprintf(w, "  postgres backends CPU %.2fs (%.0f%% of one core)%s\n", u.PostgresCPUS, 100*u.PostgresCPUS/l.Seconds, pagesOf(u.PostgresHugePages))
			}
			if st := u.Store; st != nil && st.Commits > 0 && st.Appends > 0 {
				fmt.Fprintf(w, "  store: %d commits of %.1f commands, %.2f ms each; a command's append %.2f ms (the combiner's queue, then its commit)\n",
					st.Commits, float64(st.CommitAppends)/float64(st.Commits), 1000*st.CommitSeconds/float64(st.Commits), 1000*st.AppendSeconds/float64(st.Appends))
			}
			fmt.Fprintf(w, "  machine busy %.0f%% of %d CPUs (everything on it, other users included)\n", u.MachineBusyPercent, r.Machine.CPUs)
		}
	}
	if wr := r.Watch; wr != nil {
		fmt.Fprintf(w, "\nwatch: %d watchers on a %s match: %d events after they joined; %d/%d watchers got every one; %d deliveries in %.1fs\n",
			wr.Watchers, wr.Kind, wr.Events, wr.Complete, wr.Watchers, wr.Delivered, wr.Seconds)
		if a := wr.FromAck; a != nil {
			fmt.Fprintf(w, "  delivery from the command's ack:  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", a.P50MS, a.P99MS, a.MaxMS)
		}
		e := wr.FromEventTime
		fmt.Fprintf(w, "  delivery from the event's time:   p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", e.P50MS, e.P99MS, e.MaxMS)
	}
	if h := r.Webhook; h != nil {
		fmt.Fprintf(w, "\nwebhook: %d notices delivered (%d repeats) in %.1fs: %.1f notices/s; the last %.2fs after the window\n",
			h.Notices, h.Duplicates, h.Seconds, h.PerSec, h.DrainSeconds)
		fmt.Fprintf(w, "  lag from the commit:  p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms\n", h.Lag.P50MS, h.Lag.P95MS, h.Lag.P99MS, h.Lag.MaxMS)
	}
	if r.Server.PeakRSSMB > 0 {
		fmt.Fprintf(w, "\nserver peak RSS over its life: %.1f MB\n", r.Server.PeakRSSMB)
	}
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "errors: none")
		return
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprint(w, "errors:")
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %d", k, r.Errors[k])
	}
	fmt.Fprintln(w)
}

// busKind names a bus setting: postgres or nats.
func busKind(bus string) string {
	if bus == "" || bus == "postgres" {
		return "postgres"
	}
	return "nats"
}

// pagesOf says what pages Postgres's shared memory lies on, for the
// backends' line ("" when not known).
func pagesOf(huge *bool) string {
	switch {
	case huge == nil:
		return ""
	case *huge:
		return "; its shared memory on huge pages"
	default:
		return "; its shared memory on 4 KiB pages (no huge pages reserved: BENCHMARKS.md)"
	}
}
