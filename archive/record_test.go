package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

func sample() store.Restore {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)
	return store.Restore{
		Match: store.Match{ID: "m_a", Game: "aeroplane", Status: store.StatusFinished, Version: 3, Creator: "p_ada",
			Players: []string{"p_ada", "p_bob"}, Private: true, Invited: []string{"p_bob"},
			Options: []byte{0, 1, 2, '\n'}, Summary: []byte("s"), Created: t0, Started: t0.Add(time.Second), Ended: t0.Add(time.Hour)},
		Players: []store.Player{{ID: "p_ada", DisplayName: "Ada \"<&>\"\n", Created: t0}, {ID: "p_bob", DisplayName: "Bob", Created: t0}},
		Events: []store.Event{
			{Seq: 1, Type: "hangar.v1.MatchCreated", Payload: []byte{0xff, 0, '\n'}, Author: "p_ada", Time: t0},
			{Seq: 2, Type: "x", Payload: []byte{}, Author: "p_bob", Time: t0.Add(time.Second)},
			{Seq: 3, Type: "y", Payload: []byte("z"), Time: t0.Add(time.Hour)},
		},
	}
}

// TestRecord: a record reads back as written, and a reader refuses
// changed bytes (the checksum), another format or version, an export that
// is not the one it was written beside, and lines out of place.
func TestRecord(t *testing.T) {
	r, export := sample(), []byte("# hangar match m_a\n")
	b, err := Encode(Record{Restore: r, Deleted: []string{"p_bob"}}, export)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 1+1+2+3 {
		t.Errorf("the record has %d lines, want 7 (header, row, 2 players, 3 events):\n%s", n, b)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if store.SameMatch(got.Match, r.Match) != "" || !reflect.DeepEqual(got.Players, r.Players) || !slices.Equal(got.Deleted, []string{"p_bob"}) {
		t.Errorf("decoded %+v\nwant %+v", got.Restore, r)
	}
	if !slices.EqualFunc(got.Events, r.Events, func(x, y store.Event) bool {
		return x.Seq == y.Seq && x.Type == y.Type && bytes.Equal(x.Payload, y.Payload) && x.Author == y.Author && x.Time.Equal(y.Time)
	}) {
		t.Errorf("events %+v\nwant %+v", got.Events, r.Events)
	}
	if err := got.CheckExport(export); err != nil {
		t.Error(err)
	}
	if err := got.CheckExport(append(export, 'x')); !errors.Is(err, ErrChecksum) {
		t.Errorf("another export: %v, want ErrChecksum", err)
	}

	head, body, _ := bytes.Cut(b, []byte("\n"))
	flipped := slices.Clone(b)
	flipped[len(head)+10] ^= 1
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"a changed byte":    {flipped, ErrChecksum},
		"a dropped event":   {b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1], ErrChecksum},
		"version 2":         {append(bytes.Replace(head, []byte(`"version":1`), []byte(`"version":2`), 1), append([]byte("\n"), body...)...), ErrFormat},
		"another format":    {append(bytes.Replace(head, []byte(Format), []byte("x"), 1), append([]byte("\n"), body...)...), ErrFormat},
		"no header":         {[]byte(`{"format":"hangar.archived-match"}`), ErrFormat},
		"the export's text": {export, ErrFormat},
	} {
		if _, err := Decode(tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	// An event before the row, with a checksum that fits: out of place.
	lines := strings.SplitAfter(string(body), "\n")
	swapped := lines[len(lines)-2] + strings.Join(lines[:len(lines)-2], "")
	if _, err := Decode([]byte(rehead(t, string(head), swapped))); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "out of place") {
		t.Errorf("an event before the row: %v, want ErrFormat (out of place)", err)
	}
}

// rehead is head with the checksum of body, and body.
func rehead(t *testing.T, head, body string) string {
	t.Helper()
	i := strings.Index(head, `"sha256":"`)
	if i < 0 {
		t.Fatalf("no sha256 in %s", head)
	}
	sum := sha256.Sum256([]byte(body))
	return head[:i] + `"sha256":"` + hex.EncodeToString(sum[:]) + `"}` + "\n" + body
}

// TestGetList: Get reads what Put wrote; List names the files with a
// suffix, in order, leaving out a Put's temporary file.
func TestGetList(t *testing.T) {
	d := Dir(t.TempDir())
	ctx := context.Background()
	for _, n := range []string{"2026/05/02/m_b.jsonl", "2026/05/01/m_a.jsonl", "2026/05/01/m_a.txt"} {
		if err := d.Put(ctx, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(string(d), "2026", "05", "01", ".m_c.jsonl.123"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	names, err := d.List(ctx, ".jsonl")
	if err != nil || !slices.Equal(names, []string{"2026/05/01/m_a.jsonl", "2026/05/02/m_b.jsonl"}) {
		t.Errorf("List = %v, %v", names, err)
	}
	if b, err := d.Get(ctx, "2026/05/01/m_a.txt"); err != nil || string(b) != "2026/05/01/m_a.txt" {
		t.Errorf("Get = %q, %v", b, err)
	}
	if _, err := d.Get(ctx, "2026/05/01/m_z.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Get of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := d.Get(ctx, "../x"); err == nil {
		t.Error("Get outside the directory: no error")
	}
	if _, err := Dir(filepath.Join(string(d), "none")).List(ctx, ".jsonl"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("List of a missing directory: %v, want ErrNotExist", err)
	}
}
