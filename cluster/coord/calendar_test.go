package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
)

// A calendar month (per: 1mo) runs in every mode of fixed-window: its rule
// places each instant in its month, on the nodes and in the store alike.
// L=2 per calendar month, requests around the end of January 1970 (31
// days) on 2 nodes, rtt 0: central, racy and sync (whose counts reach the
// store at every sync) admit 2 in January and 2 in February; local and
// split count per node (split's share 1 per node). Sync runs on one node
// (with two, each node decides on the counts it last heard of, which lag
// the other's: that is sync's own error, not the calendar's).
func TestClusterCalendarMonth(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	feb := 31 * day
	pol := algorithms.Policy{Rate: 2, Per: algorithms.CalendarMonth.Nominal(), Burst: 2, Calendar: algorithms.CalendarMonth}
	at := []time.Duration{feb - 3*ms, feb - 2*ms, feb - ms, feb, feb + ms, feb + 2*ms}
	for _, c := range []struct {
		co    cluster.Coordination
		want  []algorithms.Verdict
		nodes int
	}{
		{cluster.Coordination{Mode: cluster.Local}, []algorithms.Verdict{acc, acc, acc, acc, acc, acc}, 2},
		{cluster.Coordination{Mode: cluster.Split}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}, 2},
		{cluster.Coordination{Mode: cluster.Central}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}, 2},
		{cluster.Coordination{Mode: cluster.Racy}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}, 2},
		{cluster.Coordination{Mode: cluster.Sync, Sync: ms / 2}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}, 1},
	} {
		t.Run(string(c.co.Mode), func(t *testing.T) {
			cfg := clusterConfig("fixed-window", pol, c.co, c.nodes, 0, at...)
			cfg.Duration = feb + time.Second
			_, got := runCluster(t, cfg)
			require.Len(t, got, len(at))
			for i, d := range got {
				require.Equal(t, c.want[i], d.Verdict, "decision %d at %v", i, d.Time)
				if d.Verdict == rej {
					// retry_after: to the start of the next month, as
					// the node or the store sees it
					require.Positive(t, d.RetryAfter)
				}
			}
		})
	}
}

// Discrete refill (fill-interval, tokens-per-fill) runs in every mode of
// token-bucket. B=2, 2 tokens every 100ms, 2 nodes, rtt 0: central, racy
// and lease take from one bucket (2 at 10ms, none at 20ms, 2 after the tick
// at 100ms); split gives each node B=1, N=1.
func TestClusterDiscreteRefill(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: 100 * ms, Burst: 2}
	at := []time.Duration{10 * ms, 11 * ms, 20 * ms, 100 * ms, 101 * ms, 102 * ms}
	for _, c := range []struct {
		co   cluster.Coordination
		want []algorithms.Verdict
	}{
		{cluster.Coordination{Mode: cluster.Local}, []algorithms.Verdict{acc, acc, acc, acc, acc, acc}},
		{cluster.Coordination{Mode: cluster.Split}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}},
		{cluster.Coordination{Mode: cluster.Central}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}},
		{cluster.Coordination{Mode: cluster.Racy}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}},
		{cluster.Coordination{Mode: cluster.Lease, Lease: 1}, []algorithms.Verdict{acc, acc, rej, acc, acc, rej}},
	} {
		t.Run(string(c.co.Mode), func(t *testing.T) {
			cfg := clusterConfig("token-bucket", pol, c.co, 2, 0, at...)
			cfg.Algorithms[0].Params.FillInterval = 100 * ms
			cfg.Algorithms[0].Params.TokensPerFill = 2
			_, got := runCluster(t, cfg)
			require.Len(t, got, len(at))
			for i, d := range got {
				require.Equal(t, c.want[i], d.Verdict, "decision %d at %v", i, d.Time)
			}
		})
	}
}
