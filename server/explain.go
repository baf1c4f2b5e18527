package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The HTTP side answers a request it cannot read with what would be right:
// the nearest field name for an unknown one, the values an enum takes, the
// type a field takes. protojson's errors say what is wrong in its own
// words (and vary their spacing on purpose, so that no one matches them),
// so the body is read again here, against the message's descriptor, to
// find the first fault and explain it.

// explainJSON says what is wrong with b as the JSON of a message of md,
// and what would be right; "" when it finds no fault (the decoder's error
// then stands). resolve finds the message an Any's "@type" names (nil: an
// Any is not looked into).
func explainJSON(b []byte, md protoreflect.MessageDescriptor, resolve func(url string) protoreflect.MessageDescriptor) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		var se *json.SyntaxError
		at := ""
		if errors.As(err, &se) {
			at = fmt.Sprintf(" at byte %d", se.Offset)
		} else if errors.Is(err, io.ErrUnexpectedEOF) {
			at = " (it ends early)"
		}
		return fmt.Sprintf("the body is not valid JSON%s; send one JSON object of %s's fields, e.g. {\"%s\": …}",
			at, md.Name(), firstField(md))
	}
	if d.More() {
		return fmt.Sprintf("the body holds more than one JSON value; send one JSON object of %s's fields", md.Name())
	}
	return explainer{resolve}.message(v, md, "")
}

// explainer explains the faults of a decoded JSON value.
type explainer struct {
	resolve func(url string) protoreflect.MessageDescriptor // nil: none
}

func firstField(md protoreflect.MessageDescriptor) string {
	if md.Fields().Len() == 0 {
		return ""
	}
	return string(md.Fields().Get(0).Name())
}

// message checks v, a decoded JSON value, as a message of md at
// path (a field path such as "options.", empty at the top).
func (e explainer) message(v any, md protoreflect.MessageDescriptor, path string) string {
	if wk := wellKnownJSON(md); wk != "" {
		return ""
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return ""
		}
		return fmt.Sprintf("%s must be a JSON object of %s's fields, not %s", orBody(path), md.Name(), jsonKind(v))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fd := fieldByName(md, k)
		if fd == nil {
			return unknownField(k, md, path)
		}
		if msg := e.field(obj[k], fd, path+string(fd.Name())); msg != "" {
			return msg
		}
	}
	return ""
}

func orBody(path string) string {
	if path == "" {
		return "the body"
	}
	return strconv.Quote(path)
}

// fieldByName finds a field by its JSON name or its proto name, as
// protojson does.
func fieldByName(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(name); fd != nil {
		return fd
	}
	return md.Fields().ByTextName(name)
}

// unknownField explains a field name md does not have: the nearest of its
// names, or all of them.
func unknownField(name string, md protoreflect.MessageDescriptor, path string) string {
	var names []string
	for i := range md.Fields().Len() {
		names = append(names, string(md.Fields().Get(i).Name()))
	}
	where := string(md.Name())
	if path != "" {
		where = strconv.Quote(strings.TrimSuffix(path, "."))
	}
	msg := fmt.Sprintf("unknown field %s in %s", quoteInput(name), where)
	if near := nearest(name, names, func(s string) []string {
		fd := md.Fields().ByName(protoreflect.Name(s))
		return []string{s, fd.JSONName()}
	}); near != "" {
		return msg + fmt.Sprintf("; did you mean %q?", near)
	}
	return msg + "; its fields are " + strings.Join(names, ", ")
}

// field checks v as the value of field fd, named path.
func (e explainer) field(v any, fd protoreflect.FieldDescriptor, path string) string {
	if v == nil {
		return ""
	}
	switch {
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("field %q takes a JSON object (a map), not %s", path, jsonKind(v))
		}
		for k, mv := range obj {
			if msg := e.value(mv, fd.MapValue(), path+"["+strconv.Quote(k)+"]"); msg != "" {
				return msg
			}
		}
		return ""
	case fd.IsList():
		arr, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("field %q takes a JSON array, not %s", path, jsonKind(v))
		}
		for i, ev := range arr {
			if msg := e.value(ev, fd, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
		return ""
	}
	return e.value(v, fd, path)
}

// value checks one value (not a list or a map) of field fd.
func (e explainer) value(v any, fd protoreflect.FieldDescriptor, path string) string {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		return explainEnum(v, fd.Enum(), path)
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("field %q takes true or false, not %s", path, jsonKind(v))
		}
	case protoreflect.StringKind:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("field %q takes a string, not %s", path, jsonKind(v))
		}
	case protoreflect.BytesKind:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("field %q takes base64 in a string, not %s", path, jsonKind(v))
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if !isNumber(v, false) {
			return fmt.Sprintf("field %q takes a number, not %s", path, jsonKind(v))
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if fd.Message().FullName() == "google.protobuf.Any" {
			return e.any(v, path)
		}
		if wk := wellKnownJSON(fd.Message()); wk != "" {
			return explainWellKnown(v, wk, path)
		}
		return e.message(v, fd.Message(), path+".")
	default: // the integer kinds
		if !isNumber(v, true) {
			return fmt.Sprintf("field %q takes an integer (%s), not %s", path, fd.Kind(), jsonKind(v))
		}
	}
	return ""
}

// any checks v as an Any: the fields of the message its "@type" names (a
// type no game hosts is the service's to refuse, as over gRPC).
func (e explainer) any(v any, path string) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprintf("field %q takes a JSON object with \"@type\", not %s", path, jsonKind(v))
	}
	url, _ := obj["@type"].(string)
	if e.resolve == nil || url == "" {
		return ""
	}
	md := e.resolve(url)
	if md == nil || wellKnownJSON(md) != "" {
		return ""
	}
	rest := make(map[string]any, len(obj))
	for k, fv := range obj {
		if k != "@type" {
			rest[k] = fv
		}
	}
	return e.message(rest, md, path+".")
}

// explainEnum checks v as a value of enum ed: one of its names, or a
// number.
func explainEnum(v any, ed protoreflect.EnumDescriptor, path string) string {
	if ed.FullName() == "google.protobuf.NullValue" {
		return ""
	}
	var names []string
	for i := range ed.Values().Len() {
		names = append(names, string(ed.Values().Get(i).Name()))
	}
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return ""
		}
	case string:
		if ed.Values().ByName(protoreflect.Name(v)) != nil {
			return ""
		}
		msg := fmt.Sprintf("invalid value %s for field %q", quoteInput(v), path)
		if near := nearest(v, names, nil); near != "" {
			return msg + fmt.Sprintf("; did you mean %s? (valid values: %s)", near, strings.Join(names, ", "))
		}
		return msg + "; valid values: " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("field %q takes one of %s, not %s", path, strings.Join(names, ", "), jsonKind(v))
}

// wellKnownJSON names how JSON writes a well-known type md, or "" for an
// ordinary message. An Any is read by the decoder (its "@type" names the
// message): it is not explained here.
func wellKnownJSON(md protoreflect.MessageDescriptor) string {
	switch md.FullName() {
	case "google.protobuf.Duration":
		return "duration"
	case "google.protobuf.Timestamp":
		return "timestamp"
	case "google.protobuf.Any", "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
		"google.protobuf.FieldMask", "google.protobuf.Empty":
		return "skip"
	}
	if md.ParentFile() != nil && md.ParentFile().Package() == "google.protobuf" && strings.HasSuffix(string(md.Name()), "Value") {
		return "skip" // the wrappers
	}
	return ""
}

func explainWellKnown(v any, kind, path string) string {
	s, isString := v.(string)
	switch kind {
	case "duration":
		if isString && strings.HasSuffix(s, "s") {
			if _, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64); err == nil {
				return ""
			}
		}
		return fmt.Sprintf("field %q takes a duration in seconds as a string, e.g. \"30s\" or \"1.5s\", not %s", path, jsonKind(v))
	case "timestamp":
		if isString {
			if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return ""
			}
		}
		return fmt.Sprintf("field %q takes an RFC 3339 time as a string, e.g. \"2026-01-02T15:04:05Z\", not %s", path, jsonKind(v))
	}
	return ""
}

// isNumber says whether v is a JSON number, or a string of one as
// protojson also takes (integer: a whole number only).
func isNumber(v any, integer bool) bool {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
		if !integer && (s == "NaN" || s == "Infinity" || s == "-Infinity") {
			return true
		}
	default:
		return false
	}
	if integer {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(s, 10, 64); err == nil {
			return true
		}
		// 2.0 and 1e3 are integers to protojson.
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && f == float64(int64(f))
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// jsonKind names a decoded JSON value for a message: its kind and, for a
// scalar, the value (cut short).
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return "the number " + truncateString(v.String(), 20)
	case string:
		return "the string " + quoteInput(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "that"
}

// quoteInput quotes a client's input, cut to 40 bytes: a refusal never
// echoes a long input back.
func quoteInput(s string) string {
	if len(s) > 40 {
		return strconv.Quote(strings.ToValidUTF8(s[:40], "")) + "…"
	}
	return strconv.Quote(s)
}

// nearest returns the candidate nearest to s by edit distance (ignoring
// case, over each spelling of a candidate that spellings gives, or the
// candidate alone), or "" when none is near. A swap of two neighbours is
// one edit, and characters a candidate has past the end of s cost a
// quarter of one: a name cut short ("seats" for "seat_count",
// "/v1/matche") is a common mistake. A candidate is near when at most a
// quarter (and at least one) of the characters of s past the prefix they
// share must change, and what it adds past the end is at most half of it.
func nearest(s string, candidates []string, spellings func(string) []string) string {
	best, bestCost := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		forms := []string{c}
		if spellings != nil {
			forms = spellings(c)
		}
		for _, f := range forms {
			lf := strings.ToLower(f)
			edits, tail := editDistance(ls, lf)
			if edits > max(1, (len(s)-commonPrefix(ls, lf))/4) || tail > len(f)/2 {
				continue
			}
			if cost := 4*edits + tail; bestCost < 0 || cost < bestCost {
				best, bestCost = c, cost
			}
		}
	}
	return best
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// editDistance is the edit distance (Levenshtein's, with a swap of two
// neighbours one edit), in bytes, between a and the prefix of b that is
// nearest to it, and the count of b's bytes past that prefix (tail), the
// prefix chosen to make 4*edits+tail least.
func editDistance(a, b string) (edits, tail int) {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	best := -1
	for j, d := range prev {
		if c := 4*d + len(b) - j; best < 0 || c < best {
			best, edits, tail = c, d, len(b)-j
		}
	}
	return edits, tail
}
