package sweep

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

func texts(vs []Value) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Text)
	}
	return strings.Join(out, " ")
}

func TestParseVary(t *testing.T) {
	for _, c := range []struct{ in, path, want string }{
		{"limit.burst=5,10,20", "limit.burst", "5 10 20"},
		{"limit.burst=5..50:15", "limit.burst", "5 20 35 50"},
		{"limit.burst=5..51:15", "limit.burst", "5 20 35 50"},
		{"cluster.store.rtt=1ms..1s*10", "cluster.store.rtt", "1ms 10ms 100ms 1s"},
		{"algorithms[fw-sync].sync=10ms..100ms:30ms", "algorithms[fw-sync].sync", "10ms 40ms 70ms 100ms"},
		{"algorithms[gcra].max-delay=0..1s:250ms", "algorithms[gcra].max-delay", "0 250ms 500ms 750ms 1s"},
		{"traffic[0].zipf-s=1.1..1.3:0.1", "traffic[0].zipf-s", "1.1 1.2 1.3"},
		{"cluster.balancer=round-robin,key-hash", "cluster.balancer", "round-robin key-hash"},
		{"limit.per=1s..1m*60", "limit.per", "1s 1m"},
		{"seed=1..4:1", "seed", "1 2 3 4"},
	} {
		f, err := ParseVary(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.path, f.Path)
		require.Equal(t, c.want, texts(f.Values), c.in)
	}
	for _, c := range []struct{ in, want string }{
		{"limit.burst", "want FIELD=VALUES"},
		{"limit.burst=", "no values"},
		{"limit.burst=5,,6", "an empty value"},
		{"limit.burst=5..50", "needs a step"},
		{"limit.burst=50..5:5", "want the smaller bound first"},
		{"limit.burst=5..50:0", "want a step > 0"},
		{"limit.burst=5..x:1", `"x" is not a number`},
		{"limit.burst=1..1000000:1", "more than 10000 values"},
		{"cluster.store.rtt=1ms..1s*1", "want an integer >= 2"},
		{"cluster.store.rtt=0..1s*10", "starts above 0"},
		{"cluster.store.rtt=1ms..1:1ms", "mixes durations and numbers"},
		{"algorithms[gcra.burst=5", "is not closed"},
		{"algorithms[].burst=5", "want a label or an index"},
		{"limit..burst=5", "an empty name"},
		{"limit.burst=5,5", "appears twice"},
	} {
		_, err := ParseVary(c.in)
		require.Error(t, err, c.in)
		require.Contains(t, err.Error(), "--vary: ")
		require.Contains(t, err.Error(), c.want, c.in)
	}
}

func TestGoalErrors(t *testing.T) {
	fields := []Field{mustVary(t, "limit.burst=5,10"), mustVary(t, "cluster.balancer=round-robin,random")}
	for _, c := range []struct{ in, want string }{
		{"", "column 1: the end, want minimize or maximize"},
		{"lower burst", `column 1: "lower", want minimize`},
		{"minimize brust", `column 10: "brust" is not a metric`},
		{"minimize burst subject reject_pct <= 1", `column 24: "reject_pct", want "to"`},
		{"minimize burst subject to reject_pct = 1", `column 38: "=", want an operator`},
		{"minimize burst subject to reject_pct <= x", `column 41: "x", want a number`},
		{"minimize burst subject to reject_pct <= 1 or peak < 3", `column 43: "or", want "and"`},
		{"minimize p99_delay(key=a*)", "column 19: p99_delay takes no key filter"},
		{"minimize reject_pct(user=a*)", `column 21: "user", want key=GLOB`},
		{"minimize reject_pct(key=[)", "column 25: \"[\": syntax error in pattern"},
		{"minimize cluster.balancer", "column 10: cluster.balancer: its value \"round-robin\" is not a number"},
	} {
		_, err := ParseGoal(c.in, fields)
		require.Error(t, err, c.in)
		require.Contains(t, err.Error(), "--goal: "+c.want[:0])
		require.Contains(t, err.Error(), c.want, c.in)
	}
	g, err := ParseGoal("minimize limit.burst subject to reject_pct(key=user-*) <= 1 and key_peak_ratio <= 1.2 and p99_delay < 100ms", fields)
	require.NoError(t, err)
	require.Equal(t, []string{"user-*"}, g.Globs())
	require.Len(t, g.Constraints, 3)
	require.Equal(t, float64(100e6), g.Constraints[2].Bound)
}

func mustVary(t *testing.T, s string) Field {
	t.Helper()
	f, err := ParseVary(s)
	require.NoError(t, err)
	return f
}

func baseOf(t testing.TB, name string) *Base {
	file, data, err := scenarios.ResolveText(name)
	require.NoError(t, err)
	sc, err := scenarios.Parse(file, data)
	require.NoError(t, err)
	b, err := NewBase(file, data, sc)
	require.NoError(t, err)
	return b
}

func jsonOf(t *testing.T, s *Sweep, g *Goal) string { return render(t, JSON, s, g) }

func tableOf(t *testing.T, s *Sweep, g *Goal) string { return render(t, Table, s, g) }

// render writes s with format, ranked by g when given.
func render(t *testing.T, format func(io.Writer, *Sweep, *Goal, []Best) error, s *Sweep, g *Goal) string {
	t.Helper()
	var bests []Best
	if g != nil {
		var err error
		bests, err = g.Rank(s)
		require.NoError(t, err)
	}
	var buf bytes.Buffer
	require.NoError(t, format(&buf, s, g, bests))
	return buf.String()
}

// TestSameWhateverTheCores: the output is the same bytes however the points
// are spread over runs and cores.
func TestSameWhateverTheCores(t *testing.T) {
	b := baseOf(t, "sync-interval")
	fields := []Field{mustVary(t, "cluster.nodes=2,4"), mustVary(t, "algorithms[sync-100ms].sync=50ms,200ms"), mustVary(t, "limit.burst=50,0,150")}
	var want string
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i, c := range []struct{ procs, par, per int }{{1, 1, 1}, {4, 4, 64}, {2, 3, 2}, {8, 0, 0}} {
		runtime.GOMAXPROCS(c.procs)
		s, err := Run(Options{Base: b, Fields: fields, Parallel: c.par, PointsPerRun: c.per})
		require.NoError(t, err)
		got := jsonOf(t, s, nil)
		if i == 0 {
			want = got
			require.Contains(t, got, `"error": "limit.burst: 0: want an integer >= 1"`)
			continue
		}
		require.Equal(t, want, got, "GOMAXPROCS %d, %d runs of %d points", c.procs, c.par, c.per)
	}
}

// TestShardsMerge: shards merged are byte for byte the unsharded output, in
// JSON and as a table, with a goal.
func TestShardsMerge(t *testing.T) {
	b := baseOf(t, "double-burst")
	fields := []Field{mustVary(t, "limit.burst=5..20:5"), mustVary(t, "limit.rate=0,10,20")}
	g, err := ParseGoal("minimize burst subject to reject_pct <= 50 and key_peak_ratio <= 1.1", fields)
	require.NoError(t, err)
	whole, err := Run(Options{Base: b, Fields: fields})
	require.NoError(t, err)
	for _, n := range []int{1, 3, 5, 12} {
		var shards []*Sweep
		for k := n - 1; k >= 0; k-- { // any order
			s, err := Run(Options{Base: b, Fields: fields, Shard: Shard{K: k, N: n}})
			require.NoError(t, err)
			for _, p := range s.Points {
				require.Equal(t, k, p.Index%n)
			}
			var buf bytes.Buffer
			require.NoError(t, JSON(&buf, s, nil, nil))
			back, err := ReadJSON(&buf)
			require.NoError(t, err)
			shards = append(shards, back)
		}
		merged, err := Merge(shards)
		require.NoError(t, err)
		require.Equal(t, jsonOf(t, whole, g), jsonOf(t, merged, g), "%d shards", n)
		require.Equal(t, tableOf(t, whole, g), tableOf(t, merged, g), "%d shards", n)
		if n > 1 {
			_, err := Merge(shards[1:])
			require.ErrorContains(t, err, "missing")
			_, err = Merge(append(shards, shards[0]))
			require.ErrorContains(t, err, "given twice")
		}
	}
}

// TestGoalRanks: the best point and the runner-up per label, and the
// constraint that came closest when none meets them all.
func TestGoalRanks(t *testing.T) {
	b := baseOf(t, "double-burst")
	fields := []Field{mustVary(t, "limit.burst=5..20:5")}
	s, err := Run(Options{Base: b, Fields: fields})
	require.NoError(t, err)
	g, err := ParseGoal("maximize accepted subject to key_peak_ratio <= 1.1", fields)
	require.NoError(t, err)
	bests, err := g.Rank(s)
	require.NoError(t, err)
	byLabel := map[string]Best{}
	for _, b := range bests {
		byLabel[b.Label] = b
	}
	// gcra admits burst + 1 within the second: 11 at burst 10 is 1.1x
	require.Equal(t, 1, byLabel["gcra"].Best.Index)
	require.Equal(t, float64(11), byLabel["gcra"].Best.Objective)
	require.Equal(t, 0, byLabel["gcra"].RunnerUp.Index)
	// fixed-window lets 20 through at every burst: 2.0x
	fw := byLabel["fixed-window"]
	require.Nil(t, fw.Best)
	require.NotNil(t, fw.Closest)
	require.Equal(t, "key_peak_ratio <= 1.1", fw.Closest.Constraint.String())
	require.InDelta(t, 0.9, fw.Closest.By, 1e-9)
	out := strings.Join(g.Lines(fields, bests), "\n")
	require.Contains(t, out, "fixed-window    no point meets the constraints; closest: key_peak_ratio <= 1.1, missed by 0.9 at point 0 (limit.burst=5), where it is 2")
}

func FuzzParseVary(f *testing.F) {
	for _, s := range []string{"limit.burst=5,10,20", "limit.burst=5..50:5", "cluster.store.rtt=1ms..1s*10",
		"algorithms[gcra].burst=1..3:1", "traffic[0].key=007,+5,1.50", "x=-0,-1.0", "traffic[0].zipf-s=1.1..1.5:0.05", "x=0..1ms:1ns", "a[=", "=..:*", "a=1..2*3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fd, err := ParseVary(s)
		if err != nil {
			require.Contains(t, err.Error(), "--vary: ")
			return
		}
		require.NotEmpty(t, fd.Values)
		require.LessOrEqual(t, len(fd.Values), MaxValues)
		for _, v := range fd.Values {
			raw := jsonValue(v)
			require.True(t, json.Valid(raw), "%s", raw)
			back, err := valueFromJSON(raw)
			require.NoError(t, err)
			require.Equal(t, v.Text, back.Text, "a value reads back from the JSON as written")
		}
	})
}

func FuzzParseGoal(f *testing.F) {
	for _, s := range []string{"minimize burst", "maximize accepted subject to reject_pct(key=user-*) <= 1 and key_peak_ratio <= 1.2",
		"minimize limit.burst subject to p99_delay < 100ms", "minimize (", "maximize rejected(key=[) != 3", "minimize x subject to"} {
		f.Add(s)
	}
	fields := []Field{{Path: "limit.burst", Values: []Value{valueOf("5")}}}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGoal(s, fields)
		if err != nil {
			require.Regexp(t, `^--goal: column \d+: `, err.Error())
			return
		}
		require.True(t, g.Objective.fig != nil || g.Objective.field >= 0)
	})
}
