package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/hangarhq/hangar/service"
)

// routes are the calls the HTTP side answers: each RPC's path (Connect,
// gRPC-Web) and its REST bindings (the google.api.http annotations). The
// transcoder routes the calls; the front uses this table to tell a client
// that missed one which is nearest, which HTTP methods a path takes, and
// what a query parameter should be.
type routes struct {
	rpcs map[string]protoreflect.MethodDescriptor // "/hangar.v1.MatchService/GetMatch" ->
	rest []restRoute
}

// restRoute is one REST binding: GET /v1/matches/{match_id}.
type restRoute struct {
	verb, pattern string
	segs          []string // the pattern's path segments, the verb cut off the last
	custom        string   // the pattern's custom verb (":join"), or ""
	method        protoreflect.MethodDescriptor
}

// newRoutes reads the routes of the services registered on gs.
func newRoutes(gs *grpc.Server) *routes {
	rs := &routes{rpcs: map[string]protoreflect.MethodDescriptor{}}
	for name := range gs.GetServiceInfo() {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			rs.rpcs["/"+name+"/"+string(md.Name())] = md
			rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
			if rule == nil {
				continue
			}
			for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
				verb, pattern := http.MethodGet, r.GetGet()
				switch {
				case r.GetPost() != "":
					verb, pattern = http.MethodPost, r.GetPost()
				case r.GetPut() != "":
					verb, pattern = http.MethodPut, r.GetPut()
				case r.GetDelete() != "":
					verb, pattern = http.MethodDelete, r.GetDelete()
				case r.GetPatch() != "":
					verb, pattern = http.MethodPatch, r.GetPatch()
				}
				if pattern == "" {
					continue
				}
				segs, custom := splitRESTPath(pattern)
				rs.rest = append(rs.rest, restRoute{verb: verb, pattern: pattern, segs: segs, custom: custom, method: md})
			}
		}
	}
	slices.SortFunc(rs.rest, func(a, b restRoute) int { return strings.Compare(a.pattern+a.verb, b.pattern+b.verb) })
	return rs
}

// splitRESTPath splits a REST path or pattern into its segments and the
// custom verb of its last segment (":watch").
func splitRESTPath(p string) (segs []string, custom string) {
	segs = strings.Split(strings.TrimPrefix(p, "/"), "/")
	last := segs[len(segs)-1]
	// A variable's own text has no colon: the verb follows its brace.
	if i := strings.LastIndexByte(last, ':'); i >= 0 && strings.LastIndexByte(last, '}') < i {
		segs[len(segs)-1], custom = last[:i], last[i:]
	}
	return segs, custom
}

func isVariable(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// matches says whether the path p (split) fits the route's pattern.
func (r *restRoute) matches(segs []string, custom string) bool {
	if len(segs) != len(r.segs) || custom != r.custom {
		return false
	}
	for i, s := range r.segs {
		if isVariable(s) {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if s != segs[i] {
			return false
		}
	}
	return true
}

// restMethods returns the routes whose pattern fits path, whatever their
// HTTP method.
func (rs *routes) restMethods(path string) []*restRoute {
	segs, custom := splitRESTPath(path)
	var out []*restRoute
	for i := range rs.rest {
		if rs.rest[i].matches(segs, custom) {
			out = append(out, &rs.rest[i])
		}
	}
	return out
}

// nearestREST is the REST route nearest to verb and path ("GET
// /v1/matches/{match_id}"), or "".
func (rs *routes) nearestREST(verb, path string) string {
	segs, _ := splitRESTPath(path)
	var candidates []string
	spelt := map[string]string{}
	for _, r := range rs.rest {
		// The request's own segment stands in for a variable, so that
		// only the pattern's literal text counts.
		inst := make([]string, len(r.segs))
		for i, s := range r.segs {
			inst[i] = s
			if isVariable(s) && i < len(segs) {
				inst[i] = segs[i]
			}
		}
		name := r.verb + " " + r.pattern
		candidates = append(candidates, name)
		spelt[name] = "/" + strings.Join(inst, "/") + r.custom
		if r.verb != verb {
			// Another HTTP method is a little further.
			spelt[name] += "~"
		}
	}
	return nearest(path, candidates, func(c string) []string { return []string{spelt[c]} })
}

// nearestRPC is the RPC path nearest to path, or "".
func (rs *routes) nearestRPC(path string) string {
	var names []string
	for p := range rs.rpcs {
		names = append(names, p)
	}
	slices.Sort(names)
	return nearest(path, names, nil)
}

// noRoute is the refusal (err, with its HTTP status) of a request no call
// answers, naming the nearest route; allow is the Allow header to send with
// a 405 ("" with a 404).
func (rs *routes) noRoute(r *http.Request, p httpProtocol) (httpCode int, allow string, err error) {
	path := truncateString(r.URL.Path, 120)
	if p == protoConnectUnary || p == protoStream {
		if _, ok := rs.rpcs[r.URL.Path]; ok && r.Method == http.MethodPost {
			// The call is there, and POST is its method: the transcoder
			// took no protocol from the content type.
			return http.StatusUnsupportedMediaType, "", service.EdgeError(codes.InvalidArgument, service.ReasonUnsupportedMediaType, unsupportedMediaType(r, p), false)
		}
		if _, ok := rs.rpcs[r.URL.Path]; ok {
			msg := fmt.Sprintf("%s takes POST, not %s (Connect, gRPC-Web); its REST route is in /openapi.yaml", path, truncateString(r.Method, 10))
			return http.StatusMethodNotAllowed, http.MethodPost, service.EdgeError(codes.InvalidArgument, service.ReasonMethodNotAllowed, msg, false)
		}
		msg := "no call has the path " + strconv.Quote(path)
		if near := rs.nearestRPC(r.URL.Path); near != "" {
			msg += "; did you mean " + near + "?"
		}
		return http.StatusNotFound, "", service.EdgeError(codes.NotFound, service.ReasonNoRoute, msg+" (every call: /openapi.yaml)", false)
	}
	if same := rs.restMethods(r.URL.Path); len(same) > 0 && !slices.ContainsFunc(same, func(s *restRoute) bool { return s.verb == r.Method }) {
		var verbs []string
		for _, s := range same {
			if !slices.Contains(verbs, s.verb) {
				verbs = append(verbs, s.verb)
			}
		}
		slices.Sort(verbs)
		msg := fmt.Sprintf("%s takes %s, not %s", same[0].pattern, strings.Join(verbs, " or "), truncateString(r.Method, 10))
		return http.StatusMethodNotAllowed, strings.Join(verbs, ", "), service.EdgeError(codes.InvalidArgument, service.ReasonMethodNotAllowed, msg, false)
	}
	msg := fmt.Sprintf("no route for %s %s", truncateString(r.Method, 10), strconv.Quote(path))
	if near := rs.nearestREST(r.Method, r.URL.Path); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return http.StatusNotFound, "", service.EdgeError(codes.NotFound, service.ReasonNoRoute, msg+" (every route: /openapi.yaml)", false)
}

// checkQuery explains the first query parameter of a REST request that
// its call's message cannot take: an unknown field (with the nearest), a
// bad enum value (with the valid ones), a value of the wrong type. It
// returns "" when the query is fine, or the request matches no route.
func (rs *routes) checkQuery(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	var route *restRoute
	for _, c := range rs.restMethods(r.URL.Path) {
		if c.verb == r.Method {
			route = c
		}
	}
	if route == nil {
		return ""
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "the query string is malformed; send name=value pairs joined by &, each escaped"
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "$") {
			continue // the transcoder's own ($alt)
		}
		md := route.method.Input()
		var fd protoreflect.FieldDescriptor
		parts := strings.Split(k, ".")
		for i, part := range parts {
			fd = fieldByName(md, part)
			if fd == nil {
				msg := unknownField(part, md, strings.Join(parts[:i], ".")+dotIf(i > 0))
				return "query parameter: " + msg
			}
			if i < len(parts)-1 {
				if fd.Kind() != protoreflect.MessageKind {
					return fmt.Sprintf("query parameter %s: field %q has no fields", quoteInput(k), fd.Name())
				}
				md = fd.Message()
			}
		}
		if fd.Kind() == protoreflect.MessageKind && wellKnownJSON(fd.Message()) == "" {
			return fmt.Sprintf("query parameter %s names a message; name one of its fields (%s.<field>)", quoteInput(k), fd.Name())
		}
		for _, v := range q[k] {
			if msg := explainQueryValue(v, fd, k); msg != "" {
				return "query parameter: " + msg
			}
		}
	}
	return ""
}

func dotIf(b bool) string {
	if b {
		return "."
	}
	return ""
}

// explainQueryValue checks one query value of field fd: a query value is
// text, so a string is read as the field's type.
func explainQueryValue(v string, fd protoreflect.FieldDescriptor, name string) string {
	var jv any = v
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if v == "true" || v == "false" || v == "1" || v == "0" {
			return ""
		}
		return fmt.Sprintf("field %q takes true or false, not %s", name, quoteInput(v))
	case protoreflect.StringKind, protoreflect.BytesKind:
		return ""
	}
	return explainer{}.value(jv, fd, name)
}
