package yamltree

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadPositions(t *testing.T) {
	n, p := Read([]byte("\ufeffname: a\nlimit:\n  rate: 5\nnone:\nlist: [1, \"two\", .inf]\ntext: |\n  x\n"))
	require.Nil(t, p)
	require.Equal(t, Mapping, n.Kind)
	require.Equal(t, Pos{1, 1}, n.Pos) // a block mapping starts at its first key
	var names []string
	for _, f := range n.Fields {
		require.Equal(t, Name, f.KeyKind)
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"name", "limit", "none", "list", "text"}, names)
	limit := n.Fields[1]
	require.Equal(t, Pos{2, 1}, limit.Pos)
	require.Equal(t, Pos{3, 3}, limit.Value.Pos)
	require.Equal(t, Integer, limit.Value.Fields[0].Value.Kind)
	require.Equal(t, "5", limit.Value.Fields[0].Value.Text)
	require.Equal(t, Pos{3, 9}, limit.Value.Fields[0].Value.Pos)
	require.Equal(t, Null, n.Fields[2].Value.Kind)
	require.Equal(t, Pos{4, 6}, n.Fields[2].Value.Pos)
	list := n.Fields[3].Value
	require.Equal(t, List, list.Kind)
	require.Equal(t, []Kind{Integer, Quoted, Infinity}, []Kind{list.Items[0].Kind, list.Items[1].Kind, list.Items[2].Kind})
	require.Equal(t, Pos{5, 18}, list.Items[2].Pos)
	require.Equal(t, Literal, n.Fields[4].Value.Kind)
	require.Equal(t, "x\n", n.Fields[4].Value.Text)
}

func TestReadKeeps(t *testing.T) {
	n, p := Read([]byte("a: &x {b: 1}\nc: *x\nd: *y\ne: !!str 5\n<<: {f: 1}\n? g\n: 2\n1: h\na: again\n"))
	require.Nil(t, p)
	f := n.Fields
	require.Equal(t, []Anchor{{"x", Pos{1, 4}}}, f[0].Value.Anchors)
	require.Equal(t, Alias, f[1].Value.Kind)
	require.Same(t, f[0].Value, f[1].Value.Target) // the anchored value
	require.Nil(t, f[2].Value.Target)              // no anchor y
	require.Equal(t, Tag, f[3].Value.Kind)
	require.Equal(t, "!!str", f[3].Value.Text)
	require.Equal(t, Merge, f[4].KeyKind)
	require.Equal(t, Complex, f[5].KeyKind)
	require.Equal(t, NotName, f[6].KeyKind)
	require.Equal(t, Integer, f[6].Key.Kind)
	require.Equal(t, "1", f[6].Text)
	require.Equal(t, "a", f[7].Name) // a key written twice stays, for its reader
	require.Equal(t, Pos{9, 1}, f[7].Pos)
}

func TestReadProblems(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Problem
	}{
		{"", Problem{Kind: Empty}},
		{"# only a comment\n", Problem{Kind: Empty}},
		{"a: 1\n---\nb: 2\n", Problem{Kind: Second, Pos: Pos{3, 1}}},
		{"a: [1\n", Problem{Kind: Syntax, Pos: Pos{1, 4}, Msg: "sequence end token ']' not found"}},
	} {
		n, p := Read([]byte(tc.src))
		require.Nil(t, n, tc.src)
		require.Equal(t, &tc.want, p, tc.src)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("a: &x {b: [1, 2.5, .nan, true, ~]}\nc: *x\n<<: *x\n? k\n: v\n"))
	f.Add([]byte("{\"a\": [1, {\"b\": null}], \"a\": \"x\"}"))
	f.Add([]byte("- !t 1\n- |\n  x\n- &a\n- *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, p := Read(data)
		require.True(t, (n == nil) != (p == nil))
		var walk func(n *Node)
		walk = func(n *Node) {
			require.NotNil(t, n)
			for _, f := range n.Fields {
				require.GreaterOrEqual(t, f.Pos.Line, 1)
				walk(f.Value)
			}
			for _, it := range n.Items {
				walk(it)
			}
		}
		if n != nil {
			walk(n)
		}
	})
}
