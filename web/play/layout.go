package play

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/ratesim/ratesim/scenarios"
)

// layoutOf is the layout of a scenario's text that scenarios.MarshalLayout
// can write again: each field's keys in their order, and its comments
// above the field or list item they were at. A comment at the end of a
// line goes above its field. Text that does not parse has none.
func layoutOf(text string) scenarios.Layout {
	l := scenarios.Layout{Head: map[string][]string{}, Order: map[string][]string{}}
	f, err := parseComments(text)
	if err != nil {
		return l
	}
	for _, d := range f.Docs {
		if d.Body != nil {
			walkLayout(&l, d.Body, "", false)
		}
	}
	return l
}

func parseComments(text string) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	return parser.ParseBytes([]byte(text), parser.ParseComments)
}

// walkLayout adds to l the layout of n, the value at path; item says n is
// a list's item, whose first field's comments go above the item (a
// comment between "- " and the field reads badly).
func walkLayout(l *scenarios.Layout, n ast.Node, path string, item bool) {
	switch x := n.(type) {
	case *ast.MappingNode:
		for i, mv := range x.Values {
			key := mv.Key.String()
			p := key
			if path != "" {
				p = path + "." + key
			}
			l.Order[path] = append(l.Order[path], key)
			at := p
			if item && i == 0 {
				at = path
			}
			addComment(l, at, mv.GetComment())
			if v := mv.Value; v != nil {
				switch v.(type) {
				case *ast.MappingNode, *ast.SequenceNode:
				default:
					addComment(l, at, v.GetComment()) // at the end of the line
				}
				walkLayout(l, v, p, false)
			}
		}
	case *ast.SequenceNode:
		if len(x.Values) > 0 {
			// a comment between the key and the first item is the item's
			addComment(l, path+"[0]", x.GetComment())
		}
		for i, v := range x.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			if i < len(x.ValueHeadComments) {
				addComment(l, p, x.ValueHeadComments[i])
			}
			walkLayout(l, v, p, true)
		}
	}
}

// addComment adds the lines of c above the field at path.
func addComment(l *scenarios.Layout, path string, c *ast.CommentGroupNode) {
	if c == nil {
		return
	}
	for _, line := range strings.Split(c.String(), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "#")
		l.Head[path] = append(l.Head[path], strings.TrimPrefix(line, " "))
	}
}
