package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/hangarhq/hangar/api/hangar/v1" // the services' descriptors
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// pkg is the platform's proto package: gnostic's operationIds are
// Service_Method within it.
const pkg = "hangar.v1"

const infoDescription = `Hangar's REST API: players, matches, actions, events and history, for
whichever games a node hosts. The same calls are served over gRPC, Connect
and gRPC-Web; this document describes their REST/JSON form.

Every call takes a bearer token (` + "`Authorization: Bearer <token>`" + `) unless it
says otherwise: CreatePlayer gives one. A refused call answers an HTTP
error status with a google.rpc.Status body whose details hold a
google.rpc.ErrorInfo (domain "hangar") with a stable reason; each
operation lists the statuses and reasons it can give.

A game's options, state, board, actions and events are its own messages,
carried as google.protobuf.Any: JSON with an "@type" naming the message.
x-hangar-games names each hosted game's messages; ListGames says the same.`

// fix finishes gnostic's document root.
func fix(root *yaml.Node) error {
	undent(root)
	info := get(root, "info")
	set(info, "description", str(infoDescription), "title")
	set(info, "license", obj("name", "Apache-2.0", "url", "https://www.apache.org/licenses/LICENSE-2.0"), "version")

	set(root, "servers", seq(obj(
		"url", "{scheme}://{host}",
		"description", "A Hangar node: `hangar serve` listens on 127.0.0.1:7350 unless told otherwise.",
		"variables", obj(
			"scheme", obj("default", "http", "enum", seq("http", "https"),
				"description", "https when the node serves TLS (--tls-cert) or sits behind a proxy that does."),
			"host", obj("default", "127.0.0.1:7350", "description", "The node's address and port."),
		),
	)), "info")
	set(root, "security", seq(obj("bearer", seq())), "servers")

	comps := get(root, "components")
	schemas := get(comps, "schemas")
	if err := fixSchemas(schemas); err != nil {
		return err
	}
	set(comps, "responses", errorResponses(), "schemas")
	set(comps, "securitySchemes", obj(
		"bearer", obj("type", "http", "scheme", "bearer",
			"description", "A player's token (`hgr_…`), from CreatePlayer, SignInExternalPlayer or RefreshToken; or, on a node configured with an identity provider, that provider's token. A token expires (TOKEN_EXPIRED) and can be revoked (TOKEN_REVOKED)."),
		"apiKey", obj("type", "http", "scheme", "bearer",
			"description", "An API key (`hk_…`) made by `hangar apikey create`, for a game's own backend. It calls SignInExternalPlayer and nothing else (PERMISSION_DENIED, API_KEY_NOT_A_PLAYER)."),
	), "responses")

	paths := get(root, "paths")
	if paths == nil {
		return fmt.Errorf("no paths")
	}
	type opAt struct {
		path string
		op   *yaml.Node
		md   protoreflect.MethodDescriptor
	}
	byID := map[string][]opAt{}
	var ids []string
	var err error
	pairs(paths, func(path string, item *yaml.Node) {
		pairs(item, func(verb string, op *yaml.Node) {
			if err != nil {
				return
			}
			id := get(op, "operationId")
			if id == nil {
				err = fmt.Errorf("%s %s has no operationId", verb, path)
				return
			}
			md, lerr := method(id.Value)
			if lerr != nil {
				err = fmt.Errorf("%s %s: %w", verb, path, lerr)
				return
			}
			if ferr := fixOperation(path, verb, op, md); ferr != nil {
				err = fmt.Errorf("%s %s: %w", verb, path, ferr)
				return
			}
			if _, ok := byID[id.Value]; !ok {
				ids = append(ids, id.Value)
			}
			byID[id.Value] = append(byID[id.Value], opAt{path, op, md})
		})
	})
	if err != nil {
		return err
	}
	// An RPC with additional bindings has one operation per binding: its
	// primary binding keeps the RPC's operationId, each other one is named
	// after its path.
	for _, id := range ids {
		ops := byID[id]
		if len(ops) < 2 {
			continue
		}
		primary := primaryPath(ops[0].md)
		for _, o := range ops {
			if o.path != primary {
				set(o.op, "operationId", str(id+"_"+pathName(o.path)), "")
			}
		}
	}
	return nil
}

// method finds the RPC of an operationId ("PlayerService_GetPlayer").
func method(id string) (protoreflect.MethodDescriptor, error) {
	svc, name, ok := strings.Cut(id, "_")
	if !ok {
		return nil, fmt.Errorf("operationId %q is not Service_Method", id)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(pkg + "." + svc))
	if err != nil {
		return nil, fmt.Errorf("operationId %q: %w", id, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("operationId %q: %s is not a service", id, d.FullName())
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, fmt.Errorf("operationId %q: no method %s", id, name)
	}
	return md, nil
}

// primaryPath is the path of md's primary REST binding, its variables in
// lowerCamelCase as gnostic writes them.
func primaryPath(md protoreflect.MethodDescriptor) string {
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	p := rule.GetGet() + rule.GetPost() + rule.GetPut() + rule.GetDelete() + rule.GetPatch()
	var b strings.Builder
	up := false
	for _, r := range p {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pathName names a path by its literal segments: /v1/me is "Me".
func pathName(p string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/v1/"), "/") {
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == ':' || r == '{' }) {
			if strings.HasSuffix(part, "}") {
				continue
			}
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// fixOperation adds an operation's summary, security, error responses and,
// for a stream, its media types.
func fixOperation(path, verb string, op *yaml.Node, md protoreflect.MethodDescriptor) error {
	desc := get(op, "description")
	if desc == nil || strings.TrimSpace(desc.Value) == "" {
		return fmt.Errorf("%s has no comment in proto/: its operation needs a description", md.FullName())
	}
	set(op, "summary", str(summary(desc.Value)), "tags")

	full := "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	open := auth.Open(full)
	switch {
	case open:
		set(op, "security", seq(), "operationId")
	case auth.KeyOnly(full):
		set(op, "security", seq(obj("apiKey", seq())), "operationId")
	}

	responses := get(op, "responses")
	if responses == nil {
		return fmt.Errorf("no responses")
	}
	hasBody := get(op, "requestBody") != nil
	named := hasBody || get(op, "parameters") != nil
	// The error statuses follow 200, in order, and default ends them.
	del(responses, "default")
	add := func(status, name string) { set(responses, status, ref("responses", name), "") }
	add("400", "BadRequest")
	if !open {
		add("401", "Unauthorized")
		add("403", "Forbidden")
	}
	if named {
		add("404", "NotFound")
	}
	if verb != "get" {
		add("409", "Conflict")
	}
	if hasBody {
		add("413", "PayloadTooLarge")
		add("415", "UnsupportedMediaType")
	}
	add("429", "TooManyRequests")
	add("500", "InternalError")
	add("503", "Unavailable")
	add("default", "Error")

	if md.IsStreamingServer() && !md.IsStreamingClient() {
		return fixStream(op, responses, md)
	}
	return nil
}

// fixStream describes a REST stream (server/local.go, restWriter): one
// JSON response a line, or one server-sent event each.
func fixStream(op, responses *yaml.Node, md protoreflect.MethodDescriptor) error {
	ok := get(responses, "200")
	if ok == nil {
		return fmt.Errorf("no 200 response")
	}
	msg := string(md.Output().FullName())
	resume := ""
	if ps := get(op, "parameters"); ps != nil && slices.ContainsFunc(ps.Content, func(p *yaml.Node) bool {
		return get(p, "name") != nil && get(p, "name").Value == "afterSeq"
	}) {
		resume = "\nEach event's id is its seq: a reconnecting EventSource sends the last\none back as Last-Event-ID, and the stream resumes after it."
		params := get(op, "parameters")
		params.Content = append(params.Content, obj(
			"name", "Last-Event-ID",
			"in", "header",
			"description", "The id of the last server-sent event seen, sent by a reconnecting EventSource: the stream resumes after it (it wins over afterSeq).",
			"schema", obj("type", "string"),
		))
	}
	set(op, "x-hangar-stream", obj("messages", msg, "mediaTypes", seq("application/x-ndjson", "text/event-stream")), "")
	set(responses, "200", obj(
		"description", fmt.Sprintf(`A stream of %s messages, each as it happens, until
the stream ends. As application/x-ndjson (the default), each message is one line of JSON; an
error after the stream began is a last line {"error": google.rpc.Status}.
As text/event-stream (when the request's Accept names it), each message is
the data of one server-sent event; an error is an "error" event whose data
is the google.rpc.Status, and the normal end an "end" event.%s
An error before the stream began is an HTTP error status, as for any call.`, msg, resume),
		"headers", obj("Cache-Control", obj("description", "no-store: a stream is never cached.", "schema", obj("type", "string"))),
		"content", obj(
			"application/x-ndjson", obj("schema", ref("schemas", msg)),
			"text/event-stream", obj("schema", obj("type", "string",
				"description", fmt.Sprintf("Server-sent events: `id: <seq>` (where the stream has a cursor) and `data: <%s as JSON>`, a blank line after each.", msg))),
		),
	), "")
	return nil
}

// summary is the first sentence of a comment, without its full stop.
func summary(desc string) string {
	s := strings.Join(strings.Fields(desc), " ")
	for i := 0; i < len(s); i++ {
		if s[i] != '.' || (i+1 < len(s) && s[i+1] != ' ') {
			continue
		}
		word := s[strings.LastIndexByte(s[:i], ' ')+1 : i]
		if word == "e.g" || word == "i.e" || word == "etc" {
			continue
		}
		return shorten(s[:i])
	}
	return shorten(strings.TrimSuffix(s, "."))
}

// shorten cuts a summary longer than a line of a reference's menu at its
// first colon, parenthesis or comma past its subject.
func shorten(s string) string {
	const long, subject = 80, 20
	if len(s) <= long {
		return s
	}
	cut := len(s)
	for _, sep := range []string{": ", " (", ", "} {
		if i := strings.Index(s[subject:], sep); i >= 0 {
			cut = min(cut, subject+i)
		}
	}
	return s[:cut]
}

// undent removes the space gnostic leaves at the start of each line but
// the first of a comment ("// text" loses its slashes, not its space).
func undent(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := n.Content[i+1]
			if n.Content[i].Value == "description" && v.Kind == yaml.ScalarNode && strings.Contains(v.Value, "\n") {
				lines := strings.Split(v.Value, "\n")
				spaced := true
				for _, l := range lines[1:] {
					spaced = spaced && (l == "" || strings.HasPrefix(l, " "))
				}
				if spaced {
					for j := 1; j < len(lines); j++ {
						lines[j] = strings.TrimPrefix(lines[j], " ")
					}
					v.Value = strings.Join(lines, "\n")
				}
			}
		}
	}
	for _, c := range n.Content {
		undent(c)
	}
}

// fixSchemas adds google.rpc.ErrorInfo and RetryInfo, the details of
// Hangar's errors, and lets google.rpc.Status's details be either.
func fixSchemas(schemas *yaml.Node) error {
	status := get(schemas, "google.rpc.Status")
	if status == nil {
		return fmt.Errorf("no google.rpc.Status schema")
	}
	var reasons []string
	for _, r := range allReasons() {
		if !slices.Contains(reasons, r.reason) {
			reasons = append(reasons, r.reason)
		}
	}
	slices.Sort(reasons)
	set(schemas, "google.rpc.ErrorInfo", obj(
		"type", "object",
		"properties", obj(
			"@type", obj("type", "string", "enum", seq("type.googleapis.com/google.rpc.ErrorInfo")),
			"reason", obj("type", "string", "description", "The reason: stable, UPPER_SNAKE_CASE. Hangar's are "+strings.Join(reasons, ", ")+"; a later version may add others."),
			"domain", obj("type", "string", "description", `"hangar" for Hangar's reasons.`),
			"metadata", obj("type", "object", "additionalProperties", obj("type", "string"),
				"description", "Facts about this error: current_version (VERSION_CONFLICT), credentials (UNAUTHENTICATED: missing, malformed or unknown), limit (the quotas), ticket_id (TICKET_OPEN)."),
		),
		"required", seq("@type", "reason", "domain"),
		"description", "Why a call was refused, in a form a program can act on (google.rpc.ErrorInfo). Every refusal of Hangar's carries one, in the details of its google.rpc.Status.",
	), "google.protobuf.Any")
	set(schemas, "google.rpc.RetryInfo", obj(
		"type", "object",
		"properties", obj(
			"@type", obj("type", "string", "enum", seq("type.googleapis.com/google.rpc.RetryInfo")),
			"retryDelay", obj("type", "string", "format", "duration", "description", `How long to wait before retrying, e.g. "1.5s".`),
		),
		"required", seq("@type"),
		"description", "When to retry a call that was refused for now (google.rpc.RetryInfo): RATE_LIMITED, REQUEST_MEMORY.",
	), "google.rpc.ErrorInfo")
	details := get(get(status, "properties"), "details")
	if details == nil {
		return fmt.Errorf("google.rpc.Status has no details")
	}
	set(details, "items", obj("anyOf", seq(
		ref("schemas", "google.rpc.ErrorInfo"),
		ref("schemas", "google.rpc.RetryInfo"),
		ref("schemas", "google.protobuf.Any"),
	)), "")
	set(details, "description", str("The error's details: a google.rpc.ErrorInfo always, a google.rpc.RetryInfo when a retry should wait."), "")
	return nil
}

// reasonAt is an ErrorInfo reason and the HTTP status it comes with over
// REST.
type reasonAt struct {
	reason string
	http   int
}

// allReasons are the service's reasons (service.Reasons) and the edge's
// (service/edge.go), with their HTTP statuses (the transcoder's mapping
// of gRPC codes; the edge's own for its refusals).
func allReasons() []reasonAt {
	var out []reasonAt
	for _, r := range service.Reasons() {
		out = append(out, reasonAt{r.Reason, server.HTTPStatus(r.Code)})
	}
	return append(out,
		reasonAt{service.ReasonMalformedRequest, http.StatusBadRequest},
		reasonAt{service.ReasonNoRoute, http.StatusNotFound},
		reasonAt{service.ReasonMethodNotAllowed, http.StatusMethodNotAllowed},
		reasonAt{service.ReasonRequestTimeout, http.StatusRequestTimeout},
		reasonAt{service.ReasonRequestTooLarge, http.StatusRequestEntityTooLarge},
		reasonAt{service.ReasonUnsupportedMediaType, http.StatusUnsupportedMediaType},
		reasonAt{service.ReasonRequestMemory, http.StatusTooManyRequests},
	)
}

// errorResponses are the shared error responses, each naming its gRPC
// codes and its reasons.
func errorResponses() *yaml.Node {
	byStatus := map[int][]string{}
	for _, r := range allReasons() {
		if !slices.Contains(byStatus[r.http], r.reason) {
			byStatus[r.http] = append(byStatus[r.http], r.reason)
		}
	}
	resp := func(status int, what string, more ...int) *yaml.Node {
		d := what
		rs := byStatus[status]
		for _, m := range more {
			rs = append(rs, byStatus[m]...)
		}
		if len(rs) > 0 {
			d += "\n\nThe body is a google.rpc.Status whose details hold a google.rpc.ErrorInfo (domain \"hangar\") with one of these reasons: " +
				"`" + strings.Join(rs, "`, `") + "`."
		}
		return obj("description", d, "content", obj("application/json", obj("schema", ref("schemas", "google.rpc.Status"))))
	}
	return obj(
		"BadRequest", resp(400, "INVALID_ARGUMENT, FAILED_PRECONDITION or OUT_OF_RANGE: the request is malformed, breaks a rule of the game or the match now, or asks beyond the end."),
		"Unauthorized", resp(401, "UNAUTHENTICATED: no token, a malformed Authorization header, or a token that is unknown, expired or revoked. The ErrorInfo's metadata \"credentials\" tells the first three apart (missing, malformed, unknown)."),
		"Forbidden", resp(403, "PERMISSION_DENIED: the caller may not do this (not seated, not the creator, an API key where a player's token is needed, or the reverse)."),
		"NotFound", resp(404, "NOT_FOUND: no such match, player, game, ticket or invitation code, or no route for the request."),
		"Conflict", resp(409, "ABORTED or ALREADY_EXISTS: the match moved on since expected_version (read it again and retry), a request id was reused for another request, or the thing exists already."),
		"PayloadTooLarge", resp(413, "The request's body is larger than the node takes."),
		"UnsupportedMediaType", resp(415, "The request's Content-Type or Content-Encoding is one the route does not speak: send application/json."),
		"TooManyRequests", resp(429, "RESOURCE_EXHAUSTED: a rate limit or a quota. A google.rpc.RetryInfo in the details says when to retry, where waiting helps."),
		"InternalError", obj("description", "INTERNAL: the node failed. The body is a google.rpc.Status whose message is fixed (\"internal error\"): the cause is in the node's log, never in the answer.",
			"content", obj("application/json", obj("schema", ref("schemas", "google.rpc.Status")))),
		"Unavailable", resp(503, "UNAVAILABLE: the node or its database cannot answer now; retry with backoff."),
		"Error", resp(405, "Any other refusal, as a google.rpc.Status: 405 (a path with another HTTP method), 408 (the body came too slowly: REQUEST_TIMEOUT), 499 (CANCELLED), 501 (UNIMPLEMENTED), 504 (DEADLINE_EXCEEDED).", 408),
	)
}
