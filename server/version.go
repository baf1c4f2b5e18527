package server

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// BuildInfo is what a binary knows of its own build: the module's version
// and the VCS stamp the go command wrote into it (debug.ReadBuildInfo).
type BuildInfo struct {
	// Version is the module's version: a tag (v0.1.0), a pseudo-version
	// for an untagged commit, or "(devel)" when the go command knew none
	// (go run, go test, a build outside the repository).
	Version string
	// Revision and Time are the commit built and its time; Modified says
	// the work tree had uncommitted changes. Empty without a VCS stamp
	// (-buildvcs=false, a build outside the repository).
	Revision, Time string
	Modified       bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Build reads the running binary's build information.
func Build() BuildInfo {
	b := BuildInfo{Version: "(devel)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = bi.GoVersion
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the line `hangar version` prints:
//
//	hangar v0.1.0 (commit 4b9ab62…, 2026-12-06T22:13:24Z, go1.26.8)
func (b BuildInfo) String() string {
	var parts []string
	if b.Revision != "" {
		rev := "commit " + b.Revision
		if b.Modified {
			rev += " modified"
		}
		parts = append(parts, rev)
	}
	if b.Time != "" {
		parts = append(parts, b.Time)
	}
	if b.GoVersion != "" {
		parts = append(parts, b.GoVersion)
	}
	if len(parts) == 0 {
		return "hangar " + b.Version
	}
	return fmt.Sprintf("hangar %s (%s)", b.Version, strings.Join(parts, ", "))
}

// version is the module's version as built, for traces and the start line.
func version() string { return Build().Version }
