package service

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/hangarhq/hangar/store"
)

// Deleted players' names in responses. The event log and the match
// summaries keep the names they were written with; a response shows a
// deleted player's (auth.DeletedSet.Has) as store.DeletedName. A
// name is a message's display_name beside its player_id (a Seat, a
// PlayerJoined event, a LeaderboardEntry, a Friend). While no player is
// deleted, nothing is looked at. A response holding a deleted player's
// name is copied before it is changed: the handlers' messages may be
// shared (the node's match cache, the watch fan-out's marshalled bytes).

// unaryRedact shows deleted players' names as store.DeletedName in a unary
// call's response.
func (s *Service) unaryRedact(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil || !s.auth.Deleted().Any() {
		return resp, err
	}
	if m, ok := resp.(proto.Message); ok {
		return s.redacted(m), nil
	}
	return resp, nil
}

// streamRedact does as unaryRedact for each response of a stream.
func (s *Service) streamRedact(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &redactStream{ServerStream: ss, s: s, method: info.FullMethod})
}

type redactStream struct {
	grpc.ServerStream
	s      *Service
	method string
}

func (r *redactStream) SendMsg(v any) error {
	if !r.s.auth.Deleted().Any() {
		return r.ServerStream.SendMsg(v)
	}
	if w, ok := v.(*wireMsg); ok {
		m, err := r.s.redactedWire(r.method, w.b)
		if err != nil || m == nil {
			return r.ServerStream.SendMsg(v)
		}
		return r.ServerStream.SendMsg(m)
	}
	if m, ok := v.(proto.Message); ok {
		v = r.s.redacted(m)
	}
	return r.ServerStream.SendMsg(v)
}

// redacted is m, or a copy of it showing deleted players' names as
// store.DeletedName.
func (s *Service) redacted(m proto.Message) proto.Message {
	if !s.redact(m.ProtoReflect(), false) {
		return m
	}
	c := proto.Clone(m)
	s.redact(c.ProtoReflect(), true)
	return c
}

// maxWireScan is how many deleted players' ids redactedWire looks for in
// a marshalled response's bytes; with more, it decodes every one.
const maxWireScan = 64

// redactedWire is a marshalled response of method, decoded and showing
// deleted players' names as store.DeletedName, or nil when it names none.
func (s *Service) redactedWire(method string, b []byte) (proto.Message, error) {
	if ids := s.auth.Deleted().IDs(); len(ids) <= maxWireScan {
		found := false
		for _, id := range ids {
			if bytes.Contains(b, []byte(id)) {
				found = true
				break
			}
		}
		if !found {
			return nil, nil
		}
	}
	mt, err := responseType(method)
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, err
	}
	if !s.redact(m.ProtoReflect(), true) {
		return nil, nil
	}
	return m, nil
}

// responseType is the response message type of a full method name
// ("/hangar.v1.MatchService/WatchMatch").
func responseType(method string) (protoreflect.MessageType, error) {
	svc, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, err
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, protoregistry.NotFound
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, protoregistry.NotFound
	}
	return protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
}

// redact reports whether m holds a deleted player's name; with change, it
// replaces each by store.DeletedName.
func (s *Service) redact(m protoreflect.Message, change bool) bool {
	md := m.Descriptor()
	if !mayName(md) {
		return false
	}
	hit := false
	if pid, name := md.Fields().ByName("player_id"), md.Fields().ByName("display_name"); named(pid, name) {
		if id := m.Get(pid).String(); id != "" && m.Get(name).String() != store.DeletedName && s.auth.Deleted().Has(id) {
			hit = true
			if !change {
				return true
			}
			m.Set(name, protoreflect.ValueOfString(store.DeletedName))
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				return true
			}
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				hit = s.redact(mv.Message(), change) || hit
				return change || !hit
			})
		case fd.Message() == nil:
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && (change || !hit); i++ {
				hit = s.redact(l.Get(i).Message(), change) || hit
			}
		default:
			hit = s.redact(v.Message(), change) || hit
		}
		return change || !hit
	})
	return hit
}

func named(pid, name protoreflect.FieldDescriptor) bool {
	return pid != nil && name != nil && pid.Kind() == protoreflect.StringKind && name.Kind() == protoreflect.StringKind &&
		!pid.IsList() && !name.IsList()
}

// mayNameCache: message full name -> whether a message of that type may
// hold a player's name, itself or in a message it holds.
var mayNameCache sync.Map

// mayName says whether a message of type md may hold a player's name.
// google.protobuf.Any (a game's own messages) is not looked into.
func mayName(md protoreflect.MessageDescriptor) bool {
	if v, ok := mayNameCache.Load(md.FullName()); ok {
		return v.(bool)
	}
	v := mayNameIn(md, map[protoreflect.FullName]bool{})
	mayNameCache.Store(md.FullName(), v)
	return v
}

func mayNameIn(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if named(md.Fields().ByName("player_id"), md.Fields().ByName("display_name")) {
		return true
	}
	fs := md.Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if sub := fd.Message(); sub != nil && mayNameIn(sub, seen) {
			return true
		}
	}
	return false
}
