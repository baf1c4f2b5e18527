package service

import "github.com/hangarhq/hangar/internal/vtcodec"

// The wire helpers of package vtcodec, under the names the service's
// write path uses.
var (
	wireSize        = vtcodec.Size
	appendWire      = vtcodec.Append
	appendWireSized = vtcodec.AppendSized
	marshalWire     = vtcodec.Bytes
)
