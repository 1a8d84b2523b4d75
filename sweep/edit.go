package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/ratesim/ratesim/scenarios"
)

// Base is the scenario a sweep starts from: its file (a path or
// builtin:NAME), its text as a tree of YAML values in the order written,
// and the scenario it parses to.
type Base struct {
	File string
	Sc   *scenarios.Scenario
	tree yaml.MapSlice
}

// NewBase reads the scenario text data of file (already parsed as sc).
func NewBase(file string, data []byte, sc *scenarios.Scenario) (*Base, error) {
	var tree yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(data, &tree, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return &Base{File: file, Sc: sc, tree: tree}, nil
}

// Edit returns the scenario text with each field set to its value: the
// file a user would write by hand for that grid point.
func (b *Base) Edit(fields []Field, values []Value) ([]byte, error) {
	tree := cloneValue(b.tree).(yaml.MapSlice)
	for i, f := range fields {
		v, err := scalar(values[i].Text)
		if err != nil {
			return nil, err
		}
		var out any
		if out, err = b.set(tree, f.segs, v, ""); err != nil {
			return nil, err
		}
		tree = out.(yaml.MapSlice)
	}
	return yaml.MarshalWithOptions(tree, yaml.UseLiteralStyleIfMultiline(true))
}

// Check tells whether the field is one the scenario can take: the path
// leads through mappings and existing list entries (an algorithm by its
// label), and the scenario file format knows the field.
func (b *Base) Check(f Field) error {
	tree := cloneValue(b.tree).(yaml.MapSlice)
	v, _ := scalar(f.Values[0].Text)
	out, err := b.set(tree, f.segs, v, "")
	if err != nil {
		return usagef("--vary", "%s: %v", f.Path, err)
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		return usagef("--vary", "%s: %v", f.Path, err)
	}
	_, err = scenarios.Parse(b.File, data)
	var list scenarios.Errors
	if errors.As(err, &list) {
		last := f.segs[len(f.segs)-1].key
		for _, e := range list {
			unknown := strings.HasPrefix(e.Msg, "unknown field") || strings.Contains(e.Msg, "takes no option")
			if unknown && (e.Path == last || strings.HasSuffix(e.Path, "."+last)) {
				return usagef("--vary", "%s: %s", f.Path, e.Msg)
			}
		}
	}
	return nil
}

// scalar reads a value as the scenario file would.
func scalar(text string) (any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return text, nil
	}
	switch v.(type) {
	case string, bool, int, int64, uint64, float64:
		return v, nil
	case nil:
		return text, nil
	}
	return text, nil // a list or mapping stays the text it was
}

// set puts v at the path segs inside node (at path at), making the
// mappings on the way that are missing, and returns the new node.
func (b *Base) set(node any, segs []segment, v any, at string) (any, error) {
	if len(segs) == 0 {
		return v, nil
	}
	s := segs[0]
	here := join(at, s.key)
	m, ok := node.(yaml.MapSlice)
	if !ok {
		return nil, fmt.Errorf("%s is not a mapping, cannot set %s in it", at, s.key)
	}
	i := indexOf(m, s.key)
	var child any
	if i >= 0 {
		child = m[i].Value
	}
	if here == "limit" {
		child = expandLimit(child)
	}
	if s.hasSel {
		list, err := b.listOf(here, child)
		if err != nil {
			return nil, err
		}
		j, err := b.selectEntry(here, list, s.sel)
		if err != nil {
			return nil, err
		}
		entry := list[j]
		if here == "algorithms" {
			if name, ok := entry.(string); ok {
				entry = yaml.MapSlice{{Key: "name", Value: name}}
			}
		}
		sub := fmt.Sprintf("%s[%s]", here, s.sel)
		if len(segs) == 1 {
			entry = v
		} else {
			var err error
			if entry, err = b.set(entry, segs[1:], v, sub); err != nil {
				return nil, err
			}
		}
		list[j] = entry
		child = list
	} else {
		if child == nil && len(segs) > 1 {
			child = yaml.MapSlice{}
		}
		var err error
		if child, err = b.set(child, segs[1:], v, here); err != nil {
			return nil, err
		}
	}
	if i >= 0 {
		m[i].Value = child
	} else {
		m = append(m, yaml.MapItem{Key: s.key, Value: child})
	}
	return m, nil
}

// listOf is the list at path; for algorithms, the scenario's default list
// written out when the file has none.
func (b *Base) listOf(path string, child any) ([]any, error) {
	if list, ok := child.([]any); ok {
		return list, nil
	}
	if child == nil && path == "algorithms" {
		var list []any
		for _, a := range b.Sc.Algorithms {
			list = append(list, a.Name)
		}
		return list, nil
	}
	if child == nil {
		return nil, fmt.Errorf("the scenario has no %s", path)
	}
	return nil, fmt.Errorf("%s is not a list", path)
}

// selectEntry finds the entry sel of a list: by label (or name) in
// algorithms, by index anywhere.
func (b *Base) selectEntry(path string, list []any, sel string) (int, error) {
	if path == "algorithms" {
		var labels []string
		for j, e := range list {
			l := entryLabel(e)
			if l == sel {
				return j, nil
			}
			labels = append(labels, l)
		}
		if n, err := strconv.Atoi(sel); err == nil && n >= 0 && n < len(list) {
			return n, nil
		}
		return 0, fmt.Errorf("no algorithm labelled %q (the scenario has %s)", sel, strings.Join(labels, ", "))
	}
	n, err := strconv.Atoi(sel)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("[%s]: want an index 0..%d", sel, len(list)-1)
	}
	if n >= len(list) {
		return 0, fmt.Errorf("[%d]: the scenario's %s has %d entries, want an index 0..%d", n, path, len(list), len(list)-1)
	}
	return n, nil
}

// entryLabel is an algorithms entry's label: its label, else its name.
func entryLabel(e any) string {
	switch e := e.(type) {
	case string:
		return e
	case yaml.MapSlice:
		if i := indexOf(e, "label"); i >= 0 {
			return fmt.Sprint(e[i].Value)
		}
		if i := indexOf(e, "name"); i >= 0 {
			return fmt.Sprint(e[i].Value)
		}
	}
	return ""
}

// expandLimit writes a limit given as a rate (limit: 10/s) as the mapping
// it stands for, so that one of its fields can be set.
func expandLimit(v any) any {
	if v == nil {
		return nil
	}
	if _, ok := v.(yaml.MapSlice); ok {
		return v
	}
	r, err := scenarios.ParseRate(fmt.Sprint(v))
	if err != nil {
		return v // the parser will say what is wrong with it
	}
	return yaml.MapSlice{{Key: "rate", Value: r.Count}, {Key: "per", Value: FormatDuration(r.Per)}}
}

func indexOf(m yaml.MapSlice, key string) int {
	for i, it := range m {
		if fmt.Sprint(it.Key) == key {
			return i
		}
	}
	return -1
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// cloneValue copies the mappings and lists of a YAML tree.
func cloneValue(v any) any {
	switch v := v.(type) {
	case yaml.MapSlice:
		out := make(yaml.MapSlice, len(v))
		for i, it := range v {
			out[i] = yaml.MapItem{Key: it.Key, Value: cloneValue(it.Value)}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
