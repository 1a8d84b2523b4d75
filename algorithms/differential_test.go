package algorithms

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/throttled/throttled/v2"
	"golang.org/x/time/rate"
)

// Differential tests: token-bucket and gcra against real, independently
// written libraries on seeded random traces.
//
//   - golang.org/x/time/rate (AllowN, ReserveN): same verdicts as
//     token-bucket and gcra; retry_after within 1 µs of ReserveN's delay.
//   - github.com/throttled/throttled/v2's GCRA limiter, driven by a store
//     with a virtual clock: same verdicts as gcra, and the same retry_after
//     to the nanosecond (throttled is integer; its emission interval is W/L
//     truncated, so it is only compared on policies where W/L is a whole
//     number of nanoseconds). throttled's MaxBurst is our B-1: it admits
//     MaxBurst+1 at once.
//
// x/time/rate keeps tokens in a float64, so at an exact refill boundary its
// verdict depends on rounding, not on the algorithm. The traces therefore
// leave out ("skip") the rare arrivals that fall within a microsecond of a
// boundary, judged exactly from gcra's TAT: where the request's slack
// (B-c)*T - (TAT - t) (plus max-delay when shaping) is within 1 µs of 0, or
// where TAT - t is (the bucket is within 1 µs of full, where the library's
// cap at B decides). A skipped arrival is given to no limiter. Arrivals use
// random nanosecond offsets, so skips are rare; the test checks that they
// are.

// diffTrace returns a seeded trace for 4 keys: a few thousand arrivals with
// random ns gaps around the per-key interval, same-instant bursts and idle
// gaps, costs 1-3. Times start at start (0, or near 1.7e18 as a replay).
func diffTrace(seed uint64, n int, interval time.Duration, start time.Duration) []bucketArrival {
	rng := rand.New(rand.NewPCG(seed, 0xd1ff))
	out := make([]bucketArrival, 0, n)
	now := start
	for range n {
		switch r := rng.IntN(40); {
		case r < 6: // same instant as the previous arrival
		case r == 39: // idle: buckets refill, keys are released
			now += time.Duration(rng.Int64N(int64(10 * interval)))
		default:
			now += time.Duration(rng.Int64N(int64(interval)/2) + 1)
		}
		out = append(out, bucketArrival{at: now, key: Key(rng.IntN(4)), cost: 1 + rng.Int64N(3)})
	}
	return out
}

// boundaryFilter keeps an exact shadow of gcra's TAT per key (never
// released) and says which arrivals are too close to a boundary.
type boundaryFilter struct {
	r        fracRate
	burst    int64
	maxDelay time.Duration
	tat      map[Key]fracTime
}

const boundaryMargin = time.Microsecond

func (f *boundaryFilter) near(a bucketArrival) bool {
	if a.cost > f.burst {
		return false // never admitted, whatever the rounding
	}
	q := f.r.sub(f.tat[a.key], fracAt(a.at)) // TAT - t, may be negative
	slack := f.r.sub(f.r.times(f.burst-a.cost), q)
	slack.ns += f.maxDelay
	within := func(x fracTime) bool {
		return x.ns > -boundaryMargin-1 && x.ns < boundaryMargin
	}
	return within(q) || within(slack)
}

// admitted records an admitted arrival in the shadow TAT.
func (f *boundaryFilter) admitted(a bucketArrival) {
	f.tat[a.key] = f.r.add(fracMax(f.tat[a.key], fracAt(a.at)), f.r.times(a.cost))
}

var diffPolicies = []struct {
	p     Params
	start time.Duration
}{
	{bucketPolicy(10, time.Second, 10), 0},
	{bucketPolicy(4, time.Second, 4), 1_700_000_000_000_000_000},
	{bucketPolicy(3, time.Second, 5), 0},                         // T = 333333333 1/3 ns
	{bucketPolicy(7, time.Minute, 3), 1_712_345_678_901_234_567}, // T = 8571428571 3/7 ns
	{bucketPolicy(100, time.Second, 1), 0},
	{bucketPolicy(250, time.Second, 20), 0},
	{bucketPolicy(9, 1300*time.Millisecond, 2), 0}, // T = 144444444 4/9 ns
}

// libLimiters is x/time/rate, one Limiter per key.
type libLimiters struct {
	limit rate.Limit
	burst int
	lim   map[Key]*rate.Limiter
}

func newLibLimiters(p Params) *libLimiters {
	return &libLimiters{limit: rate.Limit(float64(p.Rate) / p.Per.Seconds()), burst: int(p.Burst), lim: map[Key]*rate.Limiter{}}
}

func (l *libLimiters) get(k Key) *rate.Limiter {
	if l.lim[k] == nil {
		l.lim[k] = rate.NewLimiter(l.limit, l.burst)
	}
	return l.lim[k]
}

func TestDifferentialXTimeRate(t *testing.T) {
	for i, dp := range diffPolicies {
		p := dp.p
		t.Run(p.Policy.String(), func(t *testing.T) {
			tb := newBucketLimiter(t, newTokenBucketLimiter, p)
			g := newBucketLimiter(t, newGCRALimiter, p)
			lib := newLibLimiters(p)
			f := &boundaryFilter{r: newFracRate(p.Rate, p.Per), burst: p.Burst, tat: map[Key]fracTime{}}
			trace := diffTrace(uint64(100+i), 4000, p.Per/time.Duration(p.Rate), dp.start)
			skipped, rejected := 0, 0
			for j, a := range trace {
				if f.near(a) {
					skipped++
					continue
				}
				at := time.Unix(0, int64(a.at))
				lim := lib.get(a.key)
				want := lim.AllowN(at, int(a.cost))
				dt, dg := tb.Decide(a.at, a.key, a.cost), g.Decide(a.at, a.key, a.cost)
				where := fmt.Sprintf("arrival %d: t=%v key=%d cost=%d", j, a.at, a.key, a.cost)
				require.Equal(t, want, dt.Verdict == Accept, "token-bucket "+where)
				require.Equal(t, want, dg.Verdict == Accept, "gcra "+where)
				if want {
					f.admitted(a)
					continue
				}
				rejected++
				if a.cost > p.Burst {
					require.Equal(t, Never, dt.RetryAfter, where)
					require.Equal(t, Never, dg.RetryAfter, where)
					require.False(t, lim.ReserveN(at, int(a.cost)).OK(), where)
					continue
				}
				// The library's answer: reserve, read the delay, cancel
				// (which restores the tokens up to float rounding).
				r := lim.ReserveN(at, int(a.cost))
				libWait := r.DelayFrom(at)
				r.CancelAt(at)
				require.InDelta(t, float64(libWait), float64(dt.RetryAfter), float64(time.Microsecond), "token-bucket "+where)
				require.InDelta(t, float64(libWait), float64(dg.RetryAfter), float64(time.Microsecond), "gcra "+where)
			}
			require.Less(t, skipped, len(trace)/50, "too many arrivals near a boundary")
			require.Greater(t, rejected, len(trace)/20, "the trace should exercise rejections")
		})
	}
}

func TestDifferentialMaxDelay(t *testing.T) {
	// Shaping: token-bucket and gcra with max-delay against the x-time-rate
	// row, which TestXTimeRateIsTheLibrary checks is the library's ReserveN
	// to the nanosecond: same verdicts, delays and retry_after within 1 µs.
	for i, dp := range diffPolicies {
		p := dp.p
		p.MaxDelay = 3 * p.Per / time.Duration(p.Rate) / 2 // 1.5 intervals
		t.Run(p.Policy.String(), func(t *testing.T) {
			tb := newBucketLimiter(t, newTokenBucketLimiter, p)
			g := newBucketLimiter(t, newGCRALimiter, p)
			x := newBucketLimiter(t, newXTimeRateLimiter, p)
			f := &boundaryFilter{r: newFracRate(p.Rate, p.Per), burst: p.Burst, maxDelay: p.MaxDelay, tat: map[Key]fracTime{}}
			trace := diffTrace(uint64(200+i), 3000, p.Per/time.Duration(p.Rate), dp.start)
			skipped, delayed := 0, 0
			for j, a := range trace {
				if f.near(a) {
					skipped++
					continue
				}
				want := x.Decide(a.at, a.key, a.cost)
				where := fmt.Sprintf("arrival %d: t=%v key=%d cost=%d", j, a.at, a.key, a.cost)
				for _, got := range []Decision{tb.Decide(a.at, a.key, a.cost), g.Decide(a.at, a.key, a.cost)} {
					require.Equal(t, want.Verdict == Reject, got.Verdict == Reject, where)
					require.InDelta(t, float64(want.Delay), float64(got.Delay), float64(time.Microsecond), where)
					require.InDelta(t, float64(want.RetryAfter), float64(got.RetryAfter), float64(time.Microsecond), where)
				}
				if want.Verdict != Reject {
					f.admitted(a)
				}
				if want.Verdict == Delay {
					delayed++
				}
			}
			require.Less(t, skipped, len(trace)/50, "too many arrivals near a boundary")
			require.Greater(t, delayed, len(trace)/20, "the trace should exercise shaping")
		})
	}
}

// virtualGCRAStore is a throttled.GCRAStoreCtx in memory whose clock is the
// simulation's. TTLs are ignored: a key past its TTL has TAT <= now, which
// throttled treats exactly as a missing key.
type virtualGCRAStore struct {
	now time.Duration
	tat map[string]int64
}

func (s *virtualGCRAStore) GetWithTime(_ context.Context, key string) (int64, time.Time, error) {
	v, ok := s.tat[key]
	if !ok {
		v = -1
	}
	return v, time.Unix(0, int64(s.now)), nil
}

func (s *virtualGCRAStore) SetIfNotExistsWithTTL(_ context.Context, key string, value int64, _ time.Duration) (bool, error) {
	if _, ok := s.tat[key]; ok {
		return false, nil
	}
	s.tat[key] = value
	return true, nil
}

func (s *virtualGCRAStore) CompareAndSwapWithTTL(_ context.Context, key string, old, new int64, _ time.Duration) (bool, error) {
	if v, ok := s.tat[key]; !ok || v != old {
		return false, nil
	}
	s.tat[key] = new
	return true, nil
}

func TestDifferentialThrottled(t *testing.T) {
	ctx := context.Background()
	for i, dp := range diffPolicies {
		p := dp.p
		if int64(p.Per)%p.Rate != 0 {
			continue // throttled truncates W/L: compare only where it is whole
		}
		t.Run(p.Policy.String(), func(t *testing.T) {
			g := newBucketLimiter(t, newGCRALimiter, p)
			store := &virtualGCRAStore{tat: map[string]int64{}}
			quota := throttled.RateQuota{MaxRate: throttled.PerDuration(int(p.Rate), p.Per), MaxBurst: int(p.Burst - 1)}
			th, err := throttled.NewGCRARateLimiterCtx(store, quota)
			require.NoError(t, err)
			// throttled is integer arithmetic: no boundary needs skipping.
			trace := diffTrace(uint64(300+i), 4000, p.Per/time.Duration(p.Rate), dp.start)
			rejected := 0
			for j, a := range trace {
				store.now = a.at
				limited, res, err := th.RateLimitCtx(ctx, strconv.Itoa(int(a.key)), int(a.cost))
				require.NoError(t, err)
				got := g.Decide(a.at, a.key, a.cost)
				where := fmt.Sprintf("arrival %d: t=%v key=%d cost=%d", j, a.at, a.key, a.cost)
				require.Equal(t, limited, got.Verdict == Reject, where)
				if limited {
					rejected++
					// throttled leaves RetryAfter at -1 when the
					// quantity can never fit: our Never.
					require.Equal(t, res.RetryAfter, got.RetryAfter, where)
				}
			}
			require.Greater(t, rejected, len(trace)/20, "the trace should exercise rejections")
		})
	}
}
