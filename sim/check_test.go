package sim

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// TestCheckAgrees: what a row's verdict must be to agree with each logged
// value (Check's rules): $limit_req_status three ways, its dry-run forms
// as what nginx would have done, a status admitted or rejected.
func TestCheckAgrees(t *testing.T) {
	t.Parallel()
	o := newCheckObserver(&Check{Field: "f", Rejects: []int{429, 503}}, nil)
	acc, del, rej := algorithms.Accept, algorithms.Delay, algorithms.Reject
	for _, tc := range []struct {
		logged traffic.Logged
		agree  []algorithms.Verdict
	}{
		{traffic.LoggedPassed, []algorithms.Verdict{acc}},
		{traffic.LoggedDelayed, []algorithms.Verdict{del}},
		{traffic.LoggedRejected, []algorithms.Verdict{rej}},
		{traffic.LoggedDelayedDryRun, []algorithms.Verdict{del}},
		{traffic.LoggedRejectedDryRun, []algorithms.Verdict{rej}},
		{200, []algorithms.Verdict{acc, del}},
		{404, []algorithms.Verdict{acc, del}}, // not a reject status: admitted
		{429, []algorithms.Verdict{rej}},
		{503, []algorithms.Verdict{rej}}, // the config's limit_req_status
	} {
		for _, v := range []algorithms.Verdict{acc, del, rej} {
			want := false
			for _, a := range tc.agree {
				want = want || a == v
			}
			require.Equal(t, want, o.agrees(tc.logged, v), "%s vs %s", tc.logged, v)
		}
	}
}

// TestCheckCounts: first attempts with a logged verdict are compared, the
// first disagreements kept up to First, retries and "-" left out.
func TestCheckCounts(t *testing.T) {
	t.Parallel()
	o := newCheckObserver(&Check{Field: "limit_req_status", First: 1}, nil)
	dec := func(at int64, logged traffic.Logged, attempt int, v algorithms.Verdict) {
		require.NoError(t, o.Observe(&Decision{Time: time.Second + time.Duration(at)*time.Millisecond, Key: "k", Attempt: attempt, Logged: logged,
			Decision: algorithms.Decision{Verdict: v}}))
	}
	dec(0, traffic.LoggedPassed, 1, algorithms.Accept)
	dec(1, traffic.LoggedRejected, 1, algorithms.Accept) // disagrees, listed
	dec(2, traffic.LoggedPassed, 1, algorithms.Reject)   // disagrees, not listed (First 1)
	dec(3, traffic.LoggedNone, 1, algorithms.Reject)     // nothing logged
	dec(4, traffic.LoggedPassed, 2, algorithms.Reject)   // a retry
	res := o.result()
	require.Equal(t, &CheckResult{Field: "limit_req_status", Compared: 3, Agree: 1, Ratio: 0.3333,
		First: []CheckDisagreement{{TimeNs: 1001000000, Key: "k", Gateway: "REJECTED", Ratesim: "accept"}}}, res)
	require.Equal(t, 0.9957, CheckRatio(23349, 23450)) // 0.995693... rounds up
	require.Equal(t, 0.0, CheckRatio(0, 0))
	require.Equal(t, 1.0, CheckRatio(5, 5))
}

// TestArrivalSize: the logged verdict fits in an Arrival's padding, so
// the engine moves as many bytes per request with it as without.
func TestArrivalSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, uintptr(32), unsafe.Sizeof(traffic.Arrival{}))
}
