package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// max 2 per key, mean service 20ms: two requests of alice fill her
// semaphore, the third waits for one to complete (retry_after: the mean
// service, an estimate); bob is apart; after a Sample (an answer), alice has room
// again; a cost above max never fits.
func TestConcurrencyModel(t *testing.T) {
	m, err := NewConcurrencyModel(Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 5}, Max: 2, Service: 20 * time.Millisecond})
	require.NoError(t, err)
	acc := Decision{Verdict: Accept}
	require.Equal(t, acc, m.Decide(0, 0, 1))
	require.Equal(t, acc, m.Decide(0, 0, 1))
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: 20 * time.Millisecond}, m.Decide(time.Millisecond, 0, 1))
	require.Equal(t, acc, m.Decide(time.Millisecond, 1, 2), "bob's own semaphore")
	m.Sample(5*time.Millisecond, 0, 1, 5*time.Millisecond, 2, Served)
	require.Equal(t, acc, m.Decide(6*time.Millisecond, 0, 1))
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: Never}, m.Decide(7*time.Millisecond, 2, 3))
	require.Equal(t, Memory{BytesPerKeyMax: 8, KeysPeak: 2, BytesPeak: 16}, m.Memory())
	m.Sample(8*time.Millisecond, 1, 2, 7*time.Millisecond, 3, Served)
	m.Sample(8*time.Millisecond, 1, 2, 7*time.Millisecond, 3, Served) // a second time changes nothing
	require.Equal(t, 1, m.inflight.n, "alice still has two in flight")

	_, err = NewConcurrencyModel(Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 5}, Max: -1})
	require.Error(t, err)
}
