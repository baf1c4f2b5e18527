package play

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
)

// The generic view: a game this client has no drawing for is shown as the
// game describes itself. Its state, events and legal actions are its own
// messages inside google.protobuf.Any; the client prints each as protobuf
// JSON when it can resolve the type (compiled in, or learnt from the
// server's reflection service), else as its type URL and size. A legal
// action is sent back through Act as it came, so playing needs no types.

// resolver finds message types for the Any payloads: the ones compiled into
// the client first, then the ones the server described.
type resolver struct {
	extra interface {
		protoregistry.MessageTypeResolver
		protoregistry.ExtensionTypeResolver
	}
}

func (r resolver) FindMessageByName(name protoreflect.FullName) (protoreflect.MessageType, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if errors.Is(err, protoregistry.NotFound) && r.extra != nil {
		return r.extra.FindMessageByName(name)
	}
	return mt, err
}

func (r resolver) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(url)
	if errors.Is(err, protoregistry.NotFound) && r.extra != nil {
		return r.extra.FindMessageByURL(url)
	}
	return mt, err
}

func (r resolver) FindExtensionByName(name protoreflect.FullName) (protoreflect.ExtensionType, error) {
	xt, err := protoregistry.GlobalTypes.FindExtensionByName(name)
	if errors.Is(err, protoregistry.NotFound) && r.extra != nil {
		return r.extra.FindExtensionByName(name)
	}
	return xt, err
}

func (r resolver) FindExtensionByNumber(message protoreflect.FullName, field protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	xt, err := protoregistry.GlobalTypes.FindExtensionByNumber(message, field)
	if errors.Is(err, protoregistry.NotFound) && r.extra != nil {
		return r.extra.FindExtensionByNumber(message, field)
	}
	return xt, err
}

// unpack is the message inside a, or an error when its type is unknown to
// the client or its bytes do not decode.
func (r resolver) unpack(a *anypb.Any) (proto.Message, error) {
	return anypb.UnmarshalNew(a, proto.UnmarshalOptions{Resolver: r})
}

// anyJSON is the message inside a as protobuf JSON (every field, zero values
// included, as REST writes them), indented by indent when it is not empty,
// else on one line; ok is false when the type is unknown.
func (r resolver) anyJSON(a *anypb.Any, indent string) (name, text string, ok bool) {
	m, err := r.unpack(a)
	if err != nil {
		return "", "", false
	}
	raw, err := protojson.MarshalOptions{Resolver: r, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return "", "", false
	}
	// protojson varies its spaces on purpose; encoding/json makes them
	// stable.
	var b bytes.Buffer
	if indent == "" {
		err = json.Compact(&b, raw)
	} else {
		err = json.Indent(&b, raw, indent, "  ")
	}
	if err != nil {
		return "", "", false
	}
	return string(m.ProtoReflect().Descriptor().Name()), b.String(), true
}

// anyText is a on one line: its message's name and its JSON, or its type
// URL and size when the client cannot resolve the type.
func (r resolver) anyText(a *anypb.Any) string {
	if name, text, ok := r.anyJSON(a, ""); ok {
		return name + " " + text
	}
	return rawAny(a)
}

func rawAny(a *anypb.Any) string {
	return fmt.Sprintf("%s (%d bytes)", a.GetTypeUrl(), len(a.GetValue()))
}

// decode is the message inside a when the client draws its game; nil for
// a type it does not know, and for every type in the generic view
// (Config.Generic), so that the callers fall back to the generic view.
func (v *view) decode(a *anypb.Any) proto.Message {
	if v.generic || a == nil {
		return nil
	}
	m, err := v.types.unpack(a)
	if err != nil {
		return nil
	}
	switch m.(type) {
	case *aeroplanev1.State, *aeroplanev1.Event, *aeroplanev1.Roll, *aeroplanev1.Move,
		*carcassonnev1.State, *carcassonnev1.Event, *carcassonnev1.Move:
		return m
	}
	return nil
}

// drawGeneric writes a state the client has no drawing for: its JSON,
// indented under the type's full name.
func (v *view) drawGeneric(b *strings.Builder, st *anypb.Any) {
	if st == nil {
		return
	}
	m, err := v.types.unpack(st)
	if err != nil {
		fmt.Fprintf(b, "  state: %s\n", rawAny(st))
		return
	}
	_, text, ok := v.types.anyJSON(st, "  ")
	if !ok {
		fmt.Fprintf(b, "  state: %s\n", rawAny(st))
		return
	}
	fmt.Fprintf(b, "  state (%s):\n  %s\n", m.ProtoReflect().Descriptor().FullName(), text)
}

// learnTypes asks the server's reflection service for the files that define
// the game's message types the client lacks, so that the generic view shows
// their fields. Without reflection (the server may turn it off) the view
// falls back to type URLs and sizes.
func (s *session) learnTypes(conn grpc.ClientConnInterface) {
	info := s.view.info
	var missing []string
	for _, name := range append([]string{info.GetOptionsType(), info.GetStateType(), info.GetBoardType(), info.GetEventType()}, info.GetActionTypes()...) {
		if name == "" {
			continue
		}
		if _, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return
	}
	types, undescribed, err := reflectTypes(s.ctx, conn, missing)
	if err != nil {
		s.printf("the server did not describe %s's messages (%v): showing their type names only\n", info.GetName(), err)
		return
	}
	if len(undescribed) > 0 {
		s.printf("the server did not describe %s: showing its type name only\n", strings.Join(undescribed, ", "))
	}
	s.view.types.extra = types
}

// reflectTypes builds the message types of symbols from the file
// descriptors the server's reflection service sends (each file with the
// files it imports). undescribed are the symbols the server did not know.
func reflectTypes(ctx context.Context, conn grpc.ClientConnInterface, symbols []string) (types *dynamicpb.Types, undescribed []string, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	for _, sym := range symbols {
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{
			MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: sym},
		}); err != nil {
			return nil, nil, err
		}
		r, err := stream.Recv()
		if err != nil {
			return nil, nil, err
		}
		if r.GetErrorResponse() != nil {
			undescribed = append(undescribed, sym)
			continue
		}
		for _, raw := range r.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(raw, fd); err != nil {
				return nil, nil, err
			}
			if !seen[fd.GetName()] {
				seen[fd.GetName()] = true
				set.File = append(set.File, fd)
			}
		}
	}
	if err := stream.CloseSend(); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, nil, err
	}
	return dynamicpb.NewTypes(files), undescribed, nil
}
