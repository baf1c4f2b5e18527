// Package openapi holds the OpenAPI 3 documents of Hangar's REST API,
// generated from proto/ by scripts/gen (never edited by hand):
//
//   - platform.yaml, the platform's document, which names no game;
//   - openapi.yaml, the document `hangar serve` serves at /openapi.yaml:
//     the platform's with the messages of the games it hosts (WithGames).
//
// A node hosting other games serves the platform's document with its own
// games' messages.
package openapi

import _ "embed"

// YAML is the platform's document (platform.yaml).
//
//go:embed platform.yaml
var YAML []byte
