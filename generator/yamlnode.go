package generator

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// reader pulls typed values out of a parsed YAML document, recording every
// problem with its file and line instead of stopping at the first.
type reader struct {
	file  string
	probs Problems
}

func (r *reader) add(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	r.probs.add(r.file, line, format, args...)
}

// fields returns the keys of mapping node n. Keys not in allowed are
// reported as unknown, with the allowed list, and so are duplicates.
func (r *reader) fields(n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		r.add(n, "%s must be a mapping of keys to values, not %s", what, kindName(n))
		return nil
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(allowed, k.Value) {
			r.add(k, "unknown field %q in %s; allowed fields are: %s", k.Value, what, strings.Join(allowed, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			r.add(k, "field %q appears twice in %s; keep one", k.Value, what)
			continue
		}
		out[k.Value] = v
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "an empty document"
}

// str returns the string at key; a missing or empty required key is reported
// against parent (the mapping's own node).
func (r *reader) str(m map[string]*yaml.Node, parent *yaml.Node, key, what string, required bool) string {
	n, ok := m[key]
	if !ok || n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		if required {
			r.add(parent, "%s is missing %q; add it", what, key)
		}
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		r.add(n, "%q in %s must be text, not %s", key, what, kindName(n))
		return ""
	}
	v := strings.TrimSpace(n.Value)
	if v == "" && required {
		r.add(n, "%q in %s is empty; write a value", key, what)
	}
	return v
}

func (r *reader) integer(m map[string]*yaml.Node, parent *yaml.Node, key, what string, required bool, allowUnlimited bool) int {
	n, ok := m[key]
	if !ok {
		if required {
			r.add(parent, "%s is missing %q; add a whole number", what, key)
		}
		return 0
	}
	if allowUnlimited && n.Value == "unlimited" {
		return -1
	}
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < 0 {
		hint := "a whole number of 0 or more"
		if allowUnlimited {
			hint += ", or unlimited"
		}
		r.add(n, "%q in %s must be %s, not %q", key, what, hint, n.Value)
		return 0
	}
	return v
}

func (r *reader) boolean(m map[string]*yaml.Node, key, what string) bool {
	n, ok := m[key]
	if !ok {
		return false
	}
	switch n.Value {
	case "true":
		return true
	case "false":
		return false
	}
	r.add(n, "%q in %s must be true or false, not %q", key, what, n.Value)
	return false
}

func (r *reader) date(m map[string]*yaml.Node, parent *yaml.Node, key, what string, required bool) string {
	s := r.str(m, parent, key, what, required)
	if s == "" {
		return ""
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		r.add(m[key], "%q in %s must be a date like 2026-11-21, not %q", key, what, s)
	}
	return s
}

func (r *reader) list(n *yaml.Node, key, what string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.add(n, "%q in %s must be a list (lines starting with \"- \"), not %s", key, what, kindName(n))
		return nil
	}
	return n.Content
}

func (r *reader) strings(n *yaml.Node, key, what string) []string {
	var out []string
	for _, e := range r.list(n, key, what) {
		if e.Kind != yaml.ScalarNode || strings.TrimSpace(e.Value) == "" {
			r.add(e, "each entry of %q in %s must be non-empty text", key, what)
			continue
		}
		out = append(out, strings.TrimSpace(e.Value))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
