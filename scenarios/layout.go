package scenarios

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Layout is how MarshalLayout writes a File beyond its values: comment
// lines and the order of keys, each by field path as errors name them
// (name, cluster, algorithms[1].limits[0]).
type Layout struct {
	// Head holds the comment lines written before a field or a list's
	// item, by its path; the head of the file's first field is the file's.
	Head map[string][]string
	// Foot holds the comment lines written after a list's last item, by
	// the list's path.
	Foot map[string][]string
	// Order holds, by the path of a mapping ("" for the file), the keys
	// written first, in that order; the others follow in the File's.
	Order map[string][]string
	// Flow writes a mapping whose values are all scalars on one line,
	// {rate: 10, per: 1s}.
	Flow bool
}

// MarshalLayout writes f as Marshal does, lists indented under their key,
// with the comments and the order of l. A comment line is written after
// "# ", its line breaks as \n and \r.
func MarshalLayout(f *File, l Layout) ([]byte, error) {
	n, err := yaml.ValueToNode(f, yaml.UseLiteralStyleIfMultiline(true), yaml.IndentSequence(true))
	if err != nil {
		return nil, err
	}
	if err := l.apply(n, ""); err != nil {
		return nil, err
	}
	return []byte(n.String() + "\n"), nil
}

// apply sets the layout of n, the value at path, and of what it holds.
func (l *Layout) apply(n ast.Node, path string) error {
	switch x := n.(type) {
	case *ast.MappingNode:
		l.order(x, path)
		if l.Flow && !slices.ContainsFunc(x.Values, func(mv *ast.MappingValueNode) bool { return isCollection(mv.Value) }) {
			x.SetIsFlowStyle(true)
		}
		for _, mv := range x.Values {
			p := join(path, mv.Key.String())
			if lines := l.Head[p]; len(lines) > 0 {
				if err := mv.SetComment(comment(lines)); err != nil {
					return err
				}
			}
			if err := l.apply(mv.Value, p); err != nil {
				return err
			}
		}
	case *ast.SequenceNode:
		for i, item := range x.Values {
			p := index(path, i)
			if lines := l.Head[p]; len(lines) > 0 {
				if len(x.ValueHeadComments) != len(x.Values) {
					x.ValueHeadComments = make([]*ast.CommentGroupNode, len(x.Values))
				}
				x.ValueHeadComments[i] = comment(lines)
			}
			if err := l.apply(item, p); err != nil {
				return err
			}
		}
		if lines := l.Foot[path]; len(lines) > 0 {
			x.FootComment = comment(lines)
		}
	}
	return nil
}

// order moves the keys of Order[path] first, in that order.
func (l *Layout) order(m *ast.MappingNode, path string) {
	first := l.Order[path]
	if len(first) == 0 {
		return
	}
	rank := func(mv *ast.MappingValueNode) int {
		if i := slices.Index(first, mv.Key.String()); i >= 0 {
			return i
		}
		return len(first)
	}
	slices.SortStableFunc(m.Values, func(a, b *ast.MappingValueNode) int { return rank(a) - rank(b) })
}

func isCollection(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.SequenceNode:
		return true
	}
	return false
}

// comment is the comment group of lines, each on one line.
func comment(lines []string) *ast.CommentGroupNode {
	oneLine := strings.NewReplacer("\n", `\n`, "\r", `\r`)
	tokens := make([]*token.Token, len(lines))
	for i, line := range lines {
		text := " " + oneLine.Replace(line)
		tokens[i] = token.New(text, text, nil)
	}
	return ast.CommentGroup(tokens)
}
