package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	for _, c := range []struct{ desc, want string }{
		{"ListGames lists every game the server hosts, by name (no token\nneeded).", "ListGames lists every game the server hosts, by name (no token needed)"},
		// An abbreviation does not end the sentence.
		{"Act sends an action, e.g. a roll. Then more.", "Act sends an action, e.g. a roll"},
		// A long first sentence is cut at its first colon, parenthesis or comma past the subject.
		{"SignInExternalPlayer is for a game's own backend, authenticated with an\nAPI key (`authorization: Bearer hk_…`), never with a player token. It returns", "SignInExternalPlayer is for a game's own backend"},
		{"No full stop", "No full stop"},
	} {
		if got := summary(c.desc); got != c.want {
			t.Errorf("summary(%q) = %q, want %q", c.desc, got, c.want)
		}
	}
}

func TestPathName(t *testing.T) {
	for p, want := range map[string]string{
		"/v1/me":                         "Me",
		"/v1/matches/{matchId}:watch":    "MatchesWatch",
		"/v1/players/{playerId}/ratings": "PlayersRatings",
	} {
		if got := pathName(p); got != want {
			t.Errorf("pathName(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestFinish finishes gnostic's kind of document: every operation gains a
// summary and error responses, an open one an empty security, and the
// operation of an additional binding its own operationId.
func TestFinish(t *testing.T) {
	raw := `openapi: 3.0.3
info:
    title: Hangar
    version: v1
paths:
    /v1/games:
        get:
            tags:
                - GameService
            description: |-
                ListGames lists every game the server hosts, by name (no token
                 needed).
            operationId: GameService_ListGames
            responses:
                "200":
                    description: OK
                default:
                    description: Default error response
    /v1/me:
        get:
            description: GetPlayer returns a player.
            operationId: PlayerService_GetPlayer
            responses:
                "200":
                    description: OK
    /v1/players/{playerId}:
        get:
            description: GetPlayer returns a player.
            operationId: PlayerService_GetPlayer
            parameters:
                - name: playerId
                  in: path
                  required: true
                  schema:
                    type: string
            responses:
                "200":
                    description: OK
components:
    schemas:
        google.protobuf.Any:
            type: object
        google.rpc.Status:
            type: object
            properties:
                details:
                    type: array
tags:
    - name: GameService
`
	out, err := finish([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(out)
	for _, want := range []string{
		"summary: ListGames lists every game the server hosts, by name (no token needed)\n",
		"                ListGames lists every game the server hosts, by name (no token\n                needed).\n",
		"operationId: GameService_ListGames\n            security: []\n",
		"operationId: PlayerService_GetPlayer_Me\n",
		"operationId: PlayerService_GetPlayer\n",
		"\"404\":\n                    $ref: '#/components/responses/NotFound'\n",
		"securitySchemes:\n",
		"\nsecurity:\n    - bearer: []\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document lacks %q:\n%s", want, doc)
		}
	}
	again, err := finish([]byte(raw))
	if err != nil || string(again) != doc {
		t.Errorf("a second run differs (%v)", err)
	}
}
