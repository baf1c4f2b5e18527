package main

import (
	"os"
	"strings"
	"testing"
)

// TestConfigDocCurrent checks that docs/configuration.md is what
// `hangar config-doc` prints (scripts/gen rewrites it).
func TestConfigDocCurrent(t *testing.T) {
	var b strings.Builder
	if err := configDoc(&b); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Fatal("docs/configuration.md is stale: run scripts/gen (or go run ./cmd/hangar config-doc >docs/configuration.md)")
	}
}
