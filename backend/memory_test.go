package backend

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/portable"
	"github.com/ratesim/ratesim/internal/testenv"
)

// heapAfter runs the mixed backend (mixedConfig, its faults moved out of
// the way) over n Poisson arrivals at 140/s and returns the live heap
// with the backend still held, after a collection, and the backend's
// slots' and event queues' sizes.
func heapAfter(t *testing.T, n int) (uint64, int) {
	cfg := mixedConfig()
	cfg.Faults = nil
	cfg.Bucket = time.Hour // the series grows with time, not requests: keep it out
	b, err := New(cfg, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	var at time.Duration
	for i := range n {
		u := float64(rng.Uint64()>>11+1) / (1 << 53)
		at += toDuration(float64(-portable.Log(u) * (float64(time.Second) / 140)))
		b.Until(at)
		require.NoError(t, b.Submit(&Request{ID: uint64(i), Attempt: 1, Arrived: at, Admitted: at}))
	}
	b.Until(math.MaxInt64)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	size := len(b.slots) + b.wait.Cap() + b.timeouts.Cap() + b.admits.Cap() + b.other.Cap() + b.done.Cap()
	runtime.KeepAlive(b)
	return ms.HeapAlloc, size
}

// TestMemoryFlat: a run ten times longer (2M requests against 200k) holds
// no more: the backend's live heap (its histograms among it: see
// internal/hist) grows by less than 64 KiB, and its slots and event
// queues, which follow the requests present at once, not the requests
// served, are as many within 10%.
func TestMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("two million requests")
	}
	testenv.Long(t, "the memory check of 2.2 million requests")
	small, sizeSmall := heapAfter(t, 200_000)
	big, sizeBig := heapAfter(t, 2_000_000)
	t.Logf("live heap %d B after 200k requests, %d B after 2M; slots and queue entries %d, %d",
		small, big, sizeSmall, sizeBig)
	require.Less(t, int64(big)-int64(small), int64(64<<10))
	require.LessOrEqual(t, sizeBig, sizeSmall+sizeSmall/10)
}
