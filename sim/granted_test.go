package sim

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// TestRunCountsGrantedCost: a partial admission (redis_rate's AllowAtMost
// grants less than asked) is one accepted attempt, and the peaks count the
// cost granted, not the cost asked. Three requests of cost 3 at 0, 10 and
// 20ms: the first granted whole, the second 2 of 3 at once, the third 1
// of 3 delayed by 50ms.
func TestRunCountsGrantedCost(t *testing.T) {
	t.Parallel()
	rule := func(i int, _ time.Duration) algorithms.Decision {
		switch i {
		case 1:
			return algorithms.Decision{Verdict: algorithms.Accept, Granted: 2}
		case 2:
			return algorithms.Decision{Verdict: algorithms.Delay, Delay: 50 * ms, Granted: 1}
		}
		return algorithms.Decision{Verdict: algorithms.Accept}
	}
	plan := traffic.Plan{Sources: []traffic.Source{
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 3}, At: []time.Duration{0, 10 * ms, 20 * ms}},
	}}
	rec := &recorder{}
	cfg := baseConfig(plan, scriptedAlg("s", rule))
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, [3]int64{2, 1, 0}, [3]int64{r.Accepted, r.Delayed, r.Rejected})
	require.Equal(t, r.Attempts, r.Accepted+r.Delayed+r.Rejected)
	// granted 3 + 2 at 0 and 10ms, 1 released at 70ms: 6 in 1s, 6 in 100ms
	require.Equal(t, int64(6), r.Peaks[0].Count)
	require.Equal(t, int64(6), r.Peaks[1].Count)
	require.Equal(t, int64(2), rec.got[1].Granted, "the decision carries the cost granted")
}
