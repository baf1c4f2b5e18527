package examples_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/notice"
	"github.com/hangarhq/hangar/service"
)

// docBlock returns the fenced code block that follows the marker comment
// <!-- test: name --> in the docs page file.
func docBlock(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- test: "+name+" -->\n")
	if !ok {
		t.Fatalf("%s has no marker %q", file, name)
	}
	_, rest, _ = strings.Cut(rest, "\n") // the fence and its language
	block, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatalf("%s: the block after %q does not end", file, name)
	}
	return block
}

// webhookCase is one request the verifiers get, and what they must make
// of it: "push <text>", "skip" or "error".
type webhookCase struct {
	Header string `json:"header"`
	Body   []byte `json:"body"`
	Now    int64  `json:"now"`
	want   string
}

// webhookCases are signed bodies written by the server's own encoder and
// signer: a your-turn notice, its repeat, an older one of the match that
// arrives late, a superseded one, a match's end, a forged signature and a
// replay from the past.
func webhookCases(t *testing.T, secret string) []webhookCase {
	now := time.Date(2026, 12, 6, 21, 4, 5, 0, time.UTC)
	ev := func(seq int64, turn, superseded bool) []byte {
		n := &hangarv1.Notice{NoticeId: "p_1:" + string(rune('0'+seq)), PlayerId: "p_1", Seq: seq, MatchId: "m_1",
			Time: timestamppb.New(now)}
		if turn {
			n.Body = &hangarv1.Notice_YourTurn{YourTurn: &hangarv1.YourTurnNotice{Game: "aeroplane", Seat: 1, Version: seq * 10}}
		} else {
			n.Body = &hangarv1.Notice_MatchEnded{MatchEnded: &hangarv1.MatchEndedNotice{Game: "aeroplane", Seat: 1, Place: 1, Seats: 2}}
		}
		b, err := notice.Body(&hangarv1.WebhookEvent{Notice: n, ExternalId: "user-42", Superseded: superseded})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	signed := func(body []byte, at time.Time, want string) webhookCase {
		return webhookCase{Header: service.Sign(secret, at, body), Body: body, Now: now.Unix(), want: want}
	}
	turn2 := ev(2, true, false)
	forged := signed(ev(5, true, false), now, "error")
	forged.Header = service.Sign("another secret", now, forged.Body)
	return []webhookCase{
		signed(turn2, now, "push user-42: your turn in aeroplane"),
		signed(turn2, now.Add(time.Second), "skip"), // a repeat
		signed(ev(1, true, false), now, "skip"),     // overtaken by seq 2
		signed(ev(3, true, true), now, "skip"),      // superseded
		signed(ev(4, false, false), now, "push user-42: news of match m_1"),
		forged,
		signed(ev(6, true, false), now.Add(-10*time.Minute), "error"), // a replay
		signed(ev(7, true, false), now, "push user-42: your turn in aeroplane"),
	}
}

// runVerifier feeds the cases, one JSON line each, to cmd and checks what
// it prints, a line per case.
func runVerifier(t *testing.T, cmd *exec.Cmd, cases []webhookCase) {
	t.Helper()
	var in bytes.Buffer
	for _, c := range cases {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s: %v\n%s%s", cmd, err, out, stderr)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(cases) {
		t.Fatalf("%d lines for %d cases:\n%s", len(got), len(cases), out)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("case %d: %q, want %q", i, got[i], c.want)
		}
	}
}

const goVerifierMain = `package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BLOCK

func main() {
	p := &pusher{seen: map[string]bool{}, last: map[string]int64{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c struct {
			Header string ` + "`json:\"header\"`" + `
			Body   []byte ` + "`json:\"body\"`" + `
			Now    int64  ` + "`json:\"now\"`" + `
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			panic(err)
		}
		if err := verify(os.Args[1], c.Header, c.Body, time.Unix(c.Now, 0)); err != nil {
			fmt.Println("error")
			continue
		}
		switch text, err := p.decide(c.Body); {
		case err != nil:
			fmt.Println("error")
		case text == "":
			fmt.Println("skip")
		default:
			fmt.Println("push " + text)
		}
	}
}
`

const nodeVerifierMain = `
const lines = require("node:fs").readFileSync(0, "utf8").trim().split("\n");
const p = new Pusher();
for (const line of lines) {
  const c = JSON.parse(line);
  const body = Buffer.from(c.body, "base64");
  try {
    verify(process.argv[2], c.header, body, c.now * 1000);
  } catch {
    console.log("error");
    continue;
  }
  const text = p.decide(body);
  console.log(text === "" ? "skip" : "push " + text);
}
`

// TestWebhookToPushDoc runs the Go and Node.js blocks of
// docs/webhook-to-push.md, as written, on bodies from the server's encoder
// signed by its signer: each verifies the signature, pushes each notice
// once, and skips repeats, overtaken and superseded your-turn notices.
func TestWebhookToPushDoc(t *testing.T) {
	t.Parallel()
	page := filepath.Join("..", "docs", "webhook-to-push.md")
	const secret = "whsec-doc-0123456789"
	cases := webhookCases(t, secret)
	t.Run("go", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		src := strings.Replace(goVerifierMain, "// BLOCK", docBlock(t, page, "webhook-go"), 1)
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module webhookdoc\n\ngo 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "run", ".", secret)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		runVerifier(t, cmd, cases)
	})
	t.Run("node", func(t *testing.T) {
		t.Parallel()
		node := nodePath(t)
		file := filepath.Join(t.TempDir(), "verify.js")
		if err := os.WriteFile(file, []byte(docBlock(t, page, "webhook-node")+"\n"+nodeVerifierMain), 0o644); err != nil {
			t.Fatal(err)
		}
		runVerifier(t, exec.Command(node, file, secret), cases)
	})
}
