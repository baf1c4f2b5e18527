package openapi

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hangarhq/hangar/game"
)

// A node's OpenAPI document is the platform's (YAML) with the hosted
// games' messages added: a
// schema for every message a game's types reach, under its full name, an
// enum of the type URLs an Any may hold here, and x-hangar-games, which
// lists each game with the schemas of its options, state, board, actions
// and event. The platform's document names no game: a game is described by
// the node that hosts it.

// WithGames is the OpenAPI document of a node hosting games: platform (YAML,
// or a platform document scripts/gen has just written) with the games'
// messages added.
func WithGames(platform []byte, games *game.Registry) []byte {
	doc := string(platform)
	var schemas strings.Builder
	seen := map[protoreflect.FullName]bool{}
	var queue []protoreflect.MessageDescriptor
	for _, m := range games.Messages() {
		queue = append(queue, m.ProtoReflect().Descriptor())
	}
	for len(queue) > 0 {
		md := queue[0]
		queue = queue[1:]
		if seen[md.FullName()] || wellKnown[md.FullName()] != "" || strings.Contains(doc, "\n        "+string(md.FullName())+":\n") {
			continue
		}
		seen[md.FullName()] = true
		queue = append(queue, writeSchema(&schemas, md)...)
	}
	const at = "\ncomponents:\n    schemas:\n"
	doc = strings.Replace(doc, at, at+schemas.String(), 1)

	// The Any schema names the types it may hold on this node.
	const anyAt = "        google.protobuf.Any:\n            type: object\n            properties:\n                '@type':\n                    type: string\n"
	var urls strings.Builder
	urls.WriteString("                    enum:\n")
	for _, m := range games.Messages() {
		if u := game.TypeURLPrefix + string(m.ProtoReflect().Descriptor().FullName()); !strings.Contains(urls.String(), quote(u)+"\n") {
			fmt.Fprintf(&urls, "                        - %s\n", quote(u))
		}
	}
	doc = strings.Replace(doc, anyAt, anyAt+urls.String(), 1)

	var ext bytes.Buffer
	ext.WriteString("x-hangar-games:\n")
	for _, g := range games.Games() {
		i := games.Describe(g.Name())
		fmt.Fprintf(&ext, "    - name: %s\n      title: %s\n      minSeats: %d\n      maxSeats: %d\n      hiddenInformation: %t\n",
			quote(i.GetName()), quote(i.GetTitle()), i.GetMinSeats(), i.GetMaxSeats(), i.GetHiddenInformation())
		ref := func(key, name string) {
			fmt.Fprintf(&ext, "      %s:\n        $ref: %s\n", key, quote("#/components/schemas/"+name))
		}
		ref("options", i.GetOptionsType())
		ref("state", i.GetStateType())
		ref("board", i.GetBoardType())
		ref("event", i.GetEventType())
		ext.WriteString("      actions:\n")
		for _, a := range i.GetActionTypes() {
			fmt.Fprintf(&ext, "        - $ref: %s\n", quote("#/components/schemas/"+a))
		}
	}
	return append([]byte(doc), ext.Bytes()...)
}

// wellKnown are the messages JSON writes as a scalar (their schema
// inline); others are referenced.
var wellKnown = map[protoreflect.FullName]string{
	"google.protobuf.Timestamp":   "type: string\nformat: date-time",
	"google.protobuf.Duration":    "type: string\nformat: duration",
	"google.protobuf.FieldMask":   "type: string",
	"google.protobuf.StringValue": "type: string",
	"google.protobuf.BytesValue":  "type: string\nformat: bytes",
	"google.protobuf.BoolValue":   "type: boolean",
	"google.protobuf.Int32Value":  "type: integer\nformat: int32",
	"google.protobuf.UInt32Value": "type: integer\nformat: uint32",
	"google.protobuf.Int64Value":  "type: string\nformat: int64",
	"google.protobuf.UInt64Value": "type: string\nformat: uint64",
	"google.protobuf.FloatValue":  "type: number\nformat: float",
	"google.protobuf.DoubleValue": "type: number\nformat: double",
	"google.protobuf.Struct":      "type: object",
	"google.protobuf.Value":       "{}",
	"google.protobuf.ListValue":   "type: array\nitems: {}",
	"google.protobuf.Empty":       "type: object",
}

// writeSchema writes the schema of md (8 spaces in, as the generated
// document's) and returns the messages its fields refer to.
func writeSchema(b *strings.Builder, md protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor {
	var refs []protoreflect.MessageDescriptor
	fmt.Fprintf(b, "        %s:\n            type: object\n", md.FullName())
	fields := md.Fields()
	if fields.Len() > 0 {
		b.WriteString("            properties:\n")
	}
	for i := range fields.Len() {
		fd := fields.Get(i)
		fmt.Fprintf(b, "                %s:\n", fd.JSONName())
		var s string
		switch {
		case fd.IsMap():
			s = "type: object\nadditionalProperties:\n" + indent(fieldSchema(fd.MapValue(), &refs), 4)
		case fd.IsList():
			s = "type: array\nitems:\n" + indent(fieldSchema(fd, &refs), 4)
		default:
			s = fieldSchema(fd, &refs)
		}
		b.WriteString(indent(s, 20))
	}
	fmt.Fprintf(b, "            description: %s\n", quote(fmt.Sprintf("%s, a message of a hosted game (proto file %s).", md.FullName(), md.ParentFile().Path())))
	return refs
}

// fieldSchema is the schema of one value of fd, lines without indent.
func fieldSchema(fd protoreflect.FieldDescriptor, refs *[]protoreflect.MessageDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "type: boolean"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "type: integer\nformat: int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "type: integer\nformat: uint32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "type: string\nformat: int64"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "type: string\nformat: uint64"
	case protoreflect.FloatKind:
		return "type: number\nformat: float"
	case protoreflect.DoubleKind:
		return "type: number\nformat: double"
	case protoreflect.StringKind:
		return "type: string"
	case protoreflect.BytesKind:
		return "type: string\nformat: bytes"
	case protoreflect.EnumKind:
		var s strings.Builder
		s.WriteString("enum:\n")
		vs := fd.Enum().Values()
		for i := range vs.Len() {
			fmt.Fprintf(&s, "    - %s\n", quote(string(vs.Get(i).Name())))
		}
		s.WriteString("type: string\nformat: enum")
		return s.String()
	}
	md := fd.Message()
	if w := wellKnown[md.FullName()]; w != "" {
		return w
	}
	*refs = append(*refs, md)
	return "$ref: " + quote("#/components/schemas/"+string(md.FullName()))
}

// indent puts n spaces before each line of s and ends it with a newline.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad) + "\n"
}

// quote is s as a YAML double-quoted scalar (JSON's quoting is YAML's).
func quote(s string) string { return strconv.Quote(s) }
