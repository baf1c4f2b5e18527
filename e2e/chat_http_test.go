package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/server"
)

// TestChatOverREST: the chat and friends routes of the HTTP side: a post,
// a page, a refusal with its status and reason, the watch as NDJSON, and
// a friend request.
func TestChatOverREST(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		base := fmt.Sprintf("http://%s/v1/matches/%s/chat", n.Addr(), m.GetMatchId())
		code, _, body := restDo(t, http.MethodPost, base, ada.token, "application/json", `{"text":"hello","requestId":"r1"}`)
		if code != http.StatusOK || !strings.Contains(string(body), `"seq":"1"`) {
			t.Fatalf("POST chat: %d %s", code, body)
		}
		code, _, body = restDo(t, http.MethodPost, base, ada.token, "application/json", `{"text":""}`)
		if code != http.StatusBadRequest || !strings.Contains(string(body), "INVALID_ARGUMENT") {
			t.Fatalf("POST of an empty text: %d %s", code, body)
		}
		code, _, body = restDo(t, http.MethodGet, base+"?channel=CHAT_CHANNEL_PLAYERS&pageSize=1", bob.token, "", "")
		if code != http.StatusOK || !strings.Contains(string(body), `"text":"hello"`) {
			t.Fatalf("GET chat: %d %s", code, body)
		}
		cy := newClient(t, n.Addr(), "Cy")
		code, _, body = restDo(t, http.MethodGet, base+"?channel=CHAT_CHANNEL_PLAYERS", cy.token, "", "")
		if code != http.StatusForbidden || !strings.Contains(string(body), "CHAT_CHANNEL_CLOSED") {
			t.Fatalf("GET of the players' channel by a spectator: %d %s", code, body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+":watch", nil)
		req.Header.Set("Authorization", "Bearer "+bob.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the chat watch: %d", resp.StatusCode)
		}
		lines := bufio.NewScanner(resp.Body)
		if !lines.Scan() || !strings.Contains(lines.Text(), `"text":"hello"`) {
			t.Fatalf("the watch's first line: %q, %v", lines.Text(), lines.Err())
		}
		ada.say(t, m.GetMatchId(), 0, "live")
		if !lines.Scan() || !strings.Contains(lines.Text(), `"text":"live"`) || !strings.Contains(lines.Text(), `"seq":"2"`) {
			t.Fatalf("the watch's second line: %q, %v", lines.Text(), lines.Err())
		}
		code, _, body = restDo(t, http.MethodPost, fmt.Sprintf("http://%s/v1/me/friend-requests", n.Addr()), ada.token, "application/json",
			fmt.Sprintf(`{"playerId":%q}`, bob.id))
		if code != http.StatusOK {
			t.Fatalf("POST friend request: %d %s", code, body)
		}
		code, _, body = restDo(t, http.MethodGet, fmt.Sprintf("http://%s/v1/me/friend-requests?incoming=true", n.Addr()), bob.token, "", "")
		if code != http.StatusOK || !strings.Contains(string(body), ada.id) {
			t.Fatalf("GET friend requests: %d %s", code, body)
		}
	})
}
