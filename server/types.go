package server

import (
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/hangarhq/hangar/game"
)

// gameTypes are the message types the node resolves where the API carries
// a google.protobuf.Any: every hosted game's messages (the files that
// declare them and the files those import), and the error details a status
// carries. JSON (REST, Connect's JSON, the REST watches) writes and reads an
// Any through them, the transcoder too, and gRPC reflection describes them
// (a game's types are reached from no service, only from an Any): so a
// generic client, grpcurl among them, decodes every hosted game's messages,
// and an Any of a type no hosted game has is refused when the request is
// read.
type gameTypes struct {
	files *protoregistry.Files
	types *protoregistry.Types
}

// newGameTypes collects the types of games. A game whose Go types are not
// linked into the binary (its descriptors built at run time) gets dynamic
// types.
func newGameTypes(games *game.Registry) (*gameTypes, error) {
	t := &gameTypes{files: new(protoregistry.Files), types: new(protoregistry.Types)}
	for _, m := range games.Messages() {
		if err := t.addFile(m.ProtoReflect().Descriptor().ParentFile()); err != nil {
			return nil, err
		}
	}
	if err := t.addFile((&errdetails.ErrorInfo{}).ProtoReflect().Descriptor().ParentFile()); err != nil {
		return nil, err
	}
	return t, nil
}

// addFile adds fd, what it imports first, unless it is there already.
func (t *gameTypes) addFile(fd protoreflect.FileDescriptor) error {
	if _, err := t.files.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		if err := t.addFile(imports.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	if err := t.files.RegisterFile(fd); err != nil {
		return fmt.Errorf("game types: %w", err)
	}
	return t.addTypes(fd.Messages(), fd.Enums())
}

// addTypes adds the messages and enums of a file or a message, nested ones
// too.
func (t *gameTypes) addTypes(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors) error {
	for i := range es.Len() {
		ed := es.Get(i)
		et, err := protoregistry.GlobalTypes.FindEnumByName(ed.FullName())
		if err != nil || et.Descriptor() != ed {
			et = dynamicpb.NewEnumType(ed)
		}
		if err := t.types.RegisterEnum(et); err != nil {
			return fmt.Errorf("game types: %w", err)
		}
	}
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
		if err != nil || mt.Descriptor() != md {
			mt = dynamicpb.NewMessageType(md)
		}
		if err := t.types.RegisterMessage(mt); err != nil {
			return fmt.Errorf("game types: %w", err)
		}
		if err := t.addTypes(md.Messages(), md.Enums()); err != nil {
			return err
		}
	}
	return nil
}

// FindMessageByName implements protoregistry.MessageTypeResolver.
func (t *gameTypes) FindMessageByName(name protoreflect.FullName) (protoreflect.MessageType, error) {
	return t.types.FindMessageByName(name)
}

// FindMessageByURL implements protoregistry.MessageTypeResolver.
func (t *gameTypes) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	return t.types.FindMessageByURL(url)
}

// FindExtensionByName implements protoregistry.ExtensionTypeResolver.
func (t *gameTypes) FindExtensionByName(name protoreflect.FullName) (protoreflect.ExtensionType, error) {
	return t.types.FindExtensionByName(name)
}

// FindExtensionByNumber implements protoregistry.ExtensionTypeResolver.
func (t *gameTypes) FindExtensionByNumber(message protoreflect.FullName, field protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	return t.types.FindExtensionByNumber(message, field)
}

// descriptors is what gRPC reflection resolves: the games' files first,
// then the binary's own (the services, health, reflection itself).
type descriptors struct{ games *protoregistry.Files }

var _ protodesc.Resolver = descriptors{}

func (d descriptors) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	fd, err := d.games.FindFileByPath(path)
	if errors.Is(err, protoregistry.NotFound) {
		return protoregistry.GlobalFiles.FindFileByPath(path)
	}
	return fd, err
}

func (d descriptors) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	desc, err := d.games.FindDescriptorByName(name)
	if errors.Is(err, protoregistry.NotFound) {
		return protoregistry.GlobalFiles.FindDescriptorByName(name)
	}
	return desc, err
}
