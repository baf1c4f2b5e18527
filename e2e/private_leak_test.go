package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// privateFixture is a node with a private match in play (Ada and Bob seated,
// Dan invited, some moves made) and a finished, rated private match of Ada
// and Bob; Eve is a stranger to both.
type privateFixture struct {
	n                  *server.Server
	ada, bob, dan, eve *client
	live, done         string
	// rematch is the rematch of done (private too); live has an open offer.
	rematch string
}

func newPrivateFixture(t *testing.T, cfg server.Config) *privateFixture {
	t.Helper()
	f := &privateFixture{n: node(t, cfg)}
	addr := f.n.Addr()
	f.ada, f.bob, f.dan, f.eve = newClient(t, addr, "Ada"), newClient(t, addr, "Bob"), newClient(t, addr, "Dan"), newClient(t, addr, "Eve")
	start := func(invited ...string) *hangarv1.Match {
		cr, err := f.ada.matches.CreateMatch(f.ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
			Private: true, InvitedPlayerIds: invited, Options: aeroOptions(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := f.bob.matches.AcceptInvitation(f.bob.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id}); err != nil {
			t.Fatal(err)
		}
		m := f.ada.get(t, id)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("private match is %v", m.GetStatus())
		}
		return m
	}
	done := start(f.bob.id)
	f.done = done.GetMatchId()
	if _, err := f.ada.moves.Act(f.ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: f.done, ExpectedVersion: done.GetVersion(), RequestId: reqID()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ada.matches.LeaveMatch(f.ada.ctx(), &hangarv1.LeaveMatchRequest{MatchId: f.done, RequestId: reqID()}); err != nil {
		t.Fatal(err)
	}
	if st := f.ada.get(t, f.done).GetStatus(); st == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("the finished private match is %v", st)
	}
	live := start(f.bob.id, f.dan.id)
	f.live = live.GetMatchId()
	if _, err := f.ada.moves.Act(f.ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: f.live, ExpectedVersion: live.GetVersion(), RequestId: reqID()}); err != nil {
		t.Fatal(err)
	}
	// An open offer in the live match, and a rematch of the finished one
	// (Ada left it: Bob's rematch has no one else to ask and starts at
	// once).
	if _, err := f.bob.offer(f.live, hangarv1.OfferKind_OFFER_KIND_ABORT); err != nil {
		t.Fatal(err)
	}
	if _, err := f.bob.offer(f.done, hangarv1.OfferKind_OFFER_KIND_REMATCH); err != nil {
		t.Fatal(err)
	}
	if f.rematch = f.bob.get(t, f.done).GetRematchMatchId(); f.rematch == "" {
		t.Fatal("Bob's rematch did not start")
	}
	// Ada's own rating history names the finished private match: a
	// stranger's must not.
	if _, ok := ratingChanges(t, f.ada)[f.done]; !ok {
		t.Fatalf("Ada's rating history lacks the finished private match %s", f.done)
	}
	return f
}

// leaks walks msg and returns what in it names one of ids (in any string)
// or one of versions (in an integer field whose name says version or seq).
func leaks(msg protoreflect.Message, ids []string, versions []int64) []string {
	var out []string
	var walk func(path string, m protoreflect.Message)
	check := func(path string, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
		switch fd.Kind() {
		case protoreflect.StringKind:
			for _, id := range ids {
				if strings.Contains(v.String(), id) {
					out = append(out, fmt.Sprintf("%s = %q", path, v.String()))
				}
			}
		case protoreflect.BytesKind:
			for _, id := range ids {
				if strings.Contains(string(v.Bytes()), id) {
					out = append(out, path+" names a private match")
				}
			}
		case protoreflect.Int64Kind, protoreflect.Int32Kind, protoreflect.Uint64Kind, protoreflect.Uint32Kind,
			protoreflect.Sint64Kind, protoreflect.Sint32Kind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
			name := strings.ToLower(string(fd.Name()))
			n := fmt.Sprint(v.Interface())
			if strings.Contains(name, "version") || strings.Contains(name, "seq") {
				for _, ver := range versions {
					if n == fmt.Sprint(ver) {
						out = append(out, fmt.Sprintf("%s = %d", path, ver))
					}
				}
			}
		case protoreflect.MessageKind, protoreflect.GroupKind:
			walk(path, v.Message())
		}
	}
	walk = func(path string, m protoreflect.Message) {
		if a, ok := m.Interface().(interface{ GetTypeUrl() string }); ok {
			// A google.protobuf.Any: walk what it holds.
			if any, ok := m.Interface().(interface {
				UnmarshalNew() (proto.Message, error)
			}); ok {
				if inner, err := any.UnmarshalNew(); err == nil {
					walk(path+"("+a.GetTypeUrl()+")", inner.ProtoReflect())
					return
				}
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			p := path + "." + string(fd.Name())
			switch {
			case fd.IsList():
				for i := range v.List().Len() {
					check(fmt.Sprintf("%s[%d]", p, i), fd, v.List().Get(i))
				}
			case fd.IsMap():
				v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
					for _, id := range ids {
						if strings.Contains(k.String(), id) {
							out = append(out, p+" key names a private match")
						}
					}
					if sv, ok := mv.Interface().(string); ok {
						for _, ver := range versions {
							if sv == fmt.Sprint(ver) && strings.Contains(strings.ToLower(k.String()), "version") {
								out = append(out, fmt.Sprintf("%s[%s] = %s", p, k.String(), sv))
							}
						}
					}
					check(p+"["+k.String()+"]", fd.MapValue(), mv)
					return true
				})
			default:
				check(p, fd, v)
			}
			return true
		})
	}
	walk(string(msg.Descriptor().Name()), msg)
	return out
}

// collect calls r with req and returns every response message it sent and
// its error. A server stream is read until it ends, fails or has been
// quiet past ctx's deadline (a stream of the caller's own, as WatchPlayer).
func collect(ctx context.Context, conn grpc.ClientConnInterface, r rpc, req proto.Message) ([]proto.Message, error) {
	mt, _ := protoregistry.GlobalTypes.FindMessageByName(r.desc.Output().FullName())
	if r.bidi {
		return nil, r.call(ctx, conn, req)
	}
	if !r.stream {
		out := mt.New().Interface()
		err := conn.Invoke(ctx, r.full, req, out)
		return []proto.Message{out}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, r.full)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	var out []proto.Message
	for {
		m := mt.New().Interface()
		if err := s.RecvMsg(m); errors.Is(err, io.EOF) {
			return out, nil
		} else if status.Code(err) == codes.DeadlineExceeded {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

// TestStrangerLearnsNothingOfPrivateMatches calls every RPC of the API as
// a stranger (a signed-in player neither seated nor invited) aimed at a
// private match in play and at a finished one (and at their players), with
// expected_version 1 and with the match's true version: no response, error
// detail or stream message may name either match or carry its version, and
// each error must be exactly the one an unknown match id gets.
func TestStrangerLearnsNothingOfPrivateMatches(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		f := newPrivateFixture(t, cfg)
		conn := dial(t, f.n.Addr())
		ids := []string{f.live, f.done, f.rematch}
		versions := []int64{f.ada.get(t, f.live).GetVersion(), f.ada.get(t, f.done).GetVersion()}
		for _, r := range hangarRPCs(t) {
			switch r.name {
			case "RevokeToken", "SignOut":
				continue // they end Eve's own session
			}
			for _, target := range ids[:2] {
				unknown := "m_" + strings.Repeat("z", len(target)-2)
				for _, version := range []int64{1, versions[0], versions[1]} {
					what := fmt.Sprintf("%s on %s at version %d", r.name, target, version)
					resps, err := collect(f.eve.ctx(), conn, r, r.request(t, target, f.ada.id, "", version))
					for _, m := range resps {
						for _, l := range leaks(m.ProtoReflect(), ids, versions) {
							t.Errorf("%s: response leaks %s", what, l)
						}
					}
					st := status.Convert(err)
					for _, d := range st.Proto().GetDetails() {
						if m, derr := d.UnmarshalNew(); derr == nil {
							for _, l := range leaks(m.ProtoReflect(), ids, versions) {
								t.Errorf("%s: error detail leaks %s", what, l)
							}
						}
					}
					if r.desc.Input().Fields().ByName("match_id") == nil && !r.bidi {
						continue // the call names no match: its answer is the caller's own
					}
					// The same call on an unknown match: the same answer.
					_, uerr := collect(f.eve.ctx(), conn, r, r.request(t, unknown, f.ada.id, "", version))
					ust := status.Convert(uerr)
					if st.Code() != ust.Code() || reason(err) != reason(uerr) ||
						strings.ReplaceAll(st.Message(), target, unknown) != ust.Message() || len(st.Details()) != len(ust.Details()) {
						t.Errorf("%s: %v (reason %q, details %v), but on an unknown match %v (reason %q, details %v)",
							what, err, reason(err), st.Details(), uerr, reason(uerr), ust.Details())
					}
					for i, d := range st.Details() {
						if i < len(ust.Details()) {
							if a, ok := d.(*errdetails.ErrorInfo); ok {
								if b, ok := ust.Details()[i].(*errdetails.ErrorInfo); !ok || len(a.GetMetadata()) != len(b.GetMetadata()) {
									t.Errorf("%s: error metadata %v differs from an unknown match's", what, a.GetMetadata())
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestStrangersRatingHistory: a stranger's GetRatingHistory (gRPC and
// REST) of a player who finished a private match names it nowhere; the
// player and the other seated player see it.
func TestStrangersRatingHistory(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		f := newPrivateFixture(t, cfg)
		for _, c := range []*client{f.eve, f.dan} {
			r, err := c.history().GetRatingHistory(c.ctx(), &hangarv1.GetRatingHistoryRequest{PlayerId: f.ada.id, Game: "aeroplane"})
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range r.GetChanges() {
				if ch.GetMatchId() == f.done {
					t.Errorf("%s sees Ada's private match %s in her rating history: %v", c.id, f.done, ch)
				}
			}
		}
		r, err := f.bob.history().GetRatingHistory(f.bob.ctx(), &hangarv1.GetRatingHistoryRequest{PlayerId: f.ada.id, Game: "aeroplane"})
		if err != nil || len(r.GetChanges()) != 1 || r.GetChanges()[0].GetMatchId() != f.done {
			t.Errorf("Bob, seated in it, sees Ada's rating history as %v, %v", r.GetChanges(), err)
		}
		url := fmt.Sprintf("http://%s/v1/players/%s/ratings?game=aeroplane", f.n.Addr(), f.ada.id)
		code, _, body := restDo(t, http.MethodGet, url, f.eve.token, "", "")
		if code != http.StatusOK || strings.Contains(string(body), f.done) {
			t.Errorf("REST ratings of Ada by a stranger: %d %s", code, body)
		}
		if code, _, body := restDo(t, http.MethodGet, url, f.ada.token, "", ""); code != http.StatusOK || !strings.Contains(string(body), f.done) {
			t.Errorf("REST ratings of Ada by Ada: %d %s", code, body)
		}
		st, err := f.eve.history().GetPlayerStats(f.eve.ctx(), &hangarv1.GetPlayerStatsRequest{PlayerId: f.ada.id, Game: "aeroplane"})
		if err != nil || st.GetStats().GetMatchesPlayed() != 1 || st.GetStats().GetLastMatchEndTime() != nil {
			t.Errorf("Ada's statistics seen by a stranger: %v, %v (want the count, and no end time of a private match)", st, err)
		}
	})
}

// TestStrangerCommandsWithAVersion: a stranger's commands with
// expected_version 1 on a private match are refused as on an unknown match,
// with no current_version.
func TestStrangerCommandsWithAVersion(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		f := newPrivateFixture(t, cfg)
		e := f.eve
		calls := map[string]func(id string) error{
			"Roll": func(id string) error {
				_, err := e.moves.Act(e.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: id, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
			"Move": func(id string) error {
				_, err := e.moves.Act(e.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: 1, RequestId: reqID(),
					Action: packed(&aeroplanev1.Move{Notation: "T0"})})
				return err
			},
			"JoinMatch": func(id string) error {
				_, err := e.matches.JoinMatch(e.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
			"LeaveMatch": func(id string) error {
				_, err := e.matches.LeaveMatch(e.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
			"StartMatch": func(id string) error {
				_, err := e.matches.StartMatch(e.ctx(), &hangarv1.StartMatchRequest{MatchId: id, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
			"AcceptInvitation": func(id string) error {
				_, err := e.matches.AcceptInvitation(e.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
			"MakeOffer": func(id string) error {
				_, err := e.offers().MakeOffer(e.ctx(), &hangarv1.MakeOfferRequest{MatchId: id, Kind: hangarv1.OfferKind_OFFER_KIND_REMATCH, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
			"AnswerOffer": func(id string) error {
				// The live match's open offer, by its real id.
				offer := f.bob.get(t, f.live).GetOffer().GetOfferId()
				_, err := e.offers().AnswerOffer(e.ctx(), &hangarv1.AnswerOfferRequest{MatchId: id, OfferId: offer, Accept: true, ExpectedVersion: 1, RequestId: reqID()})
				return err
			},
		}
		for name, call := range calls {
			for _, id := range []string{f.live, f.done, f.rematch} {
				err := call(id)
				wantCode(t, name+" by a stranger with expected_version 1", err, codes.NotFound, "NOT_FOUND")
				st := status.Convert(err)
				for _, d := range st.Details() {
					if info, ok := d.(*errdetails.ErrorInfo); ok && len(info.GetMetadata()) > 0 {
						t.Errorf("%s: error metadata %v", name, info.GetMetadata())
					}
				}
			}
		}
	})
}

// TestDeclinedViewerLosesOpenStreams: Dan, invited, watches the private
// match (WatchMatch, the REST watch, Play) and declines: each stream ends
// NOT_FOUND with nothing from the decline on.
func TestDeclinedViewerLosesOpenStreams(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		f := newPrivateFixture(t, cfg)
		ctx, cancel := context.WithTimeout(f.dan.ctx(), time.Minute)
		defer cancel()
		v := f.dan.get(t, f.live).GetVersion()
		w, err := f.dan.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: f.live})
		if err != nil {
			t.Fatal(err)
		}
		for seen := int64(0); seen < v; {
			r, err := w.Recv()
			if err != nil {
				t.Fatal(err)
			}
			seen = r.GetEvent().GetSeq()
		}
		pc := mustPlay(t, f.dan, f.live, v)
		defer pc.close()
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/v1/matches/%s:watch?after_seq=%d", f.n.Addr(), f.live, v), nil)
		req.Header.Set("Authorization", "Bearer "+f.dan.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("REST watch by Dan: %d", resp.StatusCode)
		}

		if _, err := f.dan.matches.DeclineInvitation(f.dan.ctx(), &hangarv1.DeclineInvitationRequest{MatchId: f.live, RequestId: reqID()}); err != nil {
			t.Fatal(err)
		}
		// Another event after the decline: none may reach Dan.
		if _, err := f.bob.moves.Act(f.bob.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: f.live, ExpectedVersion: v + 1, RequestId: reqID()}); err != nil &&
			status.Code(err) != codes.FailedPrecondition {
			t.Fatal(err)
		}
		for {
			r, err := w.Recv()
			if err != nil {
				wantCode(t, "WatchMatch after declining", err, codes.NotFound, "NOT_FOUND")
				break
			}
			if r.GetEvent().GetSeq() > v {
				t.Fatalf("WatchMatch sent event %d (%T) after Dan declined at %d", r.GetEvent().GetSeq(), r.GetEvent().GetBody(), v+1)
			}
		}
		for r := range pc.msgs {
			for _, ev := range append(r.GetEvents().GetEvents(), r.GetEvent()) {
				if ev.GetEvent().GetSeq() > v {
					t.Fatalf("Play sent event %d after Dan declined", ev.GetEvent().GetSeq())
				}
			}
		}
		<-pc.done
		wantCode(t, "Play after declining", pc.err, codes.NotFound, "NOT_FOUND")
		rd := bufio.NewReader(resp.Body)
		ended := false
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 {
				var r hangarv1.WatchMatchResponse
				if protojson.Unmarshal(line, &r) == nil && r.GetEvent().GetSeq() > v {
					t.Fatalf("REST watch sent event %d after Dan declined", r.GetEvent().GetSeq())
				}
				if strings.Contains(string(line), "NOT_FOUND") {
					ended = true
				}
			}
			if err != nil {
				break
			}
		}
		if !ended {
			t.Error("the REST watch did not end with NOT_FOUND")
		}
	})
}
