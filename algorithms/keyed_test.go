package algorithms

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeState is a state whose fresh instant is set by the test.
type fakeState struct {
	until time.Duration
	n     int64
}

func TestKeyed(t *testing.T) {
	var asked []Key // the keys whose fresh instant keyed asked for, in order
	k := newKeyed(16, func(s *fakeState) time.Duration {
		asked = append(asked, Key(s.n))
		return s.until
	})

	s := k.get(0, 5) // the table grows to key 5; the state is fresh
	require.Equal(t, fakeState{}, *s)
	require.GreaterOrEqual(t, len(k.state), 6)
	require.False(t, k.isLive(5))
	s.until, s.n = 100, 5
	k.touch(5, 0)
	require.True(t, k.isLive(5))

	s = k.get(50, 2)
	s.until, s.n = 80, 2
	k.touch(2, 8) // 8 bytes of entries beyond the fixed 16
	require.Equal(t, []Key{5, 2}, asked, "pushed when they became live")
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 32}, k.Memory())

	// Key 5 changes: its fresh instant moves to 200, while the heap still
	// holds 100 for it.
	s = k.get(60, 5)
	s.until = 200
	k.touch(5, 0)
	require.Equal(t, 2, k.heap.Len()) // key 2 and key 5 once each
	require.Len(t, asked, 2, "a live key's change is only marked")

	requireLive(t, &k, 79, 2, 32)
	// Key 2 fresh at 80 exactly: released and zeroed without asking, as
	// it has not changed since it was pushed at 80.
	requireLive(t, &k, 80, 1, 16)
	require.Equal(t, fakeState{}, k.state[2])
	require.False(t, k.isLive(2))
	require.Len(t, asked, 2)
	// Key 5 changed since it was pushed at 100: asked at 100 and pushed
	// back to 200, where, unchanged since, it is released without asking.
	requireLive(t, &k, 100, 1, 16)
	require.Equal(t, []Key{5, 2, 5}, asked)
	require.Equal(t, 1, k.heap.Len())
	require.Equal(t, time.Duration(200), k.heap.Min())
	requireLive(t, &k, 199, 1, 16)
	requireLive(t, &k, 200, 0, 0)
	require.Equal(t, fakeState{}, k.state[5])
	require.Equal(t, []Key{5, 2, 5}, asked)

	// A released key comes back as a new one; entry bytes add to the peak.
	s = k.get(300, 5)
	s.until = 400
	k.touch(5, 0)
	k.addBytes(40)
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 56}, k.Memory())
	k.addBytes(-40)

	// Growing the table to a far key keeps the states held.
	s = k.get(310, 1000)
	require.Equal(t, time.Duration(400), k.state[5].until)
	s.until = 500
	k.touch(1000, 0)
	requireLive(t, &k, 400, 1, 16)
	requireLive(t, &k, 500, 0, 0)
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 56}, k.Memory())
}

// keyedChecker is implemented by every limiter that embeds keyed (the
// method below is promoted).
type keyedChecker interface {
	freshness(now time.Duration) (live, fresh []bool)
	keyCount() int
}

// freshness returns, for every key of the table, whether it holds state
// and whether its state is fresh at now (by the limiter's freshAt; a key
// without state is fresh), without releasing anything.
func (k *keyed[S]) freshness(now time.Duration) (live, fresh []bool) {
	live, fresh = make([]bool, len(k.state)), make([]bool, len(k.state))
	for key := range k.state {
		live[key] = k.isLive(Key(key))
		fresh[key] = !live[key] || k.freshAt(&k.state[key]) <= now
		if !live[key] {
			// A key without state has the zero state.
			if !reflect.ValueOf(k.state[key]).IsZero() {
				panic(fmt.Sprintf("key %d holds no state but %+v", key, k.state[key]))
			}
		}
	}
	return live, fresh
}

func (k *keyed[S]) keyCount() int { return int(k.keys) }

// TestReleaseExact: before every decision of random traces, over many keys
// that go fresh and come back, the release that liveAt (and so Decide)
// makes at now leaves exactly the keys whose state is not fresh at now, by
// each limiter's own freshAt asked of every key: none released early, none
// late. Every algorithm, with each of its options.
func TestReleaseExact(t *testing.T) {
	eachVariantOver40Keys(t, 9, func(t *testing.T, newL func() Limiter, pol Policy, v invVariant, calls []invCall, _ *rand.Rand) {
		l := newL()
		kc := l.(keyedChecker)
		for i, c := range calls {
			live, fresh := kc.freshness(c.at)
			keys, _ := l.(stateHolder).liveAt(c.at)
			after, _ := kc.freshness(c.at)
			want := 0
			for key := range live {
				// tested before require, whose arguments cost more than the check
				if live[key] && !fresh[key] {
					want++
					if !after[key] {
						require.Fail(t, "released early", "%s %s call %d: key %d released early", pol, v.name, i, key)
					}
				} else if after[key] {
					require.Fail(t, "not released", "%s %s call %d: key %d not released at %v", pol, v.name, i, key, c.at)
				}
			}
			require.Equal(t, int64(want), keys)
			require.Equal(t, want, kc.keyCount())
			l.Decide(c.at, c.key, c.cost)
		}
	})
}

// TestPrefetchChangesNothing: Prefetch is a hint. Every algorithm, with
// each of its options, decides random traces over 40 keys twice: once
// plainly and once told before a quarter of its decisions to prefetch
// random keys (some it has never seen) up to a random horizon, from now to
// three windows ahead (so that it reads releases long before they are
// due). The decisions, the keys and bytes alive before each decision
// (so no key is released early or late) and the Memory peaks are the same.
func TestPrefetchChangesNothing(t *testing.T) {
	eachVariantOver40Keys(t, 11, func(t *testing.T, newL func() Limiter, pol Policy, v invVariant, calls []invCall, r *rand.Rand) {
		plain, hinted := newL(), newL()
		pf := hinted.(Prefetcher)
		for i, c := range calls {
			if r.IntN(4) == 0 {
				keys := make([]Key, r.IntN(40))
				for j := range keys {
					keys[j] = Key(r.IntN(50))
				}
				pf.Prefetch(keys, c.at+time.Duration(r.Int64N(3*int64(pol.Per)+1)))
			}
			wantKeys, wantBytes := plain.(stateHolder).liveAt(c.at)
			keys, bytes := hinted.(stateHolder).liveAt(c.at)
			require.Equal(t, wantKeys, keys, "%s %s call %d: keys alive", pol, v.name, i)
			require.Equal(t, wantBytes, bytes, "%s %s call %d: bytes alive", pol, v.name, i)
			require.Equal(t, plain.Decide(c.at, c.key, c.cost), hinted.Decide(c.at, c.key, c.cost),
				"%s %s call %d", pol, v.name, i)
		}
		require.Equal(t, plain.Memory(), hinted.Memory(), "%s %s", pol, v.name)
	})
}

// eachVariantOver40Keys runs check for every algorithm (one subtest each,
// in parallel), with each of its options, under each policy of the
// invariant suite, on a random trace of 1,500 calls spread over 40 keys,
// so that many are live at once and go fresh at many instants. newL makes
// a limiter of the variant; r, seeded with seed, is the check's to use
// after the trace's.
func eachVariantOver40Keys(t *testing.T, seed uint64, check func(t *testing.T, newL func() Limiter, pol Policy, v invVariant, calls []invCall, r *rand.Rand)) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			for pi, pol := range invPolicies {
				for _, v := range invVariants(info.Name, pol) {
					if _, err := info.New(v.p); err != nil && info.Name == "nginx" && pol.Per != time.Second && pol.Per != time.Minute {
						continue // nginx takes only per 1s or 1m
					}
					newL := func() Limiter {
						l, err := info.New(v.p)
						require.NoError(t, err)
						return l
					}
					calls := invTrace(uint64(pi+1), v.p.Policy, 1500)
					r := rand.New(rand.NewPCG(uint64(pi), seed))
					for i := range calls {
						calls[i].key += 4 * Key(r.IntN(10))
					}
					check(t, newL, pol, v, calls, r)
				}
			}
		})
	}
}
