package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMarshalLayout: comments by path before fields and items and after a
// list, keys in the order asked, mappings of scalars on one line; the text
// reads back as the same scenario.
func TestMarshalLayout(t *testing.T) {
	name := func(s string) String { return String{ValueOf(s)} }
	f := &File{
		Name:        name("demo"),
		Description: StringOf("Two rows."),
		Duration:    DurationOf("10s"),
		Limit:       &Limit{Rate: IntOf(10), Per: DurationOf("1s")},
		Cluster:     &Cluster{Nodes: IntOf(3), Store: &Store{RTT: DurationOf("1ms")}},
		Algorithms: []AlgEntry{
			{Name: name("gcra"), Label: StringOf("a b"), Rate: IntOf(10), Per: DurationOf("1s")},
			{Name: name("all-of"), Label: name("both"), Commit: name("every-hit"), Limits: []AlgEntry{
				{Name: name("fixed-window"), Rate: IntOf(10), Per: DurationOf("1s")},
				{Name: name("fixed-window"), Rate: IntOf(100), Per: DurationOf("1m")},
			}, Coordination: name("local")},
		},
		Traffic: []Source{{Type: name("steady"), Key: name("client"), Rate: RateOf("20/s")}},
	}
	out, err := MarshalLayout(f, Layout{
		Head: map[string][]string{
			"name":                    {"the file's head", "on two lines"},
			"cluster":                 {"the cluster"},
			"algorithms[0]":           {"a row"},
			"algorithms[1].limits[1]": {"  a member, indented", "a line\nbroken"},
			"traffic[0]":              {"a placeholder"},
		},
		Foot:  map[string][]string{"algorithms": {"after the rows"}},
		Order: map[string][]string{"": {"name", "description", "limit", "duration", "cluster"}, "algorithms[1]": {"name", "label", "commit", "coordination"}},
		Flow:  true,
	})
	require.NoError(t, err)
	want := `# the file's head
# on two lines
name: demo
description: "Two rows."
limit: {rate: 10, per: 1s}
duration: 10s
# the cluster
cluster:
  nodes: 3
  store: {rtt: 1ms}
algorithms:
  # a row
  - {name: gcra, label: "a b", rate: 10, per: 1s}
  - name: all-of
    label: both
    commit: every-hit
    coordination: local
    limits:
      - {name: fixed-window, rate: 10, per: 1s}
      #   a member, indented
      # a line\nbroken
      - {name: fixed-window, rate: 100, per: 1m}
  # after the rows
traffic:
  # a placeholder
  - {type: steady, key: client, rate: 20/s}
`
	require.Equal(t, want, string(out))
	plain, err := Marshal(f)
	require.NoError(t, err)
	a, err := Parse("demo.yaml", plain)
	require.NoError(t, err)
	b, err := Parse("demo.yaml", out)
	require.NoError(t, err)
	require.Equal(t, a, b)
}
