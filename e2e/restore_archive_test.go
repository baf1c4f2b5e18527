package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
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

// storeArgs are the flags naming cfg's store.
func storeArgs(cfg server.Config) []string {
	if cfg.DatabaseURL != "" {
		return []string{"--database-url", cfg.DatabaseURL}
	}
	return []string{"--data-dir", cfg.DataDir}
}

// restoreCmd runs hangar archive restore from dir into cfg's store.
func restoreCmd(t *testing.T, cfg server.Config, dir string, more ...string) (string, error) {
	t.Helper()
	args := append([]string{"archive", "restore", "--dir", dir}, storeArgs(cfg)...)
	return hangar(t, append(args, more...)...)
}

// writeArchive writes files (archiveFiles) into a new directory.
func writeArchive(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// reseal is record with its body edited by edit and its header's checksum
// taken again: a record whose checksum holds but whose content was
// changed.
func reseal(t *testing.T, record string, edit func(body string) string) string {
	t.Helper()
	head, body, _ := strings.Cut(record, "\n")
	i := strings.Index(head, `"sha256":"`)
	if i < 0 {
		t.Fatalf("no checksum in %q", head)
	}
	body = edit(body)
	sum := sha256.Sum256([]byte(body))
	return head[:i] + `"sha256":"` + hex.EncodeToString(sum[:]) + `"}` + "\n" + body
}

// archived is what the API said of a match before it was archived.
type archivedMatch struct {
	export   string
	events   []*hangarv1.Event
	ada, eve *hangarv1.Match
}

// sameMatch checks that c reads match id as it was before archiving:
// its export byte for byte (and equal to the archive's file), its events
// and its GetMatch (want).
func sameMatch(t *testing.T, c *client, id string, was archivedMatch, want *hangarv1.Match, file string) {
	t.Helper()
	r, err := c.history().ExportMatch(c.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("ExportMatch(%s) after restoring: %v", id, err)
	}
	if r.GetText() != was.export || r.GetText() != file {
		t.Errorf("ExportMatch(%s) after restoring:\n%s\nbefore archiving:\n%s\nthe archive's file:\n%s", id, r.GetText(), was.export, file)
	}
	evs := c.events(t, id)
	if len(evs) != len(was.events) {
		t.Fatalf("%s has %d events after restoring, %d before archiving", id, len(evs), len(was.events))
	}
	for i := range evs {
		if !proto.Equal(evs[i], was.events[i]) {
			t.Errorf("%s event %d after restoring: %v\nbefore archiving: %v", id, i+1, evs[i], was.events[i])
		}
	}
	if got := c.get(t, id); !proto.Equal(got, want) {
		t.Errorf("GetMatch(%s) after restoring: %v\nbefore archiving: %v", id, got, want)
	}
}

// TestArchiveRestore archives ended matches (Aeroplane ones finished
// between players and against bots, an abandoned lobby, a Carcassonne one)
// and puts them back with hangar archive restore: first after a run that
// crashed between writing a match's files and removing its events (that
// match is there already; the one archived comes back), then, with every
// match archived, into the same database and into a fresh one. Each
// restored match's export is the archive's file and the export before
// archiving, byte for byte; its events and GetMatch are as they were, and
// in the same database so is the players' history. A second restore
// restores nothing. A corrupt record, another format version, a record
// that differs from the database's match and an id the archive lacks are
// refused, writing nothing.
func TestArchiveRestore(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testArchiveRestore(t, b.config(t), b.config(t))
		})
	}
}

func testArchiveRestore(t *testing.T, cfg, fresh server.Config) {
	n := node(t, cfg)
	ada, bob, eve := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Eve")
	m1 := newMatch(t, ada, 2, 0, bob)
	playAll(t, m1.GetMatchId(), clientSeats(m1, ada, bob))
	m2 := newMatch(t, ada, 3, 2)
	playAll(t, m2.GetMatchId(), clientSeats(m2, ada))
	m3 := newMatch(t, bob, 2, 0)
	if _, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: m3.GetMatchId()}); err != nil {
		t.Fatal(err)
	}
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, BotSeats: 2,
		ObserveOnly: true, RequestId: reqID(), BotLevel: hangarv1.BotLevel_BOT_LEVEL_GREEDY})
	if err != nil {
		t.Fatal(err)
	}
	m4 := cr.GetMatch()
	if w := startWatcher(ada.ctx(), ada, m4.GetMatchId(), 0); <-w.done != nil {
		t.Fatal("watching the Carcassonne match to its end failed")
	}
	inPlay := newMatch(t, bob, 2, 0, ada)
	ended := []string{m1.GetMatchId(), m2.GetMatchId(), m3.GetMatchId(), m4.GetMatchId()}
	was := map[string]archivedMatch{}
	txt := map[string]string{} // match -> the name of its export
	for _, id := range ended {
		r, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		a := archivedMatch{export: r.GetText(), events: ada.events(t, id), ada: ada.get(t, id), eve: eve.get(t, id)}
		if a.ada.GetEndTime() == nil {
			t.Fatalf("match %s has not ended: %v", id, a.ada.GetStatus())
		}
		was[id] = a
		txt[id] = service.ArchiveName(store.Match{ID: id, Ended: a.ada.GetEndTime().AsTime()})
	}
	if !strings.Contains(was[m4.GetMatchId()].export, "game=carcassonne status=finished") ||
		!strings.Contains(was[m3.GetMatchId()].export, "status=abandoned") {
		t.Fatalf("the matches did not end as planned:\n%s\n%s", was[m4.GetMatchId()].export, was[m3.GetMatchId()].export)
	}
	history := pastState(t, ada, bob)
	time.Sleep(time.Millisecond) // every match ended strictly before the runs' cutoff

	// A run that crashes after writing the second match's files, before
	// removing its events; the restore puts the first back and finds the
	// second there.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if r, err := n.Archive(ctx, &crashAfter{dir: archive.Dir(dir), n: 4, cancel: cancel}, service.ArchiveOptions{}); err == nil || r.Matches != 1 {
		t.Fatalf("the crashing run: %+v, %v; want one match archived, then an error", r, err)
	}
	var first, second string
	for _, id := range ended {
		_, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		_, written := archiveFiles(t, dir)[txt[id]]
		switch {
		case reason(err) == "MATCH_ARCHIVED":
			first = id
		case written:
			second = id
		}
	}
	if first == "" || second == "" {
		t.Fatalf("after the crash: archived %q, written %q; files %v", first, second, archiveFiles(t, dir))
	}
	out, err := restoreCmd(t, cfg, dir)
	if err != nil || !strings.Contains(out, "restored "+first+" (") || !strings.Contains(out, second+" is in the database already") ||
		!strings.Contains(out, "restored 1 matches into") {
		t.Fatalf("restoring after the crash: %v\n%s", err, out)
	}
	files := archiveFiles(t, dir)
	sameMatch(t, ada, first, was[first], was[first].ada, files[txt[first]])

	// Every ended match archived.
	args := append([]string{"archive", "--dir", dir, "--older-than", "0s"}, storeArgs(cfg)...)
	if out, err := hangar(t, args...); err != nil || !strings.HasPrefix(out, "archived 4 matches") {
		t.Fatalf("hangar archive: %v\n%s", err, out)
	}
	files = archiveFiles(t, dir)
	if len(files) != 8 {
		t.Fatalf("%d files in the archive, want 8: %v", len(files), files)
	}
	rec := func(id string) string { return strings.TrimSuffix(txt[id], ".txt") + ".jsonl" }
	archivedStill := func(what string) {
		t.Helper()
		_, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: ended[0]})
		wantErr(t, what, err, codes.NotFound, "MATCH_ARCHIVED")
	}

	// Refusals write nothing.
	id := ended[0]
	for name, tc := range map[string]struct {
		export, record, says string
	}{
		"a corrupt record": {files[txt[id]], strings.Replace(files[rec(id)], `"seq":2,`, `"seq":3,`, 1), "checksum mismatch: the record"},
		"a changed export": {files[txt[id]] + "\n", files[rec(id)], "checksum mismatch: the export"},
		"a row of another status": {files[txt[id]], reseal(t, files[rec(id)], func(body string) string {
			return strings.Replace(body, `"status":"finished"`, `"status":"abandoned"`, 1)
		}), "fold to finished"},
		"format version 2": {files[txt[id]], strings.Replace(files[rec(id)], `"version":1,`, `"version":2,`, 1), "not a record of this format"},
		"another row": {files[txt[id]], reseal(t, files[rec(id)], func(body string) string {
			return strings.Replace(body, `"summary":"`, `"summary":"AAAA`, 1)
		}), "differs from the archive's (summary)"},
	} {
		bad := map[string]string{txt[id]: tc.export, rec(id): tc.record}
		out, err := restoreCmd(t, cfg, writeArchive(t, bad), "--match", id)
		if err == nil || !strings.Contains(out, "refused "+id+": ") || !strings.Contains(out, tc.says) {
			t.Errorf("restoring %s: %v\n%s\nwant a refusal saying %q", name, err, out, tc.says)
		}
		archivedStill("after restoring " + name)
	}
	if out, err := restoreCmd(t, cfg, dir, "--match", "m_nosuchmatch"); err == nil || !strings.Contains(out, "refused m_nosuchmatch: no record") {
		t.Errorf("restoring a match the archive lacks: %v\n%s", err, out)
	}
	archivedStill("after the refusals")

	// Into the same database.
	out, err = restoreCmd(t, cfg, dir)
	if err != nil || !strings.Contains(out, "restored 4 matches into") {
		t.Fatalf("hangar archive restore: %v\n%s", err, out)
	}
	for _, id := range ended {
		sameMatch(t, ada, id, was[id], was[id].ada, files[txt[id]])
	}
	after := pastState(t, ada, bob)
	for i := range history {
		if !proto.Equal(history[i], after[i]) {
			t.Errorf("history read %d after archiving and restoring:\nbefore %v\nafter  %v", i, history[i], after[i])
		}
	}
	if out, err := restoreCmd(t, cfg, dir); err != nil || !strings.Contains(out, "restored 0 matches into") || !strings.Contains(out, "4 there already") {
		t.Errorf("a second restore: %v\n%s", err, out)
	}
	if evs := ada.events(t, inPlay.GetMatchId()); len(evs) != int(inPlay.GetVersion()) {
		t.Errorf("the match in play has %d events, want %d", len(evs), inPlay.GetVersion())
	}

	// Into a fresh database (migrated by the restore), read on a node of
	// its own by a player of its own.
	if out, err := restoreCmd(t, fresh, dir); err != nil || !strings.Contains(out, "restored 4 matches into") {
		t.Fatalf("hangar archive restore into a fresh database: %v\n%s", err, out)
	}
	n2 := node(t, fresh)
	eve2 := newClient(t, n2.Addr(), "Eve")
	for _, id := range ended {
		sameMatch(t, eve2, id, was[id], was[id].eve, files[txt[id]])
	}
	for _, c := range []*client{ada, bob} {
		r, err := eve2.players.GetPlayer(eve2.ctx(), &hangarv1.GetPlayerRequest{PlayerId: c.id})
		if err != nil || r.GetPlayer().GetDisplayName() == "" {
			t.Errorf("GetPlayer(%s) on the fresh database: %v, %v", c.id, r, err)
		}
	}
	if out, err := restoreCmd(t, fresh, dir); err != nil || !strings.Contains(out, "restored 0 matches into") {
		t.Errorf("a second restore into the fresh database: %v\n%s", err, out)
	}
}

// TestArchiveRestoreDeletedPlayer: a player deleted before its match was
// archived stays deleted when the match is restored into a fresh
// database: the export is the archived one, naming store.DeletedName, and
// no read shows the name the player had (the events still hold it).
func TestArchiveRestoreDeletedPlayer(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			cfg, fresh := b.config(t), b.config(t)
			const bobName = "Bobby Tables"
			n := node(t, cfg)
			_, plain := createKey(t, cfg, "studio")
			_, adminKey := createScopedKey(t, cfg, "ops", "admin")
			ada := newClient(t, n.Addr(), "Ada")
			signed, err := ada.players.SignInExternalPlayer(withToken(context.Background(), plain),
				&hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: bobName})
			if err != nil {
				t.Fatal(err)
			}
			bob := &client{conn: ada.conn, token: signed.GetToken(), id: signed.GetPlayer().GetPlayerId(),
				players: ada.players, matches: ada.matches, moves: ada.moves}
			m := newMatch(t, ada, 2, 0, bob)
			playAll(t, m.GetMatchId(), clientSeats(m, ada, bob))
			id := m.GetMatchId()
			admin := hangarv1.NewAdminServiceClient(ada.conn)
			if _, err := admin.DeletePlayer(withToken(context.Background(), adminKey),
				&hangarv1.DeletePlayerRequest{PlayerId: bob.id, Reason: "account deleted"}); err != nil {
				t.Fatal(err)
			}
			r, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
			if err != nil || strings.Contains(r.GetText(), bobName) || !strings.Contains(r.GetText(), store.DeletedName) {
				t.Fatalf("the export after the deletion: %v\n%s", err, r.GetText())
			}
			time.Sleep(time.Millisecond) // the match ended strictly before the run's cutoff
			dir := t.TempDir()
			if a, err := n.Archive(context.Background(), archive.Dir(dir), service.ArchiveOptions{}); err != nil || a.Matches != 1 {
				t.Fatalf("archive: %+v, %v", a, err)
			}
			if out, err := restoreCmd(t, fresh, dir); err != nil || !strings.Contains(out, "restored 1 matches into") {
				t.Fatalf("hangar archive restore into a fresh database: %v\n%s", err, out)
			}
			n2 := node(t, fresh)
			eve := newClient(t, n2.Addr(), "Eve")
			got, err := eve.history().ExportMatch(eve.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
			if err != nil || got.GetText() != r.GetText() {
				t.Errorf("the export on the fresh database: %v\n%s\nwant\n%s", err, got.GetText(), r.GetText())
			}
			if mt := eve.get(t, id); mentions(mt, bobName) {
				t.Errorf("GetMatch on the fresh database names the deleted player: %v", mt)
			}
			p, err := eve.players.GetPlayer(eve.ctx(), &hangarv1.GetPlayerRequest{PlayerId: bob.id})
			if err != nil || p.GetPlayer().GetDisplayName() != store.DeletedName {
				t.Errorf("GetPlayer of the deleted player on the fresh database: %v, %v", p, err)
			}
		})
	}
}
