package traffic

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// exportPlan is synthetic traffic of every kind a round trip must carry:
// poisson arrivals (ns instants, three clients), a steady source of cost 3
// under a key that CSV must quote, and a burst at one instant.
func exportPlan() Plan {
	return Plan{Seed: 9, Sources: []Source{
		&Poisson{Common: Common{Clients: Clients{N: 3, Prefix: "client"}, Cost: 1, End: 3 * time.Second}, Rate: Rate{Count: 200, Per: time.Second}},
		&Steady{Common: Common{Clients: Clients{Key: `acme, "inc"`}, Cost: 3, End: 3 * time.Second}, Rate: Rate{Count: 7, Per: time.Second}},
		&Burst{Common: Common{Clients: Clients{Key: "bursty"}, Cost: 2}, At: 1500 * time.Millisecond, Count: 5},
	}}
}

type exported struct {
	at   time.Duration
	key  string
	cost int64
}

func planArrivals(t *testing.T, p Plan) []exported {
	keys, s, err := p.Open()
	require.NoError(t, err)
	var out []exported
	var a Arrival
	for s.Next(&a) {
		out = append(out, exported{a.At, keys.Name(a.Key), a.Cost})
	}
	require.NoError(t, s.Err())
	return out
}

func export(t *testing.T, p Plan, format string) string {
	keys, s, err := p.Open()
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteArrivals(&b, format, keys, s))
	path := filepath.Join(t.TempDir(), "traffic."+format)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

func readBack(t *testing.T, r *Replay) []exported {
	got := replayAll(t, r)
	require.Zero(t, got.stats.Malformed, "%v", got.stats.FirstBad)
	out := make([]exported, len(got.at))
	for i := range got.at {
		out[i] = exported{got.at[i], got.keys[i], got.costs[i]}
	}
	return out
}

// TestExportRoundTrip: csv and jsonl read back exactly (times to the ns,
// keys, costs), combined to the second.
func TestExportRoundTrip(t *testing.T) {
	plan := exportPlan()
	want := planArrivals(t, plan)
	require.Greater(t, len(want), 500)
	for _, format := range []string{"csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			// time_ns is found as the time by its name, and read as ns
			got := readBack(t, &Replay{Path: export(t, plan, format), KeyField: "key", CostField: "cost"})
			require.Equal(t, want, got)
		})
	}
	t.Run("combined", func(t *testing.T) {
		// the combined log cannot carry the key with a space
		plan := exportPlan()
		plan.Sources[1].(*Steady).Clients.Key = "acme"
		want := planArrivals(t, plan)
		got := readBack(t, &Replay{Path: export(t, plan, "combined"), CostField: "size"})
		require.Len(t, got, len(want))
		for i := range want {
			require.Equal(t, want[i].at/time.Second, got[i].at/time.Second, i)
			require.Equal(t, want[i].key, got[i].key, i)
			require.Equal(t, want[i].cost, got[i].cost, i)
		}
	})
}

func TestExportFormats(t *testing.T) {
	plan := Plan{Sources: []Source{
		&Times{Common: Common{Clients: Clients{Key: `a,"b"`}, Cost: 1}, At: []time.Duration{1500 * time.Millisecond}},
		&Times{Common: Common{Clients: Clients{Key: "10.0.0.1"}, Cost: 4}, At: []time.Duration{971186136*time.Second + 1}},
	}}
	keys, s, err := plan.Open()
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteArrivals(&b, "csv", keys, s))
	require.Equal(t, "time_ns,key,cost\n1500000000,\"a,\"\"b\"\"\",1\n971186136000000001,10.0.0.1,4\n", b.String())

	keys, s, err = plan.Open()
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteArrivals(&b, "jsonl", keys, s))
	require.Equal(t, `{"time_ns":1500000000,"key":"a,\"b\"","cost":1}`+"\n"+`{"time_ns":971186136000000001,"key":"10.0.0.1","cost":4}`+"\n", b.String())

	plan.Sources = plan.Sources[1:]
	keys, s, err = plan.Open()
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteArrivals(&b, "combined", keys, s))
	require.Equal(t, `10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 4 "-" "ratesim"`+"\n", b.String())
}

func TestExportErrors(t *testing.T) {
	open := func(key string) (*Keys, Stream) {
		keys, s, err := Plan{Sources: []Source{&Times{Common: Common{Clients: Clients{Key: key}, Cost: 1}, At: []time.Duration{0}}}}.Open()
		require.NoError(t, err)
		return keys, s
	}
	var b strings.Builder
	keys, s := open("a b")
	require.EqualError(t, WriteArrivals(&b, "combined", keys, s), `export combined: key "a b" cannot be a log's client host (it is empty or has a space, a quote or a control character)`)
	keys, s = open("a\nb")
	require.EqualError(t, WriteArrivals(&b, "csv", keys, s), `export csv: key "a\nb" has a line break`)
	keys, s = open("a\nb")
	require.NoError(t, WriteArrivals(&b, "jsonl", keys, s), "JSON escapes it")
	keys, s = open("a")
	require.EqualError(t, WriteArrivals(&b, "xml", keys, s), `export format "xml": want csv, jsonl, combined`)
}
