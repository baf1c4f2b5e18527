package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/server"
)

// TestAPIReference: /docs/api is a page that renders the node's own
// /openapi.yaml with the Redoc script the node serves itself, under a
// policy that keeps the page to the node.
func TestAPIReference(t *testing.T) {
	t.Parallel()
	s, err := server.New(server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir()},
		server.WithGames(aeroplane.Game{}), server.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, page := get("/docs/api")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, `spec-url="/openapi.yaml"`) || !strings.Contains(page, `src="/docs/api/redoc.standalone.js"`) {
		t.Fatalf("GET /docs/api: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("GET /docs/api: Content-Security-Policy %q", csp)
	}
	resp, js := get("/docs/api/redoc.standalone.js")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || len(js) < 100_000 {
		t.Fatalf("GET /docs/api/redoc.standalone.js: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(js))
	}
	if resp, _ := get("/docs/api/other.js"); resp.StatusCode != 404 {
		t.Errorf("GET /docs/api/other.js: %d, want 404", resp.StatusCode)
	}
}
