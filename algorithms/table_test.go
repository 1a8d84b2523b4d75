package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tableNames are the algorithms that have a Table: all of All but
// x-time-rate.
func tableNames() []string {
	var out []string
	for _, info := range All() {
		if info.Name != "x-time-rate" {
			out = append(out, info.Name)
		}
	}
	return out
}

// forEachTableVariant runs f over every algorithm with a Table and every
// policy and option variant of the invariant suite that it accepts.
func forEachTableVariant(t *testing.T, f func(t *testing.T, name string, p Params)) {
	for _, name := range tableNames() {
		for _, pol := range invPolicies {
			for _, v := range invVariants(name, pol) {
				if _, err := New(name, v.p); err != nil {
					continue // nginx takes per 1s and 1m only
				}
				t.Run(name+"/"+invSubtestName(pol, v), func(t *testing.T) { f(t, name, v.p) })
			}
		}
	}
}

// A Table and a Limiter of one algorithm call the same rule: on the same
// calls, in time order, they decide alike, show the same gauges, and the
// most bytes one key held is the same figure (the Table never releases a
// key, so its key counts differ, by design).
func TestTableDecidesAsLimiter(t *testing.T) {
	forEachTableVariant(t, func(t *testing.T, name string, p Params) {
		for seed := uint64(1); seed <= 3; seed++ {
			calls := invTrace(seed, p.Policy, invArrivals)
			l := mustLimiter(t, name, p)
			tab, err := NewTable(name, p)
			require.NoError(t, err)
			for i, c := range calls {
				want := l.Decide(c.at, c.key, c.cost)
				if got := tab.Decide(c.at, c.key, c.cost); got != want {
					require.Equal(t, want, got, "call %d: %+v", i, c)
				}
				// and they show the same state, the table's kept one
				// or the limiter's released (fresh) one alike
				if a, b := l.(Inspector).Inspect(c.at, c.key), tab.(Inspector).Inspect(c.at, c.key); !sameSlice(a, b) {
					require.Equal(t, a, b, "call %d: gauges", i)
				}
			}
			require.Equal(t, l.Memory().BytesPerKeyMax, tab.Memory().BytesPerKeyMax)
			// long after, every key fresh in both
			end := calls[len(calls)-1].at + 3*p.Per + 3*p.Service
			for key := range Key(4) {
				require.Equal(t, l.(Inspector).Inspect(end, key), tab.(Inspector).Inspect(end, key), "key %d at the end", key)
			}
		}
	})
}

// A read, a decision on the copy and a write of it at once (a racy node
// alone, with nothing in between) is one atomic decision: the same
// verdicts as Decide. A decision that changes nothing returns no copy.
func TestTableCopyThenWriteIsDecide(t *testing.T) {
	forEachTableVariant(t, func(t *testing.T, name string, p Params) {
		calls := invTrace(7, p.Policy, invArrivals)
		ref, err := NewTable(name, p)
		require.NoError(t, err)
		tab, err := NewTable(name, p)
		require.NoError(t, err)
		for i, c := range calls {
			want := ref.Decide(c.at, c.key, c.cost)
			got, cp := tab.DecideCopy(c.at, c.key, c.cost)
			require.Equal(t, want, got, "call %d: %+v", i, c)
			if cp != NoCopy {
				tab.Write(c.key, cp)
			} else if name != "sliding-log" && name != "concurrency" {
				// only a log's prune changes a state without a decision
				// to keep; the fixed states' rules say when they change
				require.Equal(t, Reject, got.Verdict, "call %d: an admission changes the state", i)
			}
		}
		if name != "sliding-log" && name != "concurrency" {
			// a log read and not written back is not pruned in the
			// store, so its bytes differ; every other state is the same
			require.Equal(t, ref.Memory(), tab.Memory())
		}
	})
}

// Two copies read before either is written: both decide on the state they
// read, and the last write wins (lost update), docs/cluster.md's racy
// example 3 in a table: gcra L=1 per 1s, B=1, reads at 5 and 8 ms both
// see a fresh key and admit; the writes land in turn; a read at 25 ms sees
// the second write's TAT (8ms + 1s) and is rejected until then.
func TestTableLostUpdate(t *testing.T) {
	tab, err := NewTable("gcra", Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}})
	require.NoError(t, err)
	ms := time.Millisecond
	d1, c1 := tab.DecideCopy(5*ms, 0, 1)
	d2, c2 := tab.DecideCopy(8*ms, 0, 1)
	require.Equal(t, Accept, d1.Verdict)
	require.Equal(t, Accept, d2.Verdict)
	tab.Write(0, c1) // TAT 1.005s
	tab.Write(0, c2) // TAT 1.008s: the first write is lost
	d3 := tab.Decide(25*ms, 0, 1)
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: 1008*ms - 25*ms}, d3)
}

// What each rule does when time goes back for a key (a store passed the
// nodes' clocks, central with clock: node), as each algorithm's doc says.
func TestTableTimeGoesBack(t *testing.T) {
	ms := time.Millisecond
	pol := Policy{Rate: 2, Per: time.Second, Burst: 2}
	type step struct {
		at   time.Duration
		want Decision
	}
	acc := Decision{Verdict: Accept}
	rej := func(after time.Duration) Decision { return Decision{Verdict: Reject, RetryAfter: after} }
	cases := []struct {
		name  string
		p     Params
		steps []step
	}{
		// Window 1 holds 2; a call stamped in window 0 finds no count
		// for window 0 and is admitted, and the state becomes window
		// 0's: window 1's count is lost, so window 1 admits 2 more.
		{"fixed-window", Params{Policy: pol}, []step{
			{1100 * ms, acc}, {1200 * ms, acc}, {1300 * ms, rej(700 * ms)},
			{900 * ms, acc},
			{1400 * ms, acc}, {1500 * ms, acc}, {1600 * ms, rej(400 * ms)},
		}},
		// The same for the two counts of the sliding window: at 1.4s,
		// prev = window 0's 1 (weighted by 0.6) and cur = 0.
		{"sliding-window", Params{Policy: pol}, []step{
			// full at 1.3s: at 2.5s prev = 2 at weight 0.5 leaves room
			{1100 * ms, acc}, {1200 * ms, acc}, {1300 * ms, rej(1200 * ms)},
			{900 * ms, acc},
			{1400 * ms, acc},
			// prev 1 at weight 0.5, cur 1: 0.5 + 1 + 1 > 2 until
			// prev's weight reaches 0 at 2s
			{1500 * ms, rej(500 * ms)},
		}},
		// The bucket's clock never goes back: two tokens taken at 1s,
		// a call stamped 0.9s is decided at 1s (empty: rejected, 500ms
		// for a token from 1s), and at 1.5s one token has come back.
		{"token-bucket", Params{Policy: pol}, []step{
			{1000 * ms, acc}, {1000 * ms, acc},
			{900 * ms, rej(500 * ms)},
			{1500 * ms, acc}, {1500 * ms, rej(500 * ms)},
		}},
		// TAT = 2s after two at 1s; a call at 0.9s finds TAT 1.1s
		// further ahead of it than B*T allows: retry after 0.6s.
		{"gcra", Params{Policy: pol}, []step{
			{1000 * ms, acc}, {1000 * ms, acc},
			{900 * ms, rej(600 * ms)},
			{1500 * ms, acc},
		}},
		// nginx 2 r/s (rate 2000 milli-requests/s), burst B-1 = 1
		// (1000), nodelay. A call 70 s behind counts as ms = 1 (nginx's
		// guard), drains 2, is admitted at excess 998 and moves last
		// back to 30 s; the next call at 100 s then finds 70 s drained
		// and starts from 0: three admitted at 100 s where two fit.
		{"nginx", Params{Policy: pol, Nodelay: true}, []step{
			{100_000 * ms, acc}, // a new node: excess 0, last 100000
			{30_000 * ms, acc},  // ms -70000 -> 1: excess 1000-2+0 = 998
			{100_000 * ms, acc}, // ms 70000: drained, excess 0, last 100000
			{100_000 * ms, acc}, // ms 0: excess 1000, not above the burst
			// excess 2000 > 1000: fits once 1000 drained, 500 ms on
			{100_000 * ms, rej(500 * ms)},
			// 100 ms behind: ms -100 -> 0, excess 2000: rejected, and
			// retry_after counts from last (100.5 s) back to 99.9 s
			{99_900 * ms, rej(600 * ms)},
		}},
		// Two in flight until 1.1s (admitted at 0.1s, service 1s); a
		// call stamped 0.05s sees both (they complete after it) and
		// must wait until the first completes at 1.1s.
		{"concurrency", Params{Policy: pol, Service: time.Second}, []step{
			{100 * ms, acc}, {100 * ms, acc},
			{50 * ms, rej(1050 * ms)},
			{1100 * ms, acc},
		}},
		// The log holds 0.5s and 0.6s; a call stamped 0.45s counts both
		// (t - s < W for entries after t) and must wait until the
		// first stops counting at 1.5s. At 1.5s one has expired: the
		// call is logged at 1.5, then one stamped 1.2s is logged in
		// order before it, after 0.6s.
		{"sliding-log", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}}, []step{
			{500 * ms, acc}, {600 * ms, acc}, {600 * ms, acc},
			{450 * ms, rej(1050 * ms)},
			{1500 * ms, acc},
			// entries: 0.6, 0.6, 1.5 -> at 1.2 all count: full,
			// and the first two stop counting at 1.6
			{1200 * ms, rej(400 * ms)},
			{1600 * ms, acc}, // 0.6s entries gone: 1.5 and now 1.6
			{1550 * ms, acc}, // logged between 1.5 and 1.6
			{1700 * ms, rej(800 * ms)},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := NewTable(c.name, c.p)
			require.NoError(t, err)
			for i, s := range c.steps {
				require.Equal(t, s.want, tab.Decide(s.at, 0, 1), "step %d at %v", i, s.at)
			}
		})
	}
}

// Take grants as many units as the bucket holds at once, up to want: gcra
// and token-bucket at 10 per 1s, burst 10, take 4, 4, then the 2 left (and
// the wait for need more after them: 1 token in 100 ms); a fourth take
// gets nothing, and need 1 would wait one interval, 100 ms.
func TestTableTake(t *testing.T) {
	ms := time.Millisecond
	for _, name := range []string{"gcra", "token-bucket"} {
		t.Run(name, func(t *testing.T) {
			tab, err := NewTable(name, Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
			require.NoError(t, err)
			for i, want := range []struct {
				at          time.Duration
				got         int64
				retryAfter  time.Duration
				want, needs int64
			}{
				{0, 4, 0, 4, 1},
				{0, 4, 0, 4, 1},
				{0, 2, 100 * ms, 4, 1},        // 2 left, then 1 more in 100 ms
				{0, 0, 100 * ms, 4, 1},        // empty: a token in 100 ms
				{50 * ms, 0, 250 * ms, 4, 3},  // 3 tokens are 300 ms from 0
				{100 * ms, 1, 100 * ms, 4, 1}, // one token back, the next in 100 ms
				{1000 * ms, 4, 0, 4, 1},       // refilled
			} {
				got, ra := tab.Take(want.at, 0, want.want, want.needs)
				require.Equal(t, want.got, got, "take %d", i)
				require.Equal(t, want.retryAfter, ra, "take %d", i)
			}
			// a cost above the burst can never be taken: the bucket
			// gives all it holds, and need 11 is never there
			got, ra := tab.Take(5*time.Second, 0, 11, 11)
			require.Equal(t, int64(10), got)
			require.Equal(t, Never, ra)
		})
	}
}

// Incr adds to the count of the instant's window, starts a newer window,
// and leaves a window the state has moved past alone (INCRBY of a key that
// no longer matters).
func TestTableIncr(t *testing.T) {
	ms := time.Millisecond
	p := Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}}
	t.Run("fixed-window", func(t *testing.T) {
		tab, err := NewTable("fixed-window", p)
		require.NoError(t, err)
		inc := tab.(Incrementer)
		inc.Incr(1100*ms, 0, 1) // window 1: 1
		require.Equal(t, Accept, tab.Decide(1200*ms, 0, 1).Verdict)
		inc.Incr(900*ms, 0, 1) // window 0: gone by, ignored
		require.Equal(t, Decision{Verdict: Reject, RetryAfter: 700 * ms}, tab.Decide(1300*ms, 0, 1))
		inc.Incr(2100*ms, 0, 2) // window 2 starts at 2
		require.Equal(t, Decision{Verdict: Reject, RetryAfter: 800 * ms}, tab.Decide(2200*ms, 0, 1))
	})
	t.Run("sliding-window", func(t *testing.T) {
		tab, err := NewTable("sliding-window", p)
		require.NoError(t, err)
		inc := tab.(Incrementer)
		inc.Incr(1100*ms, 0, 1) // window 1: cur 1
		inc.Incr(2100*ms, 0, 1) // window 2: prev 1, cur 1
		inc.Incr(1900*ms, 0, 1) // window 1 is now prev: prev 2
		inc.Incr(500*ms, 0, 5)  // window 0: no longer kept, ignored
		// at 2.5s: prev 2 at weight 0.5 + cur 1 + 1 = 3 > 2; it fits
		// when prev's weight is 0 (cur 1 + 1 <= 2), at 3s
		require.Equal(t, Decision{Verdict: Reject, RetryAfter: 500 * ms}, tab.Decide(2500*ms, 0, 1))
		require.Equal(t, Accept, tab.Decide(3000*ms, 0, 1).Verdict)
	})
}

// Sync's nodes decide on counts they hold themselves: DecideCounts on the
// counts a key's state holds decides as the Limiter does.
func TestWindowRuleDecidesAsLimiter(t *testing.T) {
	for _, name := range []string{"fixed-window", "sliding-window"} {
		for _, pol := range invPolicies {
			for _, v := range invVariants(name, pol) {
				t.Run(name+"/"+invSubtestName(pol, v), func(t *testing.T) {
					l := mustLimiter(t, name, v.p)
					wr, ok, err := NewWindowRule(name, v.p)
					require.NoError(t, err)
					require.True(t, ok)
					require.Equal(t, v.p.Per, wr.Window())
					// the counts, kept as sliding-window's state
					var s slidingWindowState
					for i, c := range invTrace(3, v.p.Policy, invArrivals) {
						if c.key != 0 {
							continue
						}
						k := wr.WindowIndex(c.at)
						if want, _ := windowAt(c.at, v.p.Per); v.p.Calendar == NotCalendar {
							require.Equal(t, want, k)
						}
						prev, cur := s.countsIn(k)
						if s.win < k-1 {
							prev = 0
						}
						got, counted := wr.DecideCounts(c.at, prev, cur, c.cost)
						require.Equal(t, l.Decide(c.at, c.key, c.cost), got, "call %d", i)
						if counted {
							s.win, s.prev, s.cur = k, prev, addSat(cur, c.cost)
						}
					}
				})
			}
		}
	}
	_, ok, err := NewWindowRule("gcra", Params{Policy: invPolicies[0]})
	require.NoError(t, err)
	require.False(t, ok)
}

// A flush makes every key fresh: a full key admits again at once.
func TestTableFlush(t *testing.T) {
	for _, name := range tableNames() {
		t.Run(name, func(t *testing.T) {
			p := Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, Service: time.Second}
			tab, err := NewTable(name, p)
			require.NoError(t, err)
			require.NotEqual(t, Reject, tab.Decide(0, 3, 1).Verdict)
			require.Equal(t, Reject, tab.Decide(0, 3, 1).Verdict)
			tab.Flush()
			require.NotEqual(t, Reject, tab.Decide(0, 3, 1).Verdict)
		})
	}
	_, err := NewTable("x-time-rate", Params{Policy: invPolicies[0]})
	require.ErrorContains(t, err, "cannot run in a store")
}
