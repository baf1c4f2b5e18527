package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/seed"
)

// The matchmaking bench ('hangar bench -matchmaking N'): N players with
// ratings from a seeded history queue for Aeroplane Chess over several
// nodes sharing one Postgres, and the bench measures how long each waits
// for its match and how far apart the ratings in each match are.
//
// The database is a scratch one, filled first by package seed (the
// history fixture): its players (p_seed_…, whose bearer tokens seed
// knows) have ratings from rated matches played through the rating model,
// so their spread is that of real play. Then the nodes start, and each
// player, in turn (at MMConfig.Rate enqueues a second, or as fast as
// MMConfig.Concurrency clients go), enqueues on one node (round robin) and
// watches its ticket there until it is matched. Time to match is the
// client's: from sending Enqueue to receiving MATCHED; the server's own
// (the ticket's end time minus its create time) is reported beside it.

// MMConfig is a matchmaking run. Its fields up to RPCTimeout are flags of
// 'hangar bench' (cmd/hangar), whose -h says what each means.
type MMConfig struct {
	Players     int           `json:"players"`
	Seats       int           `json:"seats"`
	Nodes       int           `json:"nodes"`
	Rate        float64       `json:"enqueue_rate,omitempty"`
	Rated       bool          `json:"rated"`
	BotsAfter   time.Duration `json:"-"`
	History     int           `json:"history_matches"`
	Concurrency int           `json:"concurrency"`
	DatabaseURL string        `json:"-"`
	ScratchDB   bool          `json:"scratch_db"`
	RPCTimeout  time.Duration `json:"-"`
	// AutoRoll queues for auto_roll matches (-auto-roll): the tickets'
	// options have it on.
	AutoRoll bool `json:"auto_roll,omitempty"`

	BotsAfterS float64 `json:"bots_after_s"`

	// Start starts a node on the database in this process, with changes
	// delivered between nodes.
	Start StartFunc `json:"-"`
	// Progress receives a line a second while players queue (nil: none).
	Progress io.Writer `json:"-"`
	// Log receives the nodes' log (nil: discarded).
	Log *slog.Logger `json:"-"`
}

// MMResult is what a matchmaking run measured.
type MMResult struct {
	Machine Machine  `json:"machine"`
	Config  MMConfig `json:"config"`
	// LoadAvg is the machine's 1-minute load average at the start and the
	// end of the queueing.
	LoadAvg [2]float64 `json:"load_avg_1m"`
	// SeedSeconds is how long seeding the history took.
	SeedSeconds float64 `json:"seed_seconds"`
	// RatingMean and RatingSD describe the players' ratings (mu).
	RatingMean float64 `json:"rating_mean"`
	RatingSD   float64 `json:"rating_sd"`
	// Seconds is from the first Enqueue to the last MATCHED.
	Seconds        float64 `json:"seconds"`
	EnqueueSeconds float64 `json:"enqueue_seconds"`
	EnqueuesPerSec float64 `json:"enqueues_per_sec"`
	Matched        int     `json:"matched"`
	Matches        int     `json:"matches"`
	// BotMatches are the matches with a bot in a seat.
	BotMatches int `json:"bot_matches"`
	// TimeToMatch is the client's: Enqueue sent to MATCHED received.
	TimeToMatch LatencyStats `json:"time_to_match"`
	// ServerTimeToMatch is the ticket's end time minus its create time.
	ServerTimeToMatch LatencyStats `json:"server_time_to_match"`
	// Enqueue is the Enqueue RPC's latency.
	Enqueue LatencyStats `json:"enqueue"`
	// Spread is the rating spread of each match: its highest player
	// rating minus its lowest (matches of two or more players), in rating
	// points.
	Spread Distribution `json:"spread"`
	// Errors counts failed RPCs by "RPC code"; every entry is unexpected.
	Errors map[string]int64 `json:"errors"`
}

// Distribution summarises values.
type Distribution struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func distribution(v []float64) Distribution {
	if len(v) == 0 {
		return Distribution{}
	}
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	q := func(p float64) float64 { return v[int(p*float64(len(v)-1)+0.5)] }
	return Distribution{Count: len(v), Mean: sum / float64(len(v)), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: v[len(v)-1]}
}

// RunMatchmaking runs the matchmaking bench cfg asks for.
func RunMatchmaking(ctx context.Context, cfg MMConfig) (*MMResult, error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Start == nil {
		return nil, errors.New("bench: matchmaking needs MMConfig.Start")
	}
	cfg.BotsAfterS = cfg.BotsAfter.Seconds()
	res := &MMResult{Machine: machine(), Config: cfg}
	holder := &server{}
	defer holder.close(nil)
	url := cfg.DatabaseURL
	if cfg.ScratchDB {
		var err error
		if url, err = scratchDatabase(ctx, cfg.DatabaseURL, holder); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	fmt.Fprintf(cfg.Progress, "matchmaking: seeding %d players and %d rated matches\n", cfg.Players, cfg.History)
	if err := seed.History(ctx, seed.Config{URL: url, Matches: cfg.History, EventsPerMatch: 10, Players: cfg.Players,
		Batch: 2000, Seed: 1, Span: 30 * 24 * time.Hour}, cfg.Progress); err != nil {
		return nil, err
	}
	res.SeedSeconds = time.Since(t0).Seconds()
	var addrs []string
	for range cfg.Nodes {
		n, err := cfg.Start(ctx, ServerConfig{Listen: "127.0.0.1:0", DatabaseURL: url}, cfg.Log)
		if err != nil {
			return nil, err
		}
		defer n.Shutdown(context.Background())
		addrs = append(addrs, n.Addr())
	}
	// Connections per node carry every player's calls, each with the
	// player's own token: enough of them that the watch streams stay
	// under a node's cap of concurrent streams per connection (100).
	var clients [][]hangarv1.MatchmakingServiceClient
	perNode := (cfg.Players + cfg.Nodes - 1) / cfg.Nodes
	for _, a := range addrs {
		var cs []hangarv1.MatchmakingServiceClient
		for range max(4, perNode/80+1) {
			conn, err := grpc.NewClient(a, dialOptions()...)
			if err != nil {
				return nil, err
			}
			defer conn.Close()
			cs = append(cs, hangarv1.NewMatchmakingServiceClient(conn))
		}
		clients = append(clients, cs)
	}
	res.LoadAvg[0] = loadAvg()
	rec := newRecorder()
	type outcome struct {
		client time.Duration
		ticket *hangarv1.Ticket
	}
	outcomes := make([]outcome, cfg.Players)
	var matched, enqueued atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, cfg.Concurrency)
	start := time.Now()
	var enqueueEnd time.Time
	var endMu sync.Mutex
	stopProgress := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-t.C:
				fmt.Fprintf(cfg.Progress, "matchmaking: %.0fs: %d enqueued, %d matched\n", time.Since(start).Seconds(), enqueued.Load(), matched.Load())
			}
		}
	}()
	b := &bench{cfg: Config{RPCTimeout: cfg.RPCTimeout}, rec: rec}
	// Every ticket has the game's options, spelled out: the pool a ticket
	// waits in is its options'.
	opts := pack(&aeroplanev1.Options{AutoRoll: cfg.AutoRoll})
	for i := range cfg.Players {
		if cfg.Rate > 0 {
			if d := time.Until(start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))); d > 0 {
				time.Sleep(d)
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := clients[i%len(clients)]
			c := cs[(i/len(clients))%len(cs)]
			pctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+seed.Token(i))
			sent := time.Now()
			r, err := timed(b, pctx, "Enqueue", func(ctx context.Context) (*hangarv1.EnqueueResponse, error) {
				return c.Enqueue(ctx, &hangarv1.EnqueueRequest{Game: gameName, Options: opts, SeatCount: int32(cfg.Seats),
					Rated: cfg.Rated, BotsAfter: durationpb.New(cfg.BotsAfter), RequestId: fmt.Sprint("bench-mm-", i)})
			})
			if n := enqueued.Add(1); n == int64(cfg.Players) {
				endMu.Lock()
				enqueueEnd = time.Now()
				endMu.Unlock()
			}
			// The next player may enqueue while this one waits.
			<-sem
			if err != nil {
				return
			}
			tk := r.GetTicket()
			wctx, cancel := context.WithTimeout(pctx, 10*time.Minute)
			defer cancel()
			for attempt := 0; tk.GetStatus() == hangarv1.TicketStatus_TICKET_STATUS_QUEUED && attempt < 5; attempt++ {
				stream, err := c.WatchTicket(wctx, &hangarv1.WatchTicketRequest{TicketId: tk.GetTicketId()})
				if err != nil {
					rec.observe("WatchTicket", 0, err)
					continue
				}
				for {
					wr, err := stream.Recv()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							rec.observe("WatchTicket", 0, err)
						}
						break
					}
					tk = wr.GetTicket()
				}
			}
			if tk.GetStatus() == hangarv1.TicketStatus_TICKET_STATUS_MATCHED {
				outcomes[i] = outcome{client: time.Since(sent), ticket: tk}
				matched.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stopProgress)
	res.Seconds = time.Since(start).Seconds()
	res.LoadAvg[1] = loadAvg()
	if enqueueEnd.IsZero() {
		enqueueEnd = time.Now()
	}
	res.EnqueueSeconds = enqueueEnd.Sub(start).Seconds()
	res.EnqueuesPerSec = float64(cfg.Players) / res.EnqueueSeconds
	res.Errors = rec.errors()
	res.Enqueue = stats(rec.take()["Enqueue"])

	var client, server []time.Duration
	ratings := map[string][]float64{}
	var all []float64
	for _, o := range outcomes {
		if o.ticket == nil {
			continue
		}
		res.Matched++
		client = append(client, o.client)
		server = append(server, o.ticket.GetWait().AsDuration())
		ratings[o.ticket.GetMatchId()] = append(ratings[o.ticket.GetMatchId()], o.ticket.GetRating())
		all = append(all, o.ticket.GetRating())
	}
	res.TimeToMatch, res.ServerTimeToMatch = stats(client), stats(server)
	res.Matches = len(ratings)
	var spreads []float64
	for _, rs := range ratings {
		if len(rs) < cfg.Seats {
			res.BotMatches++
		}
		if len(rs) >= 2 {
			spreads = append(spreads, slices.Max(rs)-slices.Min(rs))
		}
	}
	res.Spread = distribution(spreads)
	if n := float64(len(all)); n > 0 {
		mean, sq := 0.0, 0.0
		for _, x := range all {
			mean += x
		}
		mean /= n
		for _, x := range all {
			sq += (x - mean) * (x - mean)
		}
		res.RatingMean, res.RatingSD = mean, math.Sqrt(sq/n)
	}
	if res.Matched < cfg.Players {
		return res, fmt.Errorf("bench: %d of %d players were matched", res.Matched, cfg.Players)
	}
	return res, ctx.Err()
}

// loadAvg is the machine's 1-minute load average (0 when unknown).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscan(strings.Fields(string(b))[0], &l)
	return l
}

// Print writes the human-readable report.
func (r *MMResult) Print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "hangar bench matchmaking: %d CPUs (%s), %s; %d nodes on one Postgres; load average %.1f -> %.1f\n",
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, c.Nodes, r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(w, "seeded %d rated matches in %.0fs: player ratings (mu) mean %.2f, sd %.2f\n",
		c.History, r.SeedSeconds, r.RatingMean, r.RatingSD)
	rate := "as fast as acknowledged"
	if c.Rate > 0 {
		rate = fmt.Sprintf("%.0f/s", c.Rate)
	}
	fmt.Fprintf(w, "%d players queued for %d-seat %s matches (%s, bots after %v) in %.1fs (%.0f enqueues/s); all matched after %.1fs\n",
		c.Players, c.Seats, map[bool]string{true: "rated", false: "unrated"}[c.Rated], rate, c.BotsAfter, r.EnqueueSeconds, r.EnqueuesPerSec, r.Seconds)
	fmt.Fprintf(w, "  %d matched into %d matches (%d with bots)\n", r.Matched, r.Matches, r.BotMatches)
	l := func(name string, s LatencyStats) {
		fmt.Fprintf(w, "  %-28s p50 %8.1f ms   p99 %8.1f ms   max %8.1f ms   mean %8.1f ms\n", name, s.P50MS, s.P99MS, s.MaxMS, s.MeanMS)
	}
	l("time to match (client)", r.TimeToMatch)
	l("time to match (ticket)", r.ServerTimeToMatch)
	l("Enqueue", r.Enqueue)
	s := r.Spread
	fmt.Fprintf(w, "  rating spread per match     p50 %8.2f      p90 %8.2f      p99 %8.2f      max %8.2f   mean %.2f (rating points)\n",
		s.P50, s.P90, s.P99, s.Max, s.Mean)
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "  errors: %v\n", r.Errors)
	} else {
		fmt.Fprintln(w, "  no RPC errors")
	}
}
