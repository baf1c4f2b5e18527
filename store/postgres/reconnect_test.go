package postgres_test

import (
	"context"
	"net"
	"net/url"
	"testing"

	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestMultiHostURL: a URL naming a host where nothing listens and then the
// database's server, with target_session_attrs=read-write (as in front of
// an HA pair, whose failed primary is listed first), opens a store that
// writes.
func TestMultiHostURL(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = dead + "," + u.Host
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	q.Set("pool_max_conns", "8")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	s, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("open %s: %v", u.Redacted(), err)
	}
	defer s.Close()
	for i := range 16 {
		endOne(t, s, "multi-"+string(rune('a'+i)), i)
	}
}
