// Package yamltree reads a YAML document (JSON is YAML) with
// goccy/go-yaml into a tree of nodes that each know where they are
// written, line and column from 1. It is the one walk over goccy's nodes:
// the scenario loader fills a File from its tree and the gateway readers
// read their configs from it. It refuses nothing but bad syntax: anchors,
// aliases, tags, merge keys, keys that are not names and keys written
// twice are kept in the tree as written, for each reader to take or
// refuse in its own words.
package yamltree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Pos is where something is written, from line 1 and column 1.
type Pos struct{ Line, Col int }

// Kind is what a node is.
type Kind uint8

// The kinds of a Node.
const (
	Null     Kind = iota
	Plain         // an unquoted string
	Quoted        // a quoted string
	Literal       // a block string (| or >)
	Integer       // Text as written
	Float         // Text as written
	Infinity      // .inf
	NaN           // .nan
	Boolean       // Text as written
	Mapping       // Fields
	List          // Items
	Alias         // *name: Text is the name, Target the node anchored so before it
	Tag           // a tagged value: Text is the tag (!!str)
	Other         // any other node: Type says which
)

// Node is one value of the document.
type Node struct {
	Kind Kind
	// Type is goccy's type of the node (ast.NullType for a value left
	// out).
	Type ast.NodeType
	// Text is a scalar's text as written (a string without its quotes, a
	// block string's content), an alias's name or a tag.
	Text string
	// Pos is where the node starts: a block mapping at its first key,
	// anything else at its first token; zero for a value left out (a key
	// with nothing after it).
	Pos Pos
	// Anchors are the anchors (&name) written before the value, the
	// outermost first.
	Anchors []Anchor
	Fields  []*Field // a mapping's, in the order written
	Items   []*Node  // a list's
	// Target is an alias's node, when an anchor of its name comes before
	// it (the latest such).
	Target *Node
}

// Anchor is an anchor (&name) and where it is written.
type Anchor struct {
	Name string
	Pos  Pos
}

// KeyKind is what a mapping's key is.
type KeyKind uint8

// The kinds of a Field's key.
const (
	Name     KeyKind = iota // a string: Field.Name
	Merge                   // <<
	Complex                 // ? key
	Anchored                // &anchor key
	NotName                 // anything else: Field.Key
)

// Field is one key: value pair of a mapping.
type Field struct {
	KeyKind KeyKind
	Name    string // the key, for a Name
	// Text is the key's text as written, whatever its kind (a number's
	// digits, "" for a key left out).
	Text string
	// Key is the key's node for NotName (Kind Null with a zero Pos for a
	// key left out).
	Key *Node
	Pos Pos // where the key is written
	// Value is the value; Kind Null with a zero Pos when left out.
	Value *Node
}

// Problem is why data holds no document to read.
type Problem struct {
	Kind ProblemKind
	Pos  Pos    // zero when the parser does not say
	Msg  string // a syntax error's message
}

// ProblemKind is what a Problem is.
type ProblemKind uint8

// The kinds of a Problem.
const (
	Syntax ProblemKind = iota // Msg says what
	Second                    // a second document, at Pos
	Empty                     // no document, or only comments
)

// Read parses data (a byte order mark first is dropped) and returns the
// tree of its single document. A parser panic is a syntax error: no input
// may crash ratesim.
func Read(data []byte) (*Node, *Problem) {
	f, err := parse([]byte(strings.TrimPrefix(string(data), "\ufeff")))
	if err != nil {
		var se interface {
			GetToken() *token.Token
			GetMessage() string
		}
		if errors.As(err, &se) {
			return nil, &Problem{Kind: Syntax, Pos: tokenPos(se.GetToken()), Msg: se.GetMessage()}
		}
		return nil, &Problem{Kind: Syntax, Msg: err.Error()}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, &Problem{Kind: Second, Pos: posOf(doc.Body)}
		}
		body = doc.Body
	}
	if body == nil {
		return nil, &Problem{Kind: Empty}
	}
	r := reader{anchors: map[string]*Node{}}
	return r.node(body), nil
}

// parse runs goccy's parser, turning a panic on malformed input into an
// error. Duplicate keys are left in the tree.
func parse(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	return parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
}

type reader struct {
	anchors map[string]*Node
}

// node reads n.
func (r *reader) node(n ast.Node) *Node {
	if n == nil {
		return &Node{Kind: Null, Type: ast.NullType}
	}
	t := &Node{Type: n.Type(), Pos: posOf(n)}
	switch v := n.(type) {
	case *ast.NullNode:
		t.Kind, t.Text = Null, tokenText(n)
	case *ast.AnchorNode:
		inner := r.node(v.Value)
		inner.Anchors = append([]Anchor{{Name: text(v.Name), Pos: t.Pos}}, inner.Anchors...)
		if v.Name != nil {
			r.anchors[text(v.Name)] = inner
		}
		return inner
	case *ast.AliasNode:
		t.Kind, t.Text = Alias, text(v.Value)
		t.Target = r.anchors[t.Text]
	case *ast.TagNode:
		t.Kind, t.Text = Tag, tokenText(n)
	case *ast.MappingNode:
		t.Kind = Mapping
		for _, mv := range v.Values {
			if mv != nil {
				t.Fields = append(t.Fields, r.field(mv))
			}
		}
	case *ast.MappingValueNode:
		t.Kind, t.Fields = Mapping, []*Field{r.field(v)}
	case *ast.SequenceNode:
		t.Kind = List
		for _, item := range v.Values {
			t.Items = append(t.Items, r.node(item))
		}
	case *ast.StringNode:
		t.Kind, t.Text = Quoted, v.Value
		if v.Token != nil && v.Token.Type == token.StringType {
			t.Kind = Plain
		}
	case *ast.LiteralNode:
		t.Kind = Literal
		if v.Value != nil {
			t.Text = v.Value.Value
		}
	case *ast.IntegerNode:
		t.Kind, t.Text = Integer, tokenText(n)
	case *ast.FloatNode:
		t.Kind, t.Text = Float, tokenText(n)
	case *ast.InfinityNode:
		t.Kind, t.Text = Infinity, tokenText(n)
	case *ast.NanNode:
		t.Kind, t.Text = NaN, tokenText(n)
	case *ast.BoolNode:
		t.Kind, t.Text = Boolean, tokenText(n)
	default:
		t.Kind = Other
	}
	return t
}

// field reads the pair mv.
func (r *reader) field(mv *ast.MappingValueNode) *Field {
	f := &Field{Text: text(mv.Key)}
	if mv.Key == nil {
		f.Pos = tokenPos(mv.Start)
	} else {
		f.Pos = posOf(mv.Key)
	}
	switch k := mv.Key.(type) {
	case *ast.StringNode:
		f.KeyKind, f.Name = Name, k.Value
	case *ast.MergeKeyNode:
		f.KeyKind = Merge
	case *ast.MappingKeyNode:
		f.KeyKind = Complex
	case *ast.AnchorNode:
		f.KeyKind = Anchored
	default:
		// anchors in a key name nothing a value may alias
		keys := reader{anchors: map[string]*Node{}}
		f.KeyKind, f.Key = NotName, keys.node(mv.Key)
	}
	f.Value = r.node(mv.Value)
	return f
}

// text is the text of a node as written: a string's without its quotes,
// else its first token's.
func text(n ast.Node) string {
	if n == nil {
		return ""
	}
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	return tokenText(n)
}

func tokenText(n ast.Node) string {
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// tokenPos is where tk is, 1:1 when unknown.
func tokenPos(tk *token.Token) Pos {
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return Pos{1, 1}
	}
	return Pos{tk.Position.Line, max(tk.Position.Column, 1)}
}

// posOf is where n starts: a block mapping at its first key, anything else
// at its first token.
func posOf(n ast.Node) Pos {
	switch v := n.(type) {
	case nil:
		return Pos{1, 1}
	case *ast.MappingNode:
		if v == nil {
			return Pos{1, 1}
		}
		if !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0] != nil && v.Values[0].Key != nil {
			return posOf(v.Values[0].Key)
		}
		return tokenPos(v.Start)
	case *ast.MappingValueNode:
		if v == nil {
			return Pos{1, 1}
		}
		if v.Key != nil {
			return posOf(v.Key)
		}
		return tokenPos(v.Start)
	}
	return tokenPos(n.GetToken())
}
