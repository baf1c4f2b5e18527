// Package openapi holds the OpenAPI 3 document of Hangar's REST API,
// generated from proto/ by scripts/gen (never edited by hand) and served by
// `hangar serve` at /openapi.yaml.
package openapi

import _ "embed"

// YAML is the document.
//
//go:embed openapi.yaml
var YAML []byte
