package output

import (
	"bytes"
	"testing"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
	"github.com/stretchr/testify/require"
)

// TestDecisionsGranted: with a row that may admit part of a cost, every
// row ends with the cost granted: the whole cost, the part granted, or 0
// for a rejection.
func TestDecisionsGranted(t *testing.T) {
	var b bytes.Buffer
	d := NewDecisionsOf(&b, "redis-rate-at-most", "r", true, false, true)
	for _, x := range []sim.Decision{
		{Time: 1, Key: "k", Cost: 3, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
		{Time: 2, Key: "k", Cost: 3, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Accept, Granted: 2}},
		{Time: 3, Key: "k", Cost: 3, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 7}},
	} {
		require.NoError(t, d.Observe(&x))
	}
	require.NoError(t, d.Flush())
	require.Equal(t, DecisionsHeader+",granted\n"+
		"redis-rate-at-most,r,1,k,3,1,accept,0,,3\n"+
		"redis-rate-at-most,r,2,k,3,1,accept,0,,2\n"+
		"redis-rate-at-most,r,3,k,3,1,reject,0,7,0\n", b.String())
}
