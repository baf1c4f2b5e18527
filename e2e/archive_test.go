package e2e

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
)

// archiveFiles returns the files under dir (slash-separated names) and
// their contents.
func archiveFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// crashAfter is an archive directory whose n-th Put writes the file and
// then "crashes": it cancels the run's context, so the events of that
// match are never removed (each match puts two files: its export, then its
// record).
type crashAfter struct {
	dir    archive.Dir
	n      int
	cancel context.CancelFunc
	mu     sync.Mutex
	puts   int
}

func (c *crashAfter) Put(ctx context.Context, name string, data []byte) error {
	if err := c.dir.Put(ctx, name, data); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.puts++; c.puts == c.n {
		c.cancel()
	}
	return nil
}

// pastState is what the history service says of Ada and Bob, for
// comparison before and after archiving.
func pastState(t *testing.T, ada, bob *client) []proto.Message {
	t.Helper()
	var out []proto.Message
	for _, c := range []*client{ada, bob} {
		out = append(out, c.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{}))
		st, err := c.history().GetPlayerStats(c.ctx(), &hangarv1.GetPlayerStatsRequest{Game: "aeroplane"})
		if err != nil {
			t.Fatal(err)
		}
		rh, err := c.history().GetRatingHistory(c.ctx(), &hangarv1.GetRatingHistoryRequest{Game: "aeroplane"})
		if err != nil {
			t.Fatal(err)
		}
		lb, err := c.history().ListLeaderboard(c.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st, rh, lb)
	}
	return out
}

// TestArchive plays matches to their ends (rated, against bots, an
// abandoned lobby) next to matches still open and in play, and archives
// the ended ones: first in a run that "crashes" after writing the second
// match's files and before removing its events, then with hangar archive
// in pages of one, which resumes. Each match is archived exactly once, its
// .txt file is its export (its .jsonl file beside it), the history, statistics, ratings and leaderboard are
// unchanged, and reads of an archived match's state or events, and
// commands on it, answer NOT_FOUND with reason MATCH_ARCHIVED, on a node
// that had it in memory and on a new one. A second run archives nothing.
func TestArchive(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		m1 := newMatch(t, ada, 2, 0, bob)
		playAll(t, m1.GetMatchId(), clientSeats(m1, ada, bob))
		m2 := newMatch(t, ada, 3, 2)
		playAll(t, m2.GetMatchId(), clientSeats(m2, ada))
		m3 := newMatch(t, bob, 2, 0)
		if _, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: m3.GetMatchId()}); err != nil {
			t.Fatal(err)
		}
		open := newMatch(t, ada, 2, 0)
		inPlay := newMatch(t, bob, 2, 0, ada)
		ended := []string{m1.GetMatchId(), m2.GetMatchId(), m3.GetMatchId()}
		exports := map[string]string{}
		final := map[string]*hangarv1.Match{}
		for _, id := range ended {
			r, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
			if err != nil {
				t.Fatal(err)
			}
			exports[id] = r.GetText()
			final[id] = ada.get(t, id)
		}
		names := map[string]string{} // archive name -> match
		for _, id := range ended {
			m := final[id]
			names[service.ArchiveName(store.Match{ID: id, Ended: m.GetEndTime().AsTime()})] = id
		}
		before := pastState(t, ada, bob)
		time.Sleep(time.Millisecond) // every match ended strictly before the runs' cutoff

		// A run that crashes after writing the second match's files.
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		crash := &crashAfter{dir: archive.Dir(dir), n: 4, cancel: cancel}
		r, err := n.Archive(ctx, crash, service.ArchiveOptions{Page: 2})
		if err == nil || r.Matches != 1 {
			t.Fatalf("the crashing run: %+v, %v; want one match archived, then an error", r, err)
		}
		files := archiveFiles(t, dir)
		if len(files) != 4 {
			t.Fatalf("after the crash, %d files: %v", len(files), slices.Sorted(mapKeys(files)))
		}
		// The first match is archived; the second was written but is still
		// in the store, whole.
		first, second := ended[0], ended[1]
		if _, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: first}); true {
			wantErr(t, "ExportMatch of the archived match", err, codes.NotFound, "MATCH_ARCHIVED")
		}
		if r, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: second}); err != nil || r.GetText() != exports[second] {
			t.Fatalf("ExportMatch of the match written before the crash: %v", err)
		}

		// hangar archive resumes, in pages of one.
		args := []string{"archive", "--dir", dir, "--older-than", "0s", "--page", "1"}
		if cfg.DatabaseURL != "" {
			args = append(args, "--database-url", cfg.DatabaseURL)
		} else {
			args = append(args, "--data-dir", cfg.DataDir)
		}
		out, err := hangar(t, args...)
		if err != nil {
			t.Fatalf("hangar archive: %v\n%s", err, out)
		}
		if !strings.HasPrefix(out, "archived 2 matches") {
			t.Errorf("hangar archive says %q; want 2 matches archived", out)
		}
		files = archiveFiles(t, dir)
		if len(files) != 6 {
			t.Errorf("%d files: %v", len(files), slices.Sorted(mapKeys(files)))
		}
		for name, id := range names {
			if files[name] != exports[id] {
				t.Errorf("file %s:\n%s\nwant the export of %s:\n%s", name, files[name], id, exports[id])
			}
			if rec := strings.TrimSuffix(name, ".txt") + ".jsonl"; !strings.HasPrefix(files[rec], `{"format":"hangar.archived-match","version":1,"match":"`+id+`"`) {
				t.Errorf("the record %s: %.200q", rec, files[rec])
			}
		}
		// Exactly once: nothing is left to archive.
		if out, err := hangar(t, args...); err != nil || !strings.HasPrefix(out, "archived 0 matches") {
			t.Errorf("a second run: %q, %v", out, err)
		}

		// History is as it was, on this node.
		after := pastState(t, ada, bob)
		for i := range before {
			if !proto.Equal(before[i], after[i]) {
				t.Errorf("history read %d changed by archiving:\nbefore %v\nafter  %v", i, before[i], after[i])
			}
		}

		// This node had the matches in memory: what needs their events says
		// they are archived. GetMatch at the latest version still answers
		// from memory; a past version needs the events.
		checkArchived := func(c *client, id string, latest bool) {
			t.Helper()
			_, err := c.history().ExportMatch(c.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
			wantErr(t, "ExportMatch", err, codes.NotFound, "MATCH_ARCHIVED")
			_, err = c.matches.ListMatchEvents(c.ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id})
			wantErr(t, "ListMatchEvents", err, codes.NotFound, "MATCH_ARCHIVED")
			_, err = c.matches.GetMatch(c.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: 1})
			wantErr(t, "GetMatch at version 1", err, codes.NotFound, "MATCH_ARCHIVED")
			wctx, wcancel := context.WithTimeout(c.ctx(), 10*time.Second)
			defer wcancel()
			stream, err := c.matches.WatchMatch(wctx, &hangarv1.WatchMatchRequest{MatchId: id})
			if err == nil {
				_, err = stream.Recv()
			}
			wantErr(t, "WatchMatch", err, codes.NotFound, "MATCH_ARCHIVED")
			if latest {
				_, err = c.matches.GetMatch(c.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
				wantErr(t, "GetMatch", err, codes.NotFound, "MATCH_ARCHIVED")
				_, err = c.matches.JoinMatch(c.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
				wantErr(t, "JoinMatch", err, codes.NotFound, "MATCH_ARCHIVED")
			}
		}
		for _, id := range ended {
			checkArchived(ada, id, false)
		}

		// A new node knows them only from the store.
		n.Shutdown(context.Background())
		n2 := node(t, cfg)
		ada2, bob2 := ada.reconnect(t, n2.Addr()), bob.reconnect(t, n2.Addr())
		for _, id := range ended {
			checkArchived(ada2, id, true)
		}
		after = pastState(t, ada2, bob2)
		for i := range before {
			if !proto.Equal(before[i], after[i]) {
				t.Errorf("history read %d on a new node:\nbefore %v\nafter  %v", i, before[i], after[i])
			}
		}
		// The matches that had not ended are untouched.
		if m := ada2.get(t, open.GetMatchId()); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_OPEN {
			t.Errorf("the open match: %v", m.GetStatus())
		}
		if evs := ada2.events(t, inPlay.GetMatchId()); len(evs) != int(inPlay.GetVersion()) {
			t.Errorf("the match in play has %d events, want %d", len(evs), inPlay.GetVersion())
		}
		_, err = ada2.matches.GetMatch(ada2.ctx(), &hangarv1.GetMatchRequest{MatchId: "m_nosuchmatch"})
		wantErr(t, "GetMatch of an unknown match", err, codes.NotFound, "NOT_FOUND")
	})
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestArchiveNode: a node with --archive-dir archives the matches that
// ended long enough ago by itself, and forgets them: its own GetMatch then
// answers MATCH_ARCHIVED.
func TestArchiveNode(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		dir := t.TempDir()
		cfg.ArchiveDir, cfg.ArchiveOlderThan, cfg.ArchiveEvery = dir, time.Millisecond, 50*time.Millisecond
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		m := newMatch(t, ada, 2, 0)
		// The leave's own answer holds the end time: the node may archive
		// the match before any later read reaches it.
		left, err := ada.matches.LeaveMatch(ada.ctx(), &hangarv1.LeaveMatchRequest{MatchId: m.GetMatchId()})
		if err != nil {
			t.Fatal(err)
		}
		final := left.GetMatch()
		if final.GetEndTime() == nil {
			t.Fatalf("the last seat left and the match did not end: %v", final)
		}
		name := service.ArchiveName(store.Match{ID: m.GetMatchId(), Ended: final.GetEndTime().AsTime()})
		for deadline := time.Now().Add(20 * time.Second); ; {
			_, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: m.GetMatchId()})
			if reason(err) == "MATCH_ARCHIVED" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GetMatch 20 s after the match ended: %v", err)
			}
			time.Sleep(20 * time.Millisecond) // polling the node's schedule: nothing to wait on
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !strings.HasPrefix(string(b), "# hangar match "+m.GetMatchId()) || !strings.Contains(string(b), "ended status=abandoned") {
			t.Errorf("the archive file %s: %q, %v", name, b, err)
		}
	})
}
