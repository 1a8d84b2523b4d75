package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSheddingCompare: 20 batch requests at 0 and 20 live ones at 500ms,
// each in flight for 1s, against 10 in flight. concurrency admits the
// first 10 batch and no live one. Netflix's partitions (live 0.9, batch
// 0.1) let batch borrow the 10 while the total is under the limit, then
// keep live's 9: 19. Stripe's shedder with 20% reserved for live holds
// batch to its allocation of 8 and gives live the 2 left: 10.
func TestSheddingCompare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shed.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: shed
duration: 2s
limit: 10/s
backend: {service: 1s}
traffic:
  - {type: burst, key: server, at: 0s, count: 20, attributes: {class: batch}}
  - {type: burst, key: server, at: 500ms, count: 20, attributes: {class: live}}
algorithms:
  - {name: concurrency, max: 10}
  - {name: netflix-partitioned, max: 10, by: class, partitions: {live: 0.9, batch: 0.1}}
  - {name: stripe-fleet-shedder, max: 10, by: class, critical: [live], reserve: 20%}
`), 0o644))
	status, out, errOut := run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "| concurrency          |       10 |        0 |       30 |")
	require.Contains(t, out, "| netflix-partitioned  |       19 |        0 |       21 |")
	require.Contains(t, out, "| stripe-fleet-shedder |       10 |        0 |       30 |")
}

// shedLog is one server's log of eight requests 100 ms apart, each in
// flight for 1s, its priority field read as the attribute class: batch,
// batch, none (the field empty or absent), live, bulk (a value no row
// names), live, live, batch. The rows are the same in every format.
var shedLog = []struct{ at, priority string }{
	{"1700000000001", "batch"}, {"1700000000101", "batch"}, {"1700000000201", ""},
	{"1700000000301", "live"}, {"1700000000401", "bulk"}, {"1700000000501", "live"},
	{"1700000000601", "live"}, {"1700000000701", "batch"},
}

// TestSheddingReplay: the shedding rows class a replayed request by a
// field of its own line (attribute-fields), in CSV, TSV and JSON lines.
// netflix-partitioned, max 4 with live 0.5 and batch 0.25: live may hold
// ceil(4*0.5) = 2, batch ceil(4*0.25) = 1, the unknown partition
// (no value, or bulk) 0, each borrowing while the total is under 4.
// stripe-fleet-shedder, max 4 with live critical and 50% reserved: the
// non-critical requests (batch, bulk, none) hold at most floor(4*0.5) = 2.
// A retry_after is the wait until the first completion (1s after its
// admission) that makes room.
func TestSheddingReplay(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "tsv", "jsonl"} {
		var trace strings.Builder
		switch format {
		case "csv":
			trace.WriteString("time_ms,server,priority\n")
		case "tsv":
			trace.WriteString("time_ms\tserver\tpriority\n")
		}
		for _, l := range shedLog {
			switch {
			case format == "csv":
				trace.WriteString(l.at + ",srv," + l.priority + "\n")
			case format == "tsv":
				trace.WriteString(l.at + "\tsrv\t" + l.priority + "\n")
			case l.priority == "":
				trace.WriteString(`{"time_ms": ` + l.at + `, "server": "srv"}` + "\n")
			default:
				trace.WriteString(`{"time_ms": ` + l.at + `, "server": "srv", "priority": "` + l.priority + `"}` + "\n")
			}
		}
		dir := t.TempDir()
		tracePath := filepath.Join(dir, "access."+format)
		require.NoError(t, os.WriteFile(tracePath, []byte(trace.String()), 0o644))
		path := filepath.Join(dir, "shed.yaml")
		require.NoError(t, os.WriteFile(path, []byte(`name: shed-replay
limit: 10/s
backend: {service: 1s}
traffic:
  - type: replay
    path: `+tracePath+`
    key-field: server
    attribute-fields: {class: priority}
algorithms:
  - {name: netflix-partitioned, max: 4, by: class, partitions: {live: 0.5, batch: 0.25}}
  - {name: stripe-fleet-shedder, max: 4, by: class, critical: [live], reserve: 50%}
`), 0o644))
		decisions := filepath.Join(dir, "d.csv")
		status, out, errOut := run(t, "compare", path, "--decisions", decisions)
		require.Equal(t, 0, status, errOut)
		require.Contains(t, out, "lines without a value (a shedding row by it put them in its default class): class 1", format)
		require.NotContains(t, out, "did not look at them", format)
		data, err := os.ReadFile(decisions)
		require.NoError(t, err)
		got := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
			f := strings.Split(line, ",")
			got[f[0]] = append(got[f[0]], strings.TrimSpace(f[6]+" "+f[8]))
		}
		require.Equal(t, []string{
			"accept",           // batch: 1 in flight of 4
			"accept",           // batch: 2 of 4, borrowing beyond batch's 1
			"accept",           // none, the unknown partition: 3 of 4
			"accept",           // live: 4 of 4
			"reject 600000000", // bulk, unknown: total full, its limit 0; the first batch ends at 1.001s
			"accept",           // live: total full, but live holds 1 of its 2
			"reject 500000000", // live holds 2 of 2: two complete by 1.101s, total 3
			"reject 400000000", // batch holds 2 of 1: room in the total at 1.101s
		}, got["netflix-partitioned"], format)
		require.Equal(t, []string{
			"accept",           // batch: non-critical 1 of 2
			"accept",           // batch: non-critical 2 of 2
			"reject 800000000", // none is non-critical: 2 of 2 until the first batch ends at 1.001s
			"accept",           // live, critical: 3 of 4
			"reject 600000000", // bulk is non-critical: 2 of 2 until 1.001s
			"accept",           // live: 4 of 4
			"reject 400000000", // live: 4 of 4 until 1.001s
			"reject 300000000", // batch: 4 of 4 and non-critical 2 of 2 until 1.001s
		}, got["stripe-fleet-shedder"], format)
	}
}
