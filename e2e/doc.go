// Package e2e holds the node tests: each starts one or more Hangar nodes
// with package server (through internal/nodetest) on 127.0.0.1:0, on the
// embedded store and on a real Postgres, and drives them as clients do,
// over gRPC, REST, Connect and gRPC-Web, or runs the hangar binary. The
// tests of a minute or more run only with HANGAR_TEST_LONG=1, as CI sets.
package e2e
