package vtcodec

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Unmarshaler is a message with the generated reader.
type Unmarshaler interface {
	proto.Message
	UnmarshalVT(dAtA []byte) error
}

// UnmarshalChecked reads b into m with its generated reader and then checks
// what proto.Unmarshal checks and the generated reader does not: that every
// string of a proto3 message, at any depth (repeated, in a map, in a
// oneof), is UTF-8, and that field numbers are in range. It is for a server
// reading its requests: about twice as quick as proto.Unmarshal
// (BENCHMARKS.md), and what it accepts proto.Unmarshal accepts and reads to
// a message equal in every known field (FuzzUnmarshalChecked). It is
// stricter in one way: a known field sent with the wrong wire type is an
// error, where proto.Unmarshal keeps it as an unknown field.
func UnmarshalChecked(b []byte, m Unmarshaler) error {
	if r, ok := m.(interface{ Reset() }); ok {
		r.Reset()
	}
	if err := m.UnmarshalVT(b); err != nil {
		return err
	}
	return checkWire(m.ProtoReflect().Descriptor(), b)
}

// errUTF8 is proto.Unmarshal's complaint, in the same words.
var errUTF8 = errors.New("string field contains invalid UTF-8")

// checkWire walks b, the wire form of a message md describes, for what
// proto.Unmarshal refuses and the generated reader takes: a string field
// (of a message of a syntax that requires it) that is not UTF-8, at any
// depth of known fields, and a field number out of range. Unknown fields
// are not looked into, as proto.Unmarshal does not.
func checkWire(md protoreflect.MessageDescriptor, b []byte) error {
	return planOf(md).check(b, 0)
}

// maxDepth bounds the nesting checkWire follows, as proto's own reader
// bounds its recursion.
const maxDepth = 10000

// A plan is what checkWire needs of a message's fields, made once per
// message type: the descriptors' own look-ups cost as much as the reading.
type plan struct {
	// fields by field number, below len(fields); sparse above.
	fields []field
	sparse map[protowire.Number]field
}

type field struct {
	str protoreflect.FullName // a string field to check: its name
	msg *plan                 // a message field, to walk
}

// denseFields bounds the slice of a plan's fields.
const denseFields = 64

var plans sync.Map // protoreflect.FullName -> *plan

func planOf(md protoreflect.MessageDescriptor) *plan {
	if p, ok := plans.Load(md.FullName()); ok {
		return p.(*plan)
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	p := buildPlan(md, map[protoreflect.FullName]*plan{})
	p2, _ := plans.LoadOrStore(md.FullName(), p)
	return p2.(*plan)
}

var plansMu sync.Mutex

// buildPlan makes md's plan and those of the messages under it; made holds
// the plans under construction (messages may nest themselves).
func buildPlan(md protoreflect.MessageDescriptor, made map[protoreflect.FullName]*plan) *plan {
	if p, ok := made[md.FullName()]; ok {
		return p
	}
	p := &plan{}
	made[md.FullName()] = p
	fds := md.Fields()
	var fields []field
	var sparse map[protowire.Number]field
	for i := range fds.Len() {
		fd := fds.Get(i)
		var f field
		switch fd.Kind() {
		case protoreflect.StringKind:
			if fd.Syntax() == protoreflect.Proto2 {
				continue
			}
			f.str = fd.FullName()
		case protoreflect.MessageKind:
			f.msg = buildPlan(fd.Message(), made)
		default:
			continue
		}
		if n := fd.Number(); n < denseFields {
			if int(n) >= len(fields) {
				fields = append(fields, make([]field, int(n)+1-len(fields))...)
			}
			fields[n] = f
		} else {
			if sparse == nil {
				sparse = map[protowire.Number]field{}
			}
			sparse[n] = f
		}
	}
	p.fields, p.sparse = fields, sparse
	return p
}

func (p *plan) field(n protowire.Number) field {
	if int(n) < len(p.fields) {
		return p.fields[n]
	}
	if p.sparse != nil {
		return p.sparse[n]
	}
	return field{}
}

func (p *plan) check(b []byte, depth int) error {
	if depth > maxDepth {
		return errors.New("exceeded maximum recursion depth")
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num > protowire.MaxValidNumber {
			// proto.Unmarshal refuses it; the generated reader keeps
			// it as an unknown field.
			return errors.New("invalid field number")
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			switch f := p.field(num); {
			case f.str != "":
				if !utf8.Valid(v) {
					return fmt.Errorf("%w: %s", errUTF8, f.str)
				}
			case f.msg != nil:
				if err := f.msg.check(v, depth+1); err != nil {
					return err
				}
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil
}
