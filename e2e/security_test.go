package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// rpc is one method of Hangar's API.
type rpc struct {
	full   string // /package.Service/Method
	name   string
	desc   protoreflect.MethodDescriptor
	stream bool
	// bidi: the client streams too (Play).
	bidi bool
}

// hangarRPCs lists every method of the hangar.v1 services.
func hangarRPCs(t *testing.T) []rpc {
	var out []rpc
	protoregistry.GlobalFiles.RangeFilesByPackage("hangar.v1", func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				out = append(out, rpc{full: fmt.Sprintf("/%s/%s", s.FullName(), m.Name()), name: string(m.Name()),
					desc: m, stream: m.IsStreamingServer(), bidi: m.IsStreamingClient()})
			}
		}
		return true
	})
	if len(out) < 24 {
		t.Fatalf("found %d methods", len(out))
	}
	return out
}

// request is a well-formed request of r aimed at match (and player, and
// matchmaking ticket), filled by field name, so that a refusal is the
// credentials', not the request's. Play's is the command its stream sends
// after opening on match: an Act.
func (r rpc) request(t *testing.T, match, player, ticket string, version int64) proto.Message {
	if r.bidi {
		act := rpc{desc: hangarv1.File_hangar_v1_move_proto.Services().ByName("MoveService").Methods().ByName("Act")}
		return &hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: &hangarv1.PlayCommand{
			Command: &hangarv1.PlayCommand_Act{Act: act.request(t, match, player, ticket, version).(*hangarv1.ActRequest)}}}}
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(r.desc.Input().FullName())
	if err != nil {
		t.Fatal(err)
	}
	msg := mt.New()
	fields := msg.Descriptor().Fields()
	set := func(name string, v protoreflect.Value) {
		if f := fields.ByName(protoreflect.Name(name)); f != nil {
			msg.Set(f, v)
		}
	}
	set("match_id", protoreflect.ValueOfString(match))
	set("ticket_id", protoreflect.ValueOfString(ticket))
	set("player_id", protoreflect.ValueOfString(player))
	set("expected_version", protoreflect.ValueOfInt64(version))
	set("request_id", protoreflect.ValueOfString(reqID()+"-security-0123456789"))
	set("display_name", protoreflect.ValueOfString("Mallory"))
	set("external_id", protoreflect.ValueOfString("user-1"))
	set("seat_count", protoreflect.ValueOfInt32(2))
	set("game", protoreflect.ValueOfString("aeroplane"))
	set("offer_id", protoreflect.ValueOfString("of_security"))
	if f := fields.ByName("kind"); f != nil && f.Kind() == protoreflect.EnumKind {
		msg.Set(f, protoreflect.ValueOfEnum(1)) // a draw: refused for the caller, not the request
	}
	set("text", protoreflect.ValueOfString("hello"))
	if f := fields.ByName("seq"); f != nil && f.Kind() == protoreflect.Int64Kind {
		msg.Set(f, protoreflect.ValueOfInt64(1))
	}
	if f := fields.ByName("player_ids"); f != nil {
		l := msg.Mutable(f).List()
		l.Append(protoreflect.ValueOfString(player))
	}
	if f := fields.ByName("action"); f != nil {
		msg.Set(f, protoreflect.ValueOfMessage(rollAction.ProtoReflect()))
	}
	return msg.Interface()
}

// call invokes r with req on conn; a server stream is read to its end or
// first error. Play's stream opens on the command's match, sends the
// command and reads up to its result: a refused command is its error.
func (r rpc) call(ctx context.Context, conn grpc.ClientConnInterface, req proto.Message) error {
	mt, _ := protoregistry.GlobalTypes.FindMessageByName(r.desc.Output().FullName())
	if !r.stream {
		return conn.Invoke(ctx, r.full, req, mt.New().Interface())
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if r.bidi {
		return playOnce(ctx, conn, req.(*hangarv1.PlayRequest))
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, r.full)
	if err != nil {
		return err
	}
	if err := s.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	// The first message says whether the stream was accepted; an accepted
	// one is a success here.
	if err := s.RecvMsg(mt.New().Interface()); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// playOnce opens a Play stream on cmd's match, sends cmd and reads up to its
// result: the result's error, or the stream's.
func playOnce(ctx context.Context, conn grpc.ClientConnInterface, cmd *hangarv1.PlayRequest) error {
	s, err := hangarv1.NewMoveServiceClient(conn).Play(ctx)
	if err != nil {
		return err
	}
	open := &hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{
		MatchId: cmd.GetCommand().GetAct().GetMatchId() + cmd.GetCommand().GetListLegalActions().GetMatchId()}}}
	for _, m := range []*hangarv1.PlayRequest{open, cmd} {
		if err := s.Send(m); errors.Is(err, io.EOF) {
			break // refused: the status comes with the receive
		} else if err != nil {
			return err
		}
	}
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil // the match ended before the command was read
		}
		if err != nil {
			return err
		}
		if res := r.GetResult(); res != nil {
			return status.ErrorProto(res.GetError())
		}
	}
}

// noToken are the methods anyone may call without a player's token.
var noToken = map[string]bool{"CreatePlayer": true, "GetBoard": true, "ListGames": true, "SignInExternalPlayer": true}

// TestEveryRPCRefusesBadCredentials calls every RPC of the API with no
// token, malformed ones, an expired one, a revoked one and another player's,
// and with bad tokens of the node's identity provider (expired, another
// audience's or issuer's, forged, unsigned) and another user's. Each must be
// refused with UNAUTHENTICATED (and the reason that says why) unless the
// method needs no token; with another player's token no command may act on
// a match that player does not sit in; nothing is written, and nothing
// answers INTERNAL or UNKNOWN.
func TestEveryRPCRefusesBadCredentials(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		is := newIssuer(t)
		cfg.Service = service.Options{Now: clock.Now, Sessions: service.SessionOptions{TokenTTL: time.Hour}, OIDC: is.oidcOptions()}
		n := node(t, cfg)
		expired := newClient(t, n.Addr(), "Eve")
		clock.Advance(50 * time.Minute)
		ada, bob, revoked := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Rev")
		clock.Advance(20 * time.Minute) // Eve's token is 70 minutes old: expired; the others' 20
		if _, err := revoked.players.SignOut(revoked.ctx(), &hangarv1.SignOutRequest{}); err != nil {
			t.Fatal(err)
		}
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1,
			Options: aeroOptions(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		version := ada.get(t, id).GetVersion() // Ada's turn to roll: the bot waits
		tk := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 4, KeepWaiting: true})
		conn := dial(t, n.Addr())

		type creds struct {
			name   string
			header string // the authorization header; "" sends none
			reason string // the reason an authenticated method answers
		}
		bad := []creds{
			{"no token", "", "TOKEN_MISSING"},
			{"no scheme", expired.token, "AUTHORIZATION_MALFORMED"},
			{"basic", "Basic YWRhOmFkYQ==", "AUTHORIZATION_MALFORMED"},
			{"empty bearer", "Bearer ", "AUTHORIZATION_MALFORMED"},
			{"unknown token", "Bearer hgr_" + "0123456789abcdefghijklmnopqrstuv", "TOKEN_UNKNOWN"},
			{"truncated token", "Bearer " + ada.token[:len(ada.token)-3], "TOKEN_UNKNOWN"},
			{"expired token", "Bearer " + expired.token, "TOKEN_EXPIRED"},
			{"revoked token", "Bearer " + revoked.token, "TOKEN_REVOKED"},
			{"expired JWT", "Bearer " + is.token(t, is.claims("mallory", clock.Now().Add(-2*time.Hour))), "TOKEN_EXPIRED"},
			{"JWT of another audience", "Bearer " + is.token(t, is.claims("mallory", clock.Now(), "aud", "another-app")), "UNAUTHENTICATED"},
			{"JWT of another issuer", "Bearer " + is.token(t, is.claims("mallory", clock.Now(), "iss", "https://elsewhere.example")), "UNAUTHENTICATED"},
			{"JWT not valid yet", "Bearer " + is.token(t, is.claims("mallory", clock.Now(), "nbf", clock.Now().Add(time.Hour).Unix())), "UNAUTHENTICATED"},
			{"forged JWT", "Bearer " + is.forgedJWT(t, is.claims("mallory", clock.Now())), "UNAUTHENTICATED"},
			{"unsigned JWT", "Bearer " + unsignedJWT(is.claims("mallory", clock.Now())), "UNAUTHENTICATED"},
		}
		for _, r := range hangarRPCs(t) {
			for _, c := range bad {
				ctx := context.Background()
				if c.header != "" {
					ctx = metadata.AppendToOutgoingContext(ctx, "authorization", c.header)
				}
				err := r.call(ctx, conn, r.request(t, id, ada.id, tk.GetTicketId(), version))
				switch code := status.Code(err); {
				case code == codes.Internal || code == codes.Unknown:
					t.Errorf("%s with %s: %v", r.name, c.name, err)
				case noToken[r.name]:
					// Not refused for the token: CreatePlayer and GetBoard need
					// none; SignInExternalPlayer wants an API key, and says so to
					// anything shaped like a player's token, valid or not.
					if r.name == "SignInExternalPlayer" && code != codes.Unauthenticated &&
						(code != codes.PermissionDenied || reason(err) != "API_KEY_REQUIRED") {
						t.Errorf("%s with %s: %v", r.name, c.name, err)
					}
				case code != codes.Unauthenticated || reason(err) != c.reason:
					t.Errorf("%s with %s: %v (reason %q), want UNAUTHENTICATED %s", r.name, c.name, err, reason(err), c.reason)
				}
			}
		}

		// Another player's valid token: reads of a public match are allowed;
		// no command acts on Ada's match.
		mayAct := map[string]bool{
			"CreatePlayer": true, "CreateMatch": true, "Enqueue": true, // makes the caller's own
			"RefreshToken": true, "RevokeToken": true, "SignOut": true, // the caller's own tokens
			"PostChatMessage": true, // a public match's spectators' channel is anyone's
		}
		others := []struct {
			name string
			ctx  context.Context
		}{
			{"another player's token", bob.ctx()},
			{"another user's JWT", withToken(context.Background(), is.token(t, is.claims("mallory", clock.Now(), "name", "Mallory")))},
		}
		for _, o := range others {
			for _, r := range hangarRPCs(t) {
				if r.name == "RevokeToken" || r.name == "SignOut" {
					continue // they end Bob's own session: covered by the sessions tests
				}
				err := r.call(o.ctx, conn, r.request(t, id, ada.id, tk.GetTicketId(), version))
				code := status.Code(err)
				if code == codes.Internal || code == codes.Unknown {
					t.Errorf("%s with %s: %v", r.name, o.name, err)
				}
				command := r.desc.Input().Fields().ByName("request_id") != nil || r.name == "SignInExternalPlayer" || r.bidi
				if command && !mayAct[r.name] && err == nil {
					t.Errorf("%s with %s succeeded on Ada's match", r.name, o.name)
				}
			}
		}
		if got := ada.get(t, id).GetVersion(); got != version {
			t.Fatalf("Ada's match moved from version %d to %d under refused calls", version, got)
		}
		if got := ada.ticket(t, tk.GetTicketId()); got.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED {
			t.Fatalf("Ada's ticket is %v after refused calls", got.GetStatus())
		}
	})
}

// TestEveryRPCKeepsToItsCredentials calls every RPC with a valid player
// token, a plain API key, a key of scope server acting for a player, and
// keys of scope server and admin naming none: each gets exactly what its
// scope allows (auth.ActAs, auth.Admin) and otherwise PERMISSION_DENIED
// with the reason that says why; nothing answers INTERNAL or UNKNOWN.
func TestEveryRPCKeepsToItsCredentials(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		_, plain := createKey(t, cfg, "studio")
		_, serverKey := createScopedKey(t, cfg, "studio", "server")
		_, adminKey := createScopedKey(t, cfg, "ops", "admin")
		ada := newClient(t, n.Addr(), "Ada")
		if _, err := ada.players.SignInExternalPlayer(withToken(context.Background(), plain),
			&hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"}); err != nil {
			t.Fatal(err)
		}
		conn := dial(t, n.Addr())
		actAs := map[string]bool{"GetPlayer": true, "GetMatch": true, "ListMatches": true, "ListMatchEvents": true,
			"ListPlayerMatches": true, "ExportMatch": true, "GetPlayerStats": true, "GetRatingHistory": true,
			"ListNotices": true, "Enqueue": true, "GetTicket": true, "CancelTicket": true}
		for _, r := range hangarRPCs(t) {
			admin := strings.HasPrefix(r.full, "/hangar.v1.AdminService/")
			for _, c := range []struct {
				name string
				ctx  context.Context
				// want is the reason of the refusal, "" for none (the call
				// may still fail for its request: a missing match).
				want string
			}{
				{"a player token", ada.ctx(), map[bool]string{true: "API_KEY_REQUIRED"}[admin]},
				{"a plain key", withToken(context.Background(), plain),
					map[bool]string{true: "API_KEY_SCOPE", false: "API_KEY_NOT_A_PLAYER"}[admin]},
				{"a plain key acting", actingFor(plain, "u1"), "API_KEY_SCOPE"},
				{"a server key acting", actingFor(serverKey, "u1"),
					map[bool]string{true: "", false: "NOT_ACTABLE_FOR_PLAYER"}[actAs[r.name]]},
				{"a server key", withToken(context.Background(), serverKey),
					map[bool]string{true: "", false: "API_KEY_NOT_A_PLAYER"}[admin]},
				{"an admin key", withToken(context.Background(), adminKey),
					map[bool]string{true: "", false: "API_KEY_NOT_A_PLAYER"}[admin]},
			} {
				switch r.name {
				case "CreatePlayer", "GetBoard", "ListGames":
					continue // open to anyone
				case "SignInExternalPlayer":
					if c.name == "a player token" || c.name == "a plain key" || c.name == "a server key" || c.name == "an admin key" {
						continue // the sign-in itself: TestAPIKeys
					}
					c.want = map[bool]string{true: "API_KEY_SCOPE", false: "NOT_ACTABLE_FOR_PLAYER"}[c.name == "a plain key acting"]
				}
				if admin && c.name == "a server key" {
					c.want = "" // it may name its players by external id; the request names a player id
					if r.name == "EndMatch" {
						c.want = "API_KEY_SCOPE" // scope admin only
					}
				}
				if r.name == "SignOut" || r.name == "RevokeToken" || (admin && c.want == "") {
					continue // they act: TestAPIKeyScopes
				}
				err := r.call(c.ctx, conn, r.request(t, "m_nothere", ada.id, "t_nothere", 1))
				code := status.Code(err)
				switch {
				case code == codes.Internal || code == codes.Unknown:
					t.Errorf("%s with %s: %v", r.name, c.name, err)
				case c.want != "" && (code != codes.PermissionDenied || reason(err) != c.want):
					t.Errorf("%s with %s: %v (reason %q), want PERMISSION_DENIED %s", r.name, c.name, err, reason(err), c.want)
				case c.want == "" && code == codes.PermissionDenied:
					t.Errorf("%s with %s: %v (reason %q), want no refusal of the credentials", r.name, c.name, err, reason(err))
				}
			}
		}
	})
}
