package examples_test

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

// pythonReasonMain follows the Python block of docs/api.md: it makes a call
// that the node refuses and prints what the block's reason makes of it.
const pythonReasonMain = `
import grpc
from hangar.v1 import match_pb2, match_pb2_grpc

with grpc.insecure_channel(sys.argv[1]) as ch:
    try:
        match_pb2_grpc.MatchServiceStub(ch).GetMatch(match_pb2.GetMatchRequest(match_id="m_none"))
        sys.exit("GetMatch without a token succeeded")
    except grpc.RpcError as err:
        print(reason(err))
`

// TestAPIDocReasons runs the blocks of docs/api.md that read an error's
// reason in Python and Node.js, as written, on a refusal of a real node
// (GetMatch without a token): each must print the reason that the Go block's
// code reads from the same call.
func TestAPIDocReasons(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, "docs", "api.md")
	n := nodetest.Node(t, server.Config{DataDir: t.TempDir()})
	var trailer metadata.MD
	_, err = hangarv1.NewMatchServiceClient(nodetest.Dial(t, n.Addr())).GetMatch(context.Background(),
		&hangarv1.GetMatchRequest{MatchId: "m_none"}, grpc.Trailer(&trailer))
	want := goReason(err)
	if want == "" {
		t.Fatalf("GetMatch without a token: %v, with no reason", err)
	}

	t.Run("python", func(t *testing.T) {
		t.Parallel()
		python := pythonPath(t)
		dir := t.TempDir()
		// The stubs as examples/python makes them, then the page's block.
		prelude := "import sys\nsys.path.insert(0, " + pyString(filepath.Join(root, "examples", "python")) + ")\n" +
			"import play\nplay.generate(" + pyString(filepath.Join(root, "proto")) + ", " + pyString(dir) + ")\n"
		file := filepath.Join(dir, "reason.py")
		if err := os.WriteFile(file, []byte(prelude+docBlock(t, page, "reason-python")+"\n"+pythonReasonMain), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(python, file, n.Addr()).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("the Python block read %q, want %q", got, want)
		}
	})

	t.Run("node", func(t *testing.T) {
		t.Parallel()
		node := nodePath(t)
		npm, err := exec.LookPath("npm")
		if err != nil {
			unavailable(t, "npm is not on PATH")
		}
		// The SDK's packages and its two generated google.rpc files, in a
		// directory of the test's own: TestSDK reinstalls sdk/typescript's
		// node_modules (npm ci) while the packages' tests run side by side.
		sdk := t.TempDir()
		for _, f := range []string{"package.json", "package-lock.json", "src/gen/google/rpc/status_pb.ts", "src/gen/google/rpc/error_details_pb.ts"} {
			b, err := os.ReadFile(filepath.Join(root, "sdk", "typescript", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(sdk, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sdk, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		install.Dir = sdk
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v: %s", err, out)
		}
		modules := filepath.Join(sdk, "node_modules")
		bins := trailer.Get("grpc-status-details-bin")
		if len(bins) != 1 {
			t.Fatalf("the refusal's trailer holds %d grpc-status-details-bin", len(bins))
		}
		// The block imports the SDK's generated messages as ./gen/…: they
		// are compiled next to it, and @bufbuild/protobuf is the SDK's.
		dir := t.TempDir()
		if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		tsc := exec.Command(filepath.Join(modules, ".bin", "tsc"), "--target", "ES2022", "--module", "NodeNext",
			"--moduleResolution", "NodeNext", "--skipLibCheck", "--rootDir", "src", "--outDir", dir,
			"src/gen/google/rpc/status_pb.ts", "src/gen/google/rpc/error_details_pb.ts")
		tsc.Dir = sdk
		if out, err := tsc.CombinedOutput(); err != nil {
			t.Fatalf("tsc: %v: %s", err, out)
		}
		file := filepath.Join(dir, "reason.mjs")
		if err := os.WriteFile(file, []byte(docBlock(t, page, "reason-node")+"\n"+nodeReasonMain), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(node, file, base64.StdEncoding.EncodeToString([]byte(bins[0]))).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("the Node.js block read %q, want %q", got, want)
		}
	})
}

// nodeReasonMain follows the Node.js block of docs/api.md: it hands the
// block an error of @grpc/grpc-js's shape (the trailer in metadata, whose
// get returns a list of Buffers) that carries the node's trailer, given in
// base64, and prints the reason. @grpc/grpc-js itself is not among the
// SDK's packages, so the error is built here; the bytes are the node's.
const nodeReasonMain = `
const bin = Buffer.from(process.argv[2], "base64");
const err = { code: 16, metadata: { get: (key) => (key === "grpc-status-details-bin" ? [bin] : []) } };
console.log(reason(err));
`

// goReason is the Go block of docs/api.md.
func goReason(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// pyString quotes s as a Python string literal.
func pyString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
