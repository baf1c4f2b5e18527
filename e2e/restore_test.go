package e2e

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestLongRestoreDrill is docs/restore.md's drill: a cluster archiving its
// WAL, a base backup, a node playing matches before and after a named
// restore point, and a point-in-time restore of the backup to that point
// into a new cluster on another port. A node on the restored database
// answers for every match that ended before the point exactly as before
// (ExportMatch byte for byte, GetMatch, the events, the players' history,
// statistics, ratings and leaderboard), the match in play stands where it
// stood at the point, and nothing after the point exists: not the moves,
// not the matches, not the players. hangar archive run on the restored
// database then writes each ended match's export, byte for byte.
func TestLongRestoreDrill(t *testing.T) {
	nodetest.Long(t)
	a := pgtest.Archiving(t)
	const db = "hangar_drill"
	cfg := server.Config{DatabaseURL: a.Database(t, db)}
	backup, err := a.BaseBackup()
	if err != nil {
		t.Fatal(err)
	}

	n := node(t, cfg)
	ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
	r := rand.New(rand.NewPCG(55, 55))
	// Before the point: a match played to its end, one against bots, an
	// abandoned lobby, a match in play and an open one.
	m1 := newMatch(t, ada, 2, 0, bob)
	playAll(t, m1.GetMatchId(), clientSeats(m1, ada, bob))
	m2 := newMatch(t, ada, 3, 2)
	playAll(t, m2.GetMatchId(), clientSeats(m2, ada))
	m3 := newMatch(t, bob, 2, 0)
	if _, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: m3.GetMatchId()}); err != nil {
		t.Fatal(err)
	}
	inPlay := newMatch(t, bob, 2, 0, ada)
	inPlaySeats := map[int32]*client{}
	for c, s := range clientSeats(inPlay, ada, bob) {
		inPlaySeats[s] = c
	}
	atPoint := step(t, inPlaySeats, inPlay.GetMatchId(), 20, r)
	open := newMatch(t, ada, 2, 0)

	ended := []string{m1.GetMatchId(), m2.GetMatchId(), m3.GetMatchId()}
	exports, finals, logs := map[string]string{}, map[string]*hangarv1.Match{}, map[string][]*hangarv1.Event{}
	for _, id := range append(ended, inPlay.GetMatchId(), open.GetMatchId()) {
		x, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		exports[id], finals[id], logs[id] = x.GetText(), ada.get(t, id), ada.events(t, id)
	}
	past := pastState(t, ada, bob)
	if err := a.RestorePoint("drill"); err != nil {
		t.Fatal(err)
	}

	// After the point: the match in play goes on, another match is played
	// to its end, another created, a new player registers.
	after := step(t, inPlaySeats, inPlay.GetMatchId(), 20, r)
	if after.GetVersion() <= atPoint.GetVersion() {
		t.Fatalf("the match in play did not move after the point: version %d", after.GetVersion())
	}
	m4 := newMatch(t, ada, 2, 0, bob)
	playAll(t, m4.GetMatchId(), clientSeats(m4, ada, bob))
	m5 := newMatch(t, bob, 2, 0)
	cal := newClient(t, n.Addr(), "Cal")
	n.Shutdown(context.Background())

	restored, err := a.Restore(backup, "drill")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restored.Stop)
	rcfg := server.Config{DatabaseURL: restored.DatabaseURL(db)}
	n2 := node(t, rcfg)
	ada2, bob2, cal2 := ada.reconnect(t, n2.Addr()), bob.reconnect(t, n2.Addr()), cal.reconnect(t, n2.Addr())

	for id, want := range exports {
		x, err := ada2.history().ExportMatch(ada2.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		if err != nil {
			t.Fatalf("ExportMatch %s on the restored database: %v", id, err)
		}
		if x.GetText() != want {
			t.Errorf("the export of %s on the restored database:\n%s\nbefore the point:\n%s", id, x.GetText(), want)
		}
		if got := ada2.get(t, id); !proto.Equal(got, finals[id]) {
			t.Errorf("GetMatch %s on the restored database:\n%v\nbefore the point:\n%v", id, got, finals[id])
		}
		got := ada2.events(t, id)
		if len(got) != len(logs[id]) {
			t.Fatalf("%s has %d events on the restored database, %d before the point", id, len(got), len(logs[id]))
		}
		for i := range got {
			if !proto.Equal(got[i], logs[id][i]) {
				t.Errorf("event %d of %s on the restored database:\n%v\nbefore the point:\n%v", i+1, id, got[i], logs[id][i])
			}
		}
	}
	if got := ada2.get(t, inPlay.GetMatchId()); got.GetVersion() != atPoint.GetVersion() {
		t.Errorf("the match in play is at version %d on the restored database; it was at %d at the point", got.GetVersion(), atPoint.GetVersion())
	}
	if got := pastState(t, ada2, bob2); len(got) == len(past) {
		for i := range past {
			if !proto.Equal(got[i], past[i]) {
				t.Errorf("history read %d on the restored database:\n%v\nbefore the point:\n%v", i, got[i], past[i])
			}
		}
	}
	// Nothing after the point exists.
	for _, id := range []string{m4.GetMatchId(), m5.GetMatchId()} {
		_, err := ada2.matches.GetMatch(ada2.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
		wantErr(t, "GetMatch of a match created after the point", err, codes.NotFound, "NOT_FOUND")
	}
	_, err = cal2.players.GetPlayer(cal2.ctx(), &hangarv1.GetPlayerRequest{})
	wantErr(t, "GetPlayer of a player registered after the point", err, codes.Unauthenticated, "TOKEN_UNKNOWN")

	// hangar archive on the restored database writes the exports of the
	// matches that ended before the point, byte for byte.
	dir := t.TempDir()
	out, err := hangar(t, "archive", "--dir", dir, "--older-than", "0s", "--database-url", rcfg.DatabaseURL)
	if err != nil {
		t.Fatalf("hangar archive: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "archived 3 matches") {
		t.Errorf("hangar archive says %q; want 3 matches archived", out)
	}
	files := archiveFiles(t, dir)
	if len(files) != 2*len(ended) {
		t.Errorf("%d archive files, want %d (an export and a record per match)", len(files), 2*len(ended))
	}
	for _, id := range ended {
		name := service.ArchiveName(store.Match{ID: id, Ended: finals[id].GetEndTime().AsTime()})
		if files[name] != exports[id] {
			t.Errorf("archive file %s:\n%s\nwant the export of %s before the point:\n%s", name, files[name], id, exports[id])
		}
	}
}
