package main

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// get returns the value of key in the mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set sets key in the mapping m to v: in place when m has it, else after
// the key after (or at the end when m has no such key, or after is "").
func set(m *yaml.Node, key string, v *yaml.Node, after string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	at := len(m.Content)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if after != "" && m.Content[i].Value == after {
			at = i + 2
		}
	}
	kv := []*yaml.Node{str(key), v}
	m.Content = append(m.Content[:at], append(kv, m.Content[at:]...)...)
}

// del removes key from the mapping m.
func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// obj makes a mapping of key, value pairs.
func obj(kvs ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kvs); i += 2 {
		m.Content = append(m.Content, str(kvs[i].(string)), node(kvs[i+1]))
	}
	return m
}

// seq makes a sequence.
func seq(vs ...any) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, v := range vs {
		s.Content = append(s.Content, node(v))
	}
	return s
}

// node is v as a node: a node as it is, a string as a string, an int as
// an int, a bool as a bool.
func node(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case string:
		return str(v)
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	}
	panic("openapigen: no node for a value of this type")
}

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if len(s) > 0 && (s[len(s)-1] == '\n' || containsNewline(s)) {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func containsNewline(s string) bool {
	for i := range len(s) {
		if s[i] == '\n' {
			return true
		}
	}
	return false
}

// ref is {$ref: #/components/<kind>/<name>}.
func ref(kind, name string) *yaml.Node {
	return obj("$ref", "#/components/"+kind+"/"+name)
}

// pairs calls f for each key and value of the mapping m.
func pairs(m *yaml.Node, f func(k string, v *yaml.Node)) {
	if m == nil {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		f(m.Content[i].Value, m.Content[i+1])
	}
}
