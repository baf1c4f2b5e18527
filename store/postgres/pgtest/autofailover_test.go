package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestLongFormationFailsOver: the formation's secondary takes over writes
// when the primary's machine is lost, its processes killed with SIGKILL
// (killed) or stopped with SIGSTOP (vanished: its connections stay open),
// and a multi-host URL finds it.
func TestLongFormationFailsOver(t *testing.T) {
	if os.Getenv("HANGAR_TEST_LONG") != "1" {
		t.Skip("a long test: set HANGAR_TEST_LONG=1")
	}
	t.Run("killed", func(t *testing.T) { formationFailsOver(t, (*Formation).Kill) })
	t.Run("vanished", func(t *testing.T) { formationFailsOver(t, (*Formation).Freeze) })
}

// formationFailsOver loses the primary by lose and checks that the
// secondary takes over writes, with nothing committed lost.
func formationFailsOver(t *testing.T, lose func(*Formation, int) error) {
	start := time.Now()
	f := Failover(t)
	t.Logf("formation ready in %v", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	write := func() error {
		conn, err := pgx.Connect(ctx, f.URL)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (x int); INSERT INTO t VALUES (1)")
		return err
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	old, err := f.Primary(ctx)
	if err != nil || old != 0 {
		t.Fatalf("primary %d, %v", old, err)
	}
	killed := time.Now()
	if err := lose(f, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitPrimary(90*time.Second, 1); err != nil {
		t.Fatalf("%v\n%s", err, f.Logs())
	}
	promoted := time.Since(killed)
	if err := write(); err != nil {
		t.Fatal(err)
	}
	var n int
	conn, err := pgx.Connect(ctx, f.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows, %v: the write before the kill was lost", n, err)
	}
	t.Logf("promoted %.1f s after the kill; the monitor's events:\n%s", promoted.Seconds(), f.Timeline(ctx, killed))
}
