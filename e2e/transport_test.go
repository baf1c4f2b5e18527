package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The HTTP side of the port, spoken by hand as a browser or curl would: two
// grpc.ClientConnInterface implementations, one over REST/JSON (the URL
// from each RPC's google.api.http rule) and one over the Connect protocol
// with JSON. The generated clients run on them unchanged, so the same
// tests play over gRPC, REST and Connect.

// httpClient returns a client (a registered player) speaking proto over
// transport "rest" or "connect" to addr.
func httpClient(t testing.TB, addr, transport, name string) *client {
	t.Helper()
	var cc grpc.ClientConnInterface
	switch transport {
	case "rest":
		cc = &restConn{base: "http://" + addr}
	case "connect":
		cc = &connectConn{base: "http://" + addr}
	default:
		t.Fatalf("transport %q", transport)
	}
	c := &client{conn: cc, players: hangarv1.NewPlayerServiceClient(cc),
		matches: hangarv1.NewMatchServiceClient(cc), moves: hangarv1.NewMoveServiceClient(cc)}
	resp, err := c.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
	if err != nil {
		t.Fatalf("CreatePlayer over %s: %v", transport, err)
	}
	c.token, c.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
	return c
}

func bearer(ctx context.Context) string {
	md, _ := metadata.FromOutgoingContext(ctx)
	if v := md.Get("authorization"); len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func methodDesc(method string) (protoreflect.MethodDescriptor, error) {
	name := strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", ".")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, err
	}
	return d.(protoreflect.MethodDescriptor), nil
}

// statusFromJSON reads a google.rpc.Status in JSON (REST's error body).
func statusFromJSON(code int, body []byte) error {
	var sp spb.Status
	if err := protojson.Unmarshal(body, &sp); err != nil {
		return status.Errorf(codes.Unknown, "HTTP %d: %.200s", code, body)
	}
	return status.FromProto(&sp).Err()
}

// restConn calls each RPC at its REST URL.
type restConn struct{ base string }

// request builds the HTTP request for an RPC from its google.api.http rule:
// path fields from the message, the rest as the body (POST) or the query.
func (c *restConn) request(ctx context.Context, method string, msg proto.Message) (*http.Request, error) {
	md, err := methodDesc(method)
	if err != nil {
		return nil, err
	}
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if rule == nil {
		return nil, fmt.Errorf("%s has no http rule", method)
	}
	verb, tmpl := http.MethodGet, rule.GetGet()
	if p := rule.GetPost(); p != "" {
		verb, tmpl = http.MethodPost, p
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	path := tmpl
	for name, v := range fields {
		if p := "{" + name + "}"; strings.Contains(path, p) {
			path = strings.ReplaceAll(path, p, url.PathEscape(fmt.Sprint(v)))
			delete(fields, name)
		}
	}
	// A path field left empty: the rule's other binding (GetPlayer of the
	// caller is GET /v1/me).
	if strings.Contains(path, "{") {
		for _, ab := range rule.GetAdditionalBindings() {
			if g := ab.GetGet(); g != "" && !strings.Contains(g, "{") {
				path = g
			}
		}
	}
	var body io.Reader
	if verb == http.MethodPost {
		b, _ := json.Marshal(fields)
		body = bytes.NewReader(b)
	} else if len(fields) > 0 {
		q := url.Values{}
		for k, v := range fields {
			q.Set(k, fmt.Sprint(v))
		}
		path += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, verb, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if a := bearer(ctx); a != "" {
		req.Header.Set("Authorization", a)
	}
	return req, nil
}

func (c *restConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	req, err := c.request(ctx, method, args.(proto.Message))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	if resp.StatusCode != http.StatusOK {
		return statusFromJSON(resp.StatusCode, body)
	}
	return protojson.Unmarshal(body, reply.(proto.Message))
}

func (c *restConn) NewStream(ctx context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return &lineStream{ctx: ctx, open: func(msg proto.Message) (*http.Response, error) {
		req, err := c.request(ctx, method, msg)
		if err != nil {
			return nil, err
		}
		return http.DefaultClient.Do(req)
	}}, nil
}

// lineStream reads a REST watch: one JSON response per line, or a last
// line {"error": Status}.
type lineStream struct {
	ctx  context.Context
	open func(proto.Message) (*http.Response, error)
	req  proto.Message
	resp *http.Response
	r    *bufio.Reader
}

func (s *lineStream) SendMsg(m any) error          { s.req = m.(proto.Message); return nil }
func (s *lineStream) CloseSend() error             { return nil }
func (s *lineStream) Header() (metadata.MD, error) { return nil, nil }
func (s *lineStream) Trailer() metadata.MD         { return nil }
func (s *lineStream) Context() context.Context     { return s.ctx }

func (s *lineStream) RecvMsg(m any) error {
	if s.resp == nil {
		resp, err := s.open(s.req)
		if err != nil {
			return status.FromContextError(err).Err()
		}
		s.resp = resp
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return statusFromJSON(resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
			return fmt.Errorf("watch answered %q", ct)
		}
		s.r = bufio.NewReader(resp.Body)
	}
	line, err := s.r.ReadBytes('\n')
	if err != nil {
		s.resp.Body.Close()
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return io.EOF
		}
		if s.ctx.Err() != nil {
			return status.FromContextError(s.ctx.Err()).Err()
		}
		return status.Errorf(codes.Unavailable, "watch cut: %v", err)
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &e) == nil && e.Error != nil {
		s.resp.Body.Close()
		return statusFromJSON(0, e.Error)
	}
	return protojson.Unmarshal(line, m.(proto.Message))
}

// connectConn calls each RPC with the Connect protocol, JSON codec.
type connectConn struct{ base string }

func (c *connectConn) post(ctx context.Context, method, contentType string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Connect-Protocol-Version", "1")
	if a := bearer(ctx); a != "" {
		req.Header.Set("Authorization", a)
	}
	return http.DefaultClient.Do(req)
}

// connectError reads the Connect protocol's JSON error: code as a name,
// details as base64 of their proto bytes.
func connectError(body []byte) error {
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Code == "" {
		return status.Errorf(codes.Unknown, "undecodable Connect error: %.200s", body)
	}
	code := codes.Unknown
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.EqualFold(strings.ReplaceAll(e.Code, "_", ""), strings.ToLower(c.String())) {
			code = c
		}
	}
	sp := &spb.Status{Code: int32(code), Message: e.Message}
	for _, d := range e.Details {
		v, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		if err != nil {
			return fmt.Errorf("detail %s: %w", d.Type, err)
		}
		sp.Details = append(sp.Details, &anypb.Any{TypeUrl: "type.googleapis.com/" + d.Type, Value: v})
	}
	return status.FromProto(sp).Err()
}

func (c *connectConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	b, err := protojson.Marshal(args.(proto.Message))
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, method, "application/json", b)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	if resp.StatusCode != http.StatusOK {
		return connectError(body)
	}
	return protojson.Unmarshal(body, reply.(proto.Message))
}

func (c *connectConn) NewStream(ctx context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return &envelopeStream{ctx: ctx, open: func(msg proto.Message) (*http.Response, error) {
		b, err := protojson.Marshal(msg)
		if err != nil {
			return nil, err
		}
		return c.post(ctx, method, "application/connect+json", envelope(0, b))
	}}, nil
}

func envelope(flags byte, b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	out[0] = flags
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// envelopeStream reads a Connect server stream: enveloped JSON messages,
// then an end-of-stream envelope (flag 2) that may carry an error.
type envelopeStream struct {
	ctx  context.Context
	open func(proto.Message) (*http.Response, error)
	req  proto.Message
	resp *http.Response
}

func (s *envelopeStream) SendMsg(m any) error          { s.req = m.(proto.Message); return nil }
func (s *envelopeStream) CloseSend() error             { return nil }
func (s *envelopeStream) Header() (metadata.MD, error) { return nil, nil }
func (s *envelopeStream) Trailer() metadata.MD         { return nil }
func (s *envelopeStream) Context() context.Context     { return s.ctx }

func (s *envelopeStream) RecvMsg(m any) error {
	if s.resp == nil {
		resp, err := s.open(s.req)
		if err != nil {
			return status.FromContextError(err).Err()
		}
		s.resp = resp
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return connectError(body)
		}
	}
	var head [5]byte
	if _, err := io.ReadFull(s.resp.Body, head[:]); err != nil {
		s.resp.Body.Close()
		if s.ctx.Err() != nil {
			return status.FromContextError(s.ctx.Err()).Err()
		}
		return status.Errorf(codes.Unavailable, "stream cut without its end: %v", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(head[1:]))
	if _, err := io.ReadFull(s.resp.Body, b); err != nil {
		s.resp.Body.Close()
		return status.Errorf(codes.Unavailable, "stream cut: %v", err)
	}
	if head[0]&2 != 0 {
		s.resp.Body.Close()
		var end struct {
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(b, &end); err != nil {
			return err
		}
		if end.Error != nil {
			return connectError(end.Error)
		}
		return io.EOF
	}
	return protojson.Unmarshal(b, m.(proto.Message))
}
