package archive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestPut(t *testing.T) {
	d := Dir(filepath.Join(t.TempDir(), "archive"))
	ctx := context.Background()
	if err := d.Put(ctx, "2026/05/01/m_a.txt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	// Put again replaces, whole.
	if err := d.Put(ctx, "2026/05/01/m_a.txt", []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(string(d), "2026", "05", "01", "m_a.txt"))
	if err != nil || string(b) != "two" {
		t.Errorf("file = %q, %v; want two", b, err)
	}
	// No temporary file is left behind.
	es, _ := os.ReadDir(filepath.Join(string(d), "2026", "05", "01"))
	if len(es) != 1 {
		t.Errorf("the directory holds %d entries, want 1", len(es))
	}
	for _, bad := range []string{"../x.txt", "/etc/x", "a/../../x", ""} {
		if err := d.Put(ctx, bad, []byte("x")); err == nil {
			t.Errorf("Put(%q): no error", bad)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Put(cctx, "m_b.txt", nil); err == nil {
		t.Error("Put with a canceled context: no error")
	}
}
