package main

import (
	"bytes"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/peterbourgon/ff/v3"

	"github.com/hangarhq/hangar/server"
)

// TestVersionCommand: `hangar version` and `hangar --version` print the
// build's line, which names the toolchain.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version", "-version"} {
		var out bytes.Buffer
		if err := run([]string{arg}, &out, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("hangar %s: %v", arg, err)
		}
		b := server.Build()
		if got := strings.TrimSpace(out.String()); got != b.String() || !strings.HasPrefix(got, "hangar ") || !strings.Contains(got, b.GoVersion) {
			t.Errorf("hangar %s printed %q; want %q", arg, got, b.String())
		}
	}
}

// TestBuildInfoString: the version line names what the build stamp has.
func TestBuildInfoString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b    server.BuildInfo
		want string
	}{
		{server.BuildInfo{Version: "v0.1.0", Revision: "abc", Time: "2026-12-06T22:00:00Z", GoVersion: "go1.26.8"},
			"hangar v0.1.0 (commit abc, 2026-12-06T22:00:00Z, go1.26.8)"},
		{server.BuildInfo{Version: "(devel)", Revision: "abc", Modified: true, GoVersion: "go1.26.8"},
			"hangar (devel) (commit abc modified, go1.26.8)"},
		{server.BuildInfo{Version: "(devel)"}, "hangar (devel)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%+v: %q; want %q", tc.b, got, tc.want)
		}
	}
}

// TestEveryFlagHasAVariable: each of serve's flags is set by its
// environment variable, HANGAR_ and its name (the configuration page
// lists them so).
func TestEveryFlagHasAVariable(t *testing.T) {
	// Not parallel: it sets the environment.
	fs, _ := serveFlags("serve")
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		v := testValue(f)
		env := envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		t.Setenv(env, v)
		fs2, _ := serveFlags("serve")
		if err := ff.Parse(fs2, nil, ff.WithEnvVarPrefix(envPrefix)); err != nil {
			t.Errorf("%s=%s: %v", env, v, err)
			return
		}
		if got := fs2.Lookup(f.Name).Value.String(); got != v {
			t.Errorf("%s=%s: --%s is %q", env, v, f.Name, got)
		}
		os.Unsetenv(env)
	})
	if n < 60 {
		t.Fatalf("only %d flags", n)
	}
}

// testValue is a value of f's type that is not its default.
func testValue(f *flag.Flag) string {
	g, _ := f.Value.(flag.Getter)
	switch d := g.Get().(type) {
	case bool:
		return fmt.Sprint(!d)
	case time.Duration:
		return (d + 17*time.Second).String()
	case int:
		return fmt.Sprint(d + 7)
	case int64:
		return fmt.Sprint(d + 7)
	case float64:
		return fmt.Sprint(d + 0.5)
	}
	return "x-" + f.DefValue
}
