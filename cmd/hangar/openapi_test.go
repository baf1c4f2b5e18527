package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/openapi"
)

// TestOpenAPIDocument: openapi/openapi.yaml, which scripts/gen writes for
// the games its generator names, is the document `hangar serve` serves
// for the games it hosts.
func TestOpenAPIDocument(t *testing.T) {
	want, err := os.ReadFile("../../openapi/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := openapi.WithGames(openapi.YAML, game.NewRegistry(hosted()...)); !bytes.Equal(got, want) {
		t.Fatal("openapi/openapi.yaml is not the document hangar serve serves: run scripts/gen (and name hosted()'s games in openapi/internal/cmd/openapigen)")
	}
}
