package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// httpRefusal is a refusal's body over REST (a google.rpc.Status) or
// Connect (a Connect error): its message and its ErrorInfo reason.
type httpRefusal struct {
	message, reason string
}

func readRefusal(t *testing.T, body []byte) httpRefusal {
	t.Helper()
	var v struct {
		Message string `json:"message"`
		Details []struct {
			Reason string `json:"reason"`
			Debug  struct {
				Reason string `json:"reason"`
			} `json:"debug"` // Connect
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("the body is not a JSON status: %v: %s", err, body)
	}
	r := httpRefusal{message: v.Message}
	for _, d := range v.Details {
		r.reason = d.Reason + d.Debug.Reason
	}
	return r
}

// TestHTTPMistakesTeach: the mistakes a new client makes over HTTP (REST
// and Connect) are each answered with a 4xx and a status whose ErrorInfo
// reason names the mistake, and whose message says what would be right.
// The table is the one in issue 53's report (go test -v logs it).
func TestHTTPMistakesTeach(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr()
	m, ada, _ := startedMatch(t, n.Addr())
	id, v := m.GetMatchId(), m.GetVersion()
	const js = "application/json"
	bearer := "Bearer " + ada.token
	act := func(action string) string {
		return fmt.Sprintf(`{"expectedVersion":"%d","requestId":"r-%s","action":%s}`, v, strings.Repeat("x", 16), action)
	}
	cases := []struct {
		name, method, path, contentType, auth, body string
		status                                      int
		reason, hint                                string
		allow                                       string
	}{
		{"unknown path", "GET", "/v1/nothing", "", bearer, "", 404, "NO_ROUTE", "/openapi.yaml", ""},
		{"a path cut short", "GET", "/v1/matche", "", bearer, "", 404, "NO_ROUTE", "did you mean GET /v1/matches?", ""},
		{"a misspelt path with an id", "GET", "/v1/matchs/" + id, "", bearer, "", 404, "NO_ROUTE", "did you mean GET /v1/matches/{match_id}?", ""},
		{"wrong method", "DELETE", "/v1/matches", "", bearer, "", 405, "METHOD_NOT_ALLOWED", "takes GET or POST", "GET, POST"},
		{"GET of a POST route", "GET", "/v1/matches/" + id + ":join", "", bearer, "", 405, "METHOD_NOT_ALLOWED", "takes POST", "POST"},
		{"curl's default content type", "POST", "/v1/matches", "application/x-www-form-urlencoded", bearer, "game=aeroplane", 415, "UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/json", ""},
		{"text/plain", "POST", "/v1/matches", "text/plain", bearer, `{"game":"aeroplane"}`, 415, "UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/json", ""},
		{"malformed JSON", "POST", "/v1/matches", js, bearer, `{"game":"aeroplane",`, 400, "MALFORMED_REQUEST", "send one JSON object of CreateMatchRequest's fields", ""},
		{"not an object", "POST", "/v1/matches", js, bearer, `["aeroplane"]`, 400, "MALFORMED_REQUEST", "must be a JSON object of CreateMatchRequest's fields", ""},
		{"unknown field", "POST", "/v1/matches", js, bearer, `{"game":"aeroplane","seats":2}`, 400, "MALFORMED_REQUEST", `unknown field "seats" in CreateMatchRequest; did you mean "seat_count"?`, ""},
		{"unknown field, none near", "POST", "/v1/players", js, "", `{"name":"Ada"}`, 400, "MALFORMED_REQUEST", "its fields are display_name, request_id", ""},
		{"wrong type", "POST", "/v1/matches", js, bearer, `{"game":"aeroplane","seatCount":"two"}`, 400, "MALFORMED_REQUEST", `"seat_count" takes an integer`, ""},
		{"bad enum value", "POST", "/v1/matches", js, bearer, `{"game":"aeroplane","seatCount":2,"botLevel":"HARD"}`, 400, "MALFORMED_REQUEST", "valid values: BOT_LEVEL_UNSPECIFIED, BOT_LEVEL_GREEDY, BOT_LEVEL_RANDOM", ""},
		{"a duration as a number", "POST", "/v1/matches", js, bearer, `{"game":"aeroplane","seatCount":2,"turnTime":30}`, 400, "MALFORMED_REQUEST", `e.g. "30s"`, ""},
		{"bad enum in the query", "GET", "/v1/matches?filter=MATCH_FILTER_OPNE", "", bearer, "", 400, "MALFORMED_REQUEST", "did you mean MATCH_FILTER_OPEN?", ""},
		{"unknown query parameter", "GET", "/v1/matches?filtr=MATCH_FILTER_OPEN", "", bearer, "", 400, "MALFORMED_REQUEST", `did you mean "filter"?`, ""},
		{"query parameter of the wrong type", "GET", "/v1/matches?filter=MATCH_FILTER_OPEN&pageSize=ten", "", bearer, "", 400, "MALFORMED_REQUEST", "takes an integer", ""},
		{"unknown game", "POST", "/v1/matches", js, bearer, `{"game":"aeroplan","seatCount":2}`, 400, "UNKNOWN_GAME", "hosted: aeroplane, carcassonne", ""},
		{"no token", "GET", "/v1/matches/" + id, "", "", "", 401, "TOKEN_MISSING", `send the header "Authorization: Bearer <token>"`, ""},
		{"the token without Bearer", "GET", "/v1/matches/" + id, "", ada.token, "", 401, "AUTHORIZATION_MALFORMED", `send "Authorization: Bearer <token>"`, ""},
		{"another scheme", "GET", "/v1/matches/" + id, "", "Basic YWRhOnNlY3JldA==", "", 401, "AUTHORIZATION_MALFORMED", "not Bearer", ""},
		{"unknown token", "GET", "/v1/matches/" + id, "", "Bearer hgr_nope", "", 401, "TOKEN_UNKNOWN", "unknown token", ""},
		{"a move in bad notation", "POST", "/v1/matches/" + id + ":act", js, bearer, act(`{"@type":"type.googleapis.com/hangar.aeroplane.v1.Move","notation":"A9"}`), 400, "INVALID_ARGUMENT", "expected T<plane>", ""},
		{"a move when a roll is due", "POST", "/v1/matches/" + id + ":act", js, bearer, act(`{"@type":"type.googleapis.com/hangar.aeroplane.v1.Move","notation":"T0"}`), 400, "WRONG_PHASE", "legal now: Roll", ""},
		{"a misspelt field of an action", "POST", "/v1/matches/" + id + ":act", js, bearer, act(`{"@type":"type.googleapis.com/hangar.aeroplane.v1.Move","notaton":"T0"}`), 400, "MALFORMED_REQUEST", `unknown field "notaton" in "action"; did you mean "notation"?`, ""},
		{"a bad enum value in a game's options", "POST", "/v1/matches", js, bearer, `{"game":"aeroplane","seatCount":2,"options":{"@type":"type.googleapis.com/hangar.aeroplane.v1.Options","firstPlayer":"SEAT0"}}`, 400, "MALFORMED_REQUEST", `for field "options.first_player"; valid values: FIRST_PLAYER_UNSPECIFIED`, ""},
		{"another game's action", "POST", "/v1/matches/" + id + ":act", js, bearer, act(`{"@type":"type.googleapis.com/hangar.carcassonne.v1.Move","notation":"pass"}`), 400, "UNKNOWN_TYPE", "its actions: hangar.aeroplane.v1.Move, hangar.aeroplane.v1.Roll", ""},
		{"Connect: unknown method", "POST", "/hangar.v1.MatchService/CreateMatc", js, bearer, `{}`, 404, "NO_ROUTE", "did you mean /hangar.v1.MatchService/CreateMatch?", ""},
		{"Connect: wrong content type", "POST", "/hangar.v1.MatchService/CreateMatch", "text/plain", bearer, `{}`, 415, "UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/json", ""},
		{"Connect: no content type", "POST", "/hangar.v1.MatchService/CreateMatch", "", bearer, `{}`, 415, "UNSUPPORTED_MEDIA_TYPE", "this request has no Content-Type; send Content-Type: application/json", ""},
		{"Connect: GET of a call", "GET", "/hangar.v1.MatchService/CreateMatch", "", bearer, "", 400, "METHOD_NOT_ALLOWED", "takes POST, not GET", "POST"},
		{"Connect: unknown field", "POST", "/hangar.v1.MatchService/CreateMatch", js, bearer, `{"game":"aeroplane","seatz":2}`, 400, "MALFORMED_REQUEST", `did you mean "seat_count"?`, ""},
	}
	var table strings.Builder
	table.WriteString("| mistake | request | status | reason | message |\n|---|---|---|---|---|\n")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.auth != "" {
				hdr = []string{"Authorization", tc.auth}
			}
			code, h, body := restDo(t, tc.method, base+tc.path, "", tc.contentType, tc.body, hdr...)
			r := readRefusal(t, body)
			req := tc.method + " " + strings.ReplaceAll(strings.ReplaceAll(tc.path, id, "{id}"), ada.token, "{token}")
			if tc.contentType != "" && tc.contentType != js {
				req += " (" + tc.contentType + ")"
			}
			fmt.Fprintf(&table, "| %s | `%s` | %d | %s | %s |\n", tc.name, req, code, r.reason, strings.ReplaceAll(r.message, "|", `\|`))
			if code != tc.status || r.reason != tc.reason || !strings.Contains(r.message, tc.hint) {
				t.Fatalf("HTTP %d, reason %q, message %q; want %d, %q and a message with %q", code, r.reason, r.message, tc.status, tc.reason, tc.hint)
			}
			if tc.allow != "" && h.Get("Allow") != tc.allow {
				t.Fatalf("Allow: %q, want %q", h.Get("Allow"), tc.allow)
			}
			if tc.allow == "" && h.Get("Allow") != "" {
				t.Fatalf("Allow: %q on a %d", h.Get("Allow"), code)
			}
		})
	}
	t.Logf("the mistakes and their answers:\n%s", table.String())
	if len(cases) < 20 {
		t.Fatalf("%d mistakes; the table has at least twenty", len(cases))
	}
	if got := ada.get(t, id).GetVersion(); got != v {
		t.Fatalf("the mistakes moved the match from %d to %d", v, got)
	}
}

// TestAuthReasonsOverGRPC: no token, a malformed authorization header and
// an unknown token are each UNAUTHENTICATED with a reason of its own
// (TOKEN_MISSING, AUTHORIZATION_MALFORMED, TOKEN_UNKNOWN) and a message
// that says what to send, never echoing the header.
func TestAuthReasonsOverGRPC(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	ada := newClient(t, n.Addr(), "Ada")
	cases := []struct {
		name, header string // "" sends none
		reason       string
		hint         string
	}{
		{"no header", "", "TOKEN_MISSING", `send the header "Authorization: Bearer <token>"`},
		{"the token without Bearer", ada.token, "AUTHORIZATION_MALFORMED", "it has no scheme"},
		{"Bearer without a token", "Bearer ", "AUTHORIZATION_MALFORMED", `no token after "Bearer "`},
		{"another scheme", "Basic YWRhOnNlY3JldA==", "AUTHORIZATION_MALFORMED", "not Bearer"},
		{"an unknown token", "Bearer hgr_nope", "TOKEN_UNKNOWN", "unknown token"},
		{"not a Hangar token", "Bearer secret", "TOKEN_UNKNOWN", "a Hangar token begins with hgr_"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.header != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", tc.header)
			}
			_, err := ada.players.GetPlayer(ctx, &hangarv1.GetPlayerRequest{})
			st := status.Convert(err)
			var info *errdetails.ErrorInfo
			for _, d := range st.Details() {
				if i, ok := d.(*errdetails.ErrorInfo); ok {
					info = i
				}
			}
			if st.Code() != codes.Unauthenticated || info == nil || info.GetReason() != tc.reason || info.GetDomain() != "hangar" {
				t.Fatalf("%v (ErrorInfo %v); want UNAUTHENTICATED with reason %s", err, info, tc.reason)
			}
			if !strings.Contains(st.Message(), tc.hint) {
				t.Fatalf("message %q lacks %q", st.Message(), tc.hint)
			}
			if strings.Contains(st.Message(), ada.token) {
				t.Fatalf("message %q echoes the token", st.Message())
			}
		})
	}
}

// TestRuleRefusalsSayWhatIsLegal: over gRPC, a move the rules refuse
// names the moves that are legal now, and a move in bad notation the
// grammar expected; the codes and reasons are as before.
func TestRuleRefusalsSayWhatIsLegal(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	m, ada, _ := startedMatch(t, n.Addr())
	id, v := m.GetMatchId(), m.GetVersion()
	move := func(notation string) error {
		_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: reqID(),
			Action: packed(&aeroplanev1.Move{Notation: notation})})
		return err
	}
	for _, tc := range []struct {
		notation string
		code     codes.Code
		reason   string
		hint     string
	}{
		{"A9", codes.InvalidArgument, "INVALID_ARGUMENT", "expected T<plane> (take off), A<plane> (advance)"},
		{"T0", codes.FailedPrecondition, "WRONG_PHASE", "legal now: Roll"},
	} {
		err := move(tc.notation)
		wantErr(t, tc.notation, err, tc.code, tc.reason)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, tc.hint) {
			t.Errorf("%s: message %q lacks %q", tc.notation, msg, tc.hint)
		}
	}
}
