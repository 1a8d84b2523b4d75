package algorithms

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// This file holds the tests of Inspect: a hand-computed script per
// algorithm, and the suite checking over the whole registry that Inspect
// changes no decision and no Memory peak.

// t0 is the start of the scripts: off time 0, on a window boundary of every
// period used below.
const t0 = 10 * time.Second

// inspectStep is one action of an Inspect script: a decision (want is its
// verdict) or, when gauges is set, an Inspect whose gauges must be exactly
// these.
type inspectStep struct {
	at     time.Duration
	key    Key
	cost   int64 // a decision when gauges is nil
	want   Verdict
	gauges []Gauge
	why    string
}

// do is a decision of cost at at for key, wanting verdict want.
func do(at time.Duration, key Key, cost int64, want Verdict) inspectStep {
	return inspectStep{at: at, key: key, cost: cost, want: want}
}

// look is an Inspect of key at at, wanting values for the limiter's gauge
// names, in order; why says how they were computed.
func look(at time.Duration, key Key, why string, values ...float64) inspectStep {
	g := make([]Gauge, len(values))
	for i, v := range values {
		g[i].Value = v
	}
	return inspectStep{at: at, key: key, gauges: g, why: why}
}

// runInspectScript runs the steps on l, which names its gauges names.
// Gauge values are compared within delta (0: exactly).
func runInspectScript(t *testing.T, l Limiter, names []string, delta float64, steps []inspectStep) {
	t.Helper()
	in, ok := l.(Inspector)
	require.True(t, ok, "%T is not an Inspector", l)
	for i, s := range steps {
		if s.gauges == nil {
			d := l.Decide(s.at, s.key, s.cost)
			require.Equal(t, s.want, d.Verdict, "step %d: decide t=%v key=%d cost=%d", i, s.at, s.key, s.cost)
			continue
		}
		got := in.Inspect(s.at, s.key)
		gotNames := make([]string, len(got))
		gotValues := make([]float64, len(got))
		for j, g := range got {
			gotNames[j], gotValues[j] = g.Name, g.Value
		}
		require.Equal(t, names, gotNames, "step %d: gauge names", i)
		want := make([]float64, len(s.gauges))
		for j, g := range s.gauges {
			want[j] = g.Value
		}
		if delta == 0 {
			require.Equal(t, want, gotValues, "step %d: inspect t=%v key=%d: %s", i, s.at, s.key, s.why)
		} else {
			require.InDeltaSlice(t, want, gotValues, delta, "step %d: inspect t=%v key=%d: %s", i, s.at, s.key, s.why)
		}
	}
}

// requireKeys requires a limiter's count of keys holding state, read
// without expiring anything, to be want: it shows that an Inspect released
// a key that was fresh.
func requireKeys(t *testing.T, want, got int64) {
	t.Helper()
	require.Equal(t, want, got, "keys holding state")
}

func TestInspectFixedWindow(t *testing.T) {
	names := []string{"count", "limit"}
	p := Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}}
	l := mustLimiter(t, "fixed-window", p)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: nothing counted", 0, 3),
		do(t0+100*ms, 0, 1, Accept),
		do(t0+100*ms, 0, 2, Accept),
		do(t0+100*ms, 0, 1, Reject),
		look(t0+100*ms, 0, "burst of 3 in window 10; the rejected 1 is not counted", 3, 3),
		look(t0+999*ms, 0, "still window 10", 3, 3),
		look(t0+time.Second, 0, "window 11 starts empty; the key is released at 11s", 0, 3),
		look(t0+time.Second, 5, "a key never seen", 0, 3),
		do(t0+1500*ms, 0, 2, Accept),
		look(t0+1700*ms, 0, "2 counted in window 11", 2, 3),
	})
	requireKeys(t, 1, l.(*FixedWindow).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+2*time.Second, 0, "released at the end of window 11", 0, 3),
	})
	requireKeys(t, 0, l.(*FixedWindow).keys)

	// count-rejected: the rejected cost counts too, above the limit.
	p.CountRejected = true
	l = mustLimiter(t, "fixed-window", p)
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 3, Accept),
		do(t0+1*ms, 0, 2, Reject),
		look(t0+500*ms, 0, "3 admitted + 2 rejected, counted", 5, 3),
		look(t0+time.Second, 0, "next window", 0, 3),
	})
}

func TestInspectSlidingLog(t *testing.T) {
	names := []string{"in window", "limit"}
	l := mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: empty log", 0, 3),
		do(t0, 0, 1, Accept),
		do(t0+200*ms, 0, 2, Accept),
		do(t0+500*ms, 0, 1, Reject),
		look(t0+500*ms, 0, "1 at 10s and 2 at 10.2s count; the rejected one is not logged", 3, 3),
		look(t0+time.Second-1, 0, "the entry of 10s counts until 11s excluded", 3, 3),
		look(t0+time.Second, 0, "the entry of 10s stopped counting at 11s", 2, 3),
		do(t0+time.Second, 0, 1, Accept), // 2+1 <= 3: Inspect pruned nothing that counts
		look(t0+1200*ms, 0, "the entry of 10.2s stopped counting; 11s's counts", 1, 3),
		look(t0+1200*ms, 9, "a key never seen", 0, 3),
	})
	requireKeys(t, 1, l.(*SlidingLog).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+2*time.Second, 0, "the last entry stopped counting: released", 0, 3),
	})
	requireKeys(t, 0, l.(*SlidingLog).keys)
}

func TestInspectSlidingWindow(t *testing.T) {
	names := []string{"previous", "current", "estimate", "limit"}
	l := mustLimiter(t, "sliding-window", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh", 0, 0, 0, 10),
		do(t0+200*ms, 0, 4, Accept),
		do(t0+600*ms, 0, 2, Accept),
		look(t0+600*ms, 0, "window 10 holds 6; window 9 nothing", 0, 6, 6, 10),
		look(t0+1250*ms, 0, "window 11 at e=250ms: prev 6 weighted 750/1000", 6, 0, 4.5, 10),
		// 6*750ms + (0+5)*1000ms = 9500ms <= 10*1000ms.
		do(t0+1250*ms, 0, 5, Accept),
		look(t0+1500*ms, 0, "prev 6 weighted 1/2, plus cur 5", 6, 5, 8, 10),
		look(t0+2500*ms, 0, "window 12: window 11's 5 shifted to prev, weighted 1/2", 5, 0, 2.5, 10),
		look(t0+2500*ms, 3, "a key never seen", 0, 0, 0, 10),
	})
	requireKeys(t, 1, l.(*SlidingWindow).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+3*time.Second, 0, "window 13: window 11 forgotten, released", 0, 0, 0, 10),
	})
	requireKeys(t, 0, l.(*SlidingWindow).keys)
}

func TestInspectTokenBucket(t *testing.T) {
	names := []string{"tokens", "burst"}
	l := mustLimiter(t, "token-bucket", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: full", 5, 5),
		do(t0, 0, 2, Accept),
		do(t0, 0, 3, Accept),
		do(t0, 0, 1, Reject),
		look(t0, 0, "burst of 5 took every token", 0, 5),
		look(t0+250*ms, 0, "refill of 10/s for 250ms", 2.5, 5),
		do(t0+250*ms, 0, 2, Accept),
		look(t0+250*ms, 0, "2.5 - 2", 0.5, 5),
		look(t0+250*ms, 4, "a key never seen", 5, 5),
	})
	requireKeys(t, 1, l.(*TokenBucket).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+700*ms, 0, "full again at 10.7s (4.5 missing at 10/s): released", 5, 5),
	})
	requireKeys(t, 0, l.(*TokenBucket).keys)

	// max-delay: a debt shows as negative tokens.
	l = mustLimiter(t, "token-bucket", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}, MaxDelay: 300 * ms})
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 5, Accept),
		do(t0, 0, 2, Delay), // 2 missing tokens arrive in 200ms <= 300ms
		look(t0, 0, "5 - 7 taken", -2, 5),
		look(t0+100*ms, 0, "1 token of the debt refilled", -1, 5),
		look(t0+700*ms, 0, "7 refilled: full, released", 5, 5),
	})

	// 3/s: a token is 1e9 units, refilled at 3 units/ns.
	l = mustLimiter(t, "token-bucket", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 2}})
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 2, Accept),
		look(t0+100*ms, 0, "0.3 tokens refilled in 100ms at 3/s", 0.3, 2),
	})
}

func TestInspectGCRA(t *testing.T) {
	names := []string{"tokens", "burst"}
	l := mustLimiter(t, "gcra", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: TAT in the past, B tokens", 5, 5),
		do(t0, 0, 3, Accept),
		look(t0, 0, "TAT = 10.3s: 300ms/100ms ahead", 2, 5),
		do(t0, 0, 2, Accept),
		do(t0, 0, 1, Reject),
		look(t0, 0, "TAT = 10.5s: 5 intervals ahead", 0, 5),
		look(t0+250*ms, 0, "TAT 250ms ahead: 2.5 intervals", 2.5, 5),
		look(t0+250*ms, 1, "a key never seen", 5, 5),
	})
	requireKeys(t, 1, l.(*GCRA).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+500*ms, 0, "TAT reached: released", 5, 5),
	})
	requireKeys(t, 0, l.(*GCRA).keys)

	// max-delay: TAT more than B*T ahead shows as negative tokens.
	l = mustLimiter(t, "gcra", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}, MaxDelay: 250 * ms})
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 5, Accept),
		do(t0, 0, 2, Delay), // excess 700ms - 500ms = 200ms <= 250ms
		look(t0, 0, "TAT = 10.7s: 7 intervals ahead", -2, 5),
		look(t0+400*ms, 0, "3 intervals ahead", 2, 5),
	})

	// 3/s: T = 333,333,333 1/3 ns, TAT kept exactly.
	l = mustLimiter(t, "gcra", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 2}})
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 2, Accept),
		look(t0, 0, "TAT = t0 + 666,666,666 2/3 ns: exactly 2 intervals", 0, 2),
		look(t0+500*ms, 0, "166,666,666 2/3 ns ahead: half an interval", 1.5, 2),
	})
}

func TestInspectLeakyBucket(t *testing.T) {
	names := []string{"queue", "capacity"}
	l := mustLimiter(t, "leaky-bucket", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 3}})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: empty queue", 0, 3),
		do(t0, 0, 1, Accept),
		do(t0, 0, 1, Delay),
		do(t0, 0, 1, Delay),
		do(t0, 0, 1, Reject),
		look(t0, 0, "one released now, two waiting: TAT 300ms ahead", 3, 3),
		look(t0+50*ms, 0, "TAT 250ms ahead: 2.5 spacings", 2.5, 3),
		look(t0+250*ms, 0, "the last one is being released", 0.5, 3),
		look(t0+250*ms, 6, "a key never seen", 0, 3),
	})
	requireKeys(t, 1, l.(*LeakyBucket).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+300*ms, 0, "empty at TAT: released", 0, 3),
	})
	requireKeys(t, 0, l.(*LeakyBucket).keys)
}

func TestInspectNginx(t *testing.T) {
	names := []string{"excess", "burst"}
	// 10 r/s: rate 10,000 milli-requests/s; burst B-1 = 4 (4000).
	l := mustLimiter(t, "nginx", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: no node", 0, 4),
		do(t0, 0, 1, Accept), // a new node: excess 0
		look(t0, 0, "the first request stores excess 0", 0, 4),
		do(t0, 0, 1, Delay), // 1000
		do(t0, 0, 1, Delay), // 2000
		do(t0, 0, 1, Delay), // 3000
		do(t0, 0, 1, Delay), // 4000
		do(t0, 0, 1, Reject),
		look(t0, 0, "4000 milli-requests stored, ms = 0", 4, 4),
		look(t0+250*ms, 0, "4000 - 10000*250/1000", 1.5, 4),
		look(t0+250*ms+999*time.Microsecond, 0, "nginx's clock is whole ms: still ms = 250", 1.5, 4),
		look(t0+400*ms, 0, "4000 - 4000: drained, the node not yet fresh", 0, 4),
		look(t0+400*ms, 2, "a key never seen", 0, 4),
	})
	requireKeys(t, 1, l.(*Nginx).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		// fresh at last + ceil((4000+1000)*1000/10000) = 500 ms.
		look(t0+500*ms, 0, "released", 0, 4),
	})
	requireKeys(t, 0, l.(*Nginx).keys)

	// nginx's own burst, and a 1/m rate: 16 milli-requests/s truncated.
	l = mustLimiter(t, "nginx", Params{Policy: Policy{Rate: 1, Per: time.Minute, Burst: 1}, NginxBurst: 2, NginxBurstSet: true})
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 3, Delay), // a new node of cost 3: excess 2000, delayed 2000*1000/16 ms
		look(t0, 0, "cost 3 on a fresh key stores (3-1)*1000", 2, 2),
		look(t0+10*time.Second, 0, "2000 - 16*10000/1000 = 1840", 1.84, 2),
	})
}

func TestInspectConcurrency(t *testing.T) {
	names := []string{"in flight", "max"}
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}, Max: 3, Service: 300 * ms})
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0, 0, "fresh: nothing in flight", 0, 3),
		do(t0, 0, 1, Accept),
		do(t0+100*ms, 0, 2, Accept),
		do(t0+100*ms, 0, 1, Reject),
		look(t0+100*ms, 0, "1 + 2 in flight", 3, 3),
		look(t0+300*ms, 0, "the first completed at 10.3s", 2, 3),
		do(t0+300*ms, 0, 1, Accept), // 2+1 <= 3: Inspect pruned nothing in flight
		look(t0+350*ms, 0, "2 until 10.4s, 1 until 10.6s", 3, 3),
		look(t0+400*ms, 0, "the cost-2 request completed", 1, 3),
		look(t0+400*ms, 8, "a key never seen", 0, 3),
	})
	requireKeys(t, 1, l.(*Concurrency).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+600*ms, 0, "all completed: released", 0, 3),
	})
	requireKeys(t, 0, l.(*Concurrency).keys)

	// Service 0: nothing is ever in flight; max defaults to the burst.
	l = mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}})
	runInspectScript(t, l, names, 0, []inspectStep{
		do(t0, 0, 5, Accept),
		look(t0, 0, "service 0 keeps no state", 0, 5),
	})
}

func TestInspectXTimeRate(t *testing.T) {
	names := []string{"tokens", "burst"}
	const delta = 1e-9 // the library's float refill
	l := mustLimiter(t, "x-time-rate", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 5}})
	runInspectScript(t, l, names, delta, []inspectStep{
		look(t0, 0, "fresh: a full bucket", 5, 5),
		do(t0, 0, 5, Accept),
		do(t0, 0, 1, Reject),
		look(t0, 0, "burst of 5 took every token", 0, 5),
		look(t0+250*ms, 0, "refill of 10/s for 250ms", 2.5, 5),
		look(t0+250*ms, 7, "a key never seen", 5, 5),
	})
	requireKeys(t, 1, l.(*XTimeRate).keys)
	runInspectScript(t, l, names, 0, []inspectStep{
		look(t0+500*ms, 0, "full again: released", 5, 5),
	})
	requireKeys(t, 0, l.(*XTimeRate).keys)

	// The gauge is the library's own TokensAt, to the bit, at instants
	// between and on the decisions.
	l = mustLimiter(t, "x-time-rate", Params{Policy: Policy{Rate: 7, Per: time.Minute, Burst: 3}})
	ref := rate.NewLimiter(rate.Limit(7.0/60), 3)
	decisions := []time.Duration{t0, t0 + 1, t0 + 13*time.Second, t0 + 13*time.Second + 333, t0 + 20*time.Second}
	for i, at := range decisions {
		for _, dt := range []time.Duration{4 * time.Second, 777 * ms, 1, 0} { // non-decreasing instants
			if i > 0 && at-dt >= decisions[i-1] {
				want := ref.TokensAt(time.Unix(0, int64(at-dt)))
				require.Equal(t, want, l.(Inspector).Inspect(at-dt, 0)[0].Value, "before call %d, -%v", i, dt)
			}
		}
		require.Equal(t, ref.AllowN(time.Unix(0, int64(at)), 1), l.Decide(at, 0, 1).Verdict == Accept, "call %d", i)
	}
}

// TestInspectChangesNothing runs each algorithm of the registry, with each
// invariant policy and option variant, on a seeded random trace twice: once
// plain, once with Inspect called on seen and unseen keys between the
// decisions at non-decreasing instants (at, between and exactly on decision
// instants, as the engine samples before the events of an instant). The
// decisions and the Memory peaks must be identical: Inspect may release
// state that is fresh, but peaks are taken at decisions, where the plain run
// releases the same state first. Each algorithm's gauge names must be the
// same on every call, and the gauges of a released key those of a fresh
// one.
func TestInspectChangesNothing(t *testing.T) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			for pi, pol := range invPolicies {
				for _, v := range invVariants(info.Name, pol) {
					t.Run(invSubtestName(pol, v), func(t *testing.T) {
						plain, err := info.New(v.p)
						if err != nil && info.Name == "nginx" && pol.Per != time.Second && pol.Per != time.Minute {
							t.Skipf("nginx takes only per 1s or 1m: %v", err)
						}
						require.NoError(t, err)
						watched, err := info.New(v.p)
						require.NoError(t, err)
						in, ok := watched.(Inspector)
						require.True(t, ok, "%T is not an Inspector", watched)
						fresh, err := info.New(v.p)
						require.NoError(t, err)

						calls := invTrace(uint64(pi+1), v.p.Policy, invArrivals)
						want := decideAll(plain, calls)

						r := rand.New(rand.NewPCG(uint64(pi+1), 0x696e73706563))
						var names []string
						inspect := func(at time.Duration) {
							// keys 0-3 are the trace's; 4 and 1000 are never seen
							// (1000 is beyond every state table).
							for _, key := range []Key{0, 1, 2, 3, 4, 1000} {
								// each check before require, which costs more
								g := in.Inspect(at, key)
								again := in.Inspect(at, key)
								if !sameSlice(g, again) {
									require.Equal(t, g, again, "Inspect(%v, %d) twice", at, key)
								}
								got := make([]string, len(g))
								for i, x := range g {
									got[i] = x.Name
									if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
										require.Fail(t, "not a number", "%s = %v", x.Name, x.Value)
									}
								}
								if names == nil {
									names = got
								}
								if !sameSlice(names, got) {
									require.Equal(t, names, got, "gauge names at %v key %d", at, key)
								}
							}
						}
						last := calls[0].at
						for i, c := range calls {
							if r.IntN(3) == 0 {
								// Instants in [last, c.at], non-decreasing, often
								// exactly on one of them.
								at := last
								for range 1 + r.IntN(3) {
									switch r.IntN(3) {
									case 0:
									case 1:
										at = c.at
									default:
										at += time.Duration(r.Int64N(int64(c.at-at) + 1))
									}
									inspect(at)
								}
							}
							if got := watched.Decide(c.at, c.key, c.cost); got != want[i] {
								require.Equal(t, want[i], got, "call %d: t=%v key=%d cost=%d", i, c.at, c.key, c.cost)
							}
							last = c.at
						}
						require.Equal(t, plain.Memory(), watched.Memory(), "Memory peaks")

						// Long after the trace every key is fresh: its gauges
						// are a fresh limiter's.
						far := last + 100*v.p.Per + v.p.Service + v.p.MaxDelay
						for _, key := range []Key{0, 1, 2, 3} {
							require.Equal(t, fresh.(Inspector).Inspect(far, key), in.Inspect(far, key), "key %d at %v", key, far)
						}
						requireLive(t, watched.(stateHolder), far, 0, 0)
					})
				}
			}
		})
	}
}

// TestInspectMetersAgree checks the gauges of the three exact forms of one
// rule against each other on random traces: token-bucket's tokens, gcra's
// tokens and B minus leaky-bucket's queue are the same figure, as the three
// admit the same requests (TestInvariantSameAdmissions).
func TestInspectMetersAgree(t *testing.T) {
	for pi, pol := range invPolicies {
		p := Params{Policy: pol}
		tb, gc, lb := mustLimiter(t, "token-bucket", p), mustLimiter(t, "gcra", p), mustLimiter(t, "leaky-bucket", p)
		calls := invTrace(uint64(200+pi), pol, invArrivals)
		r := rand.New(rand.NewPCG(uint64(pi), 1))
		for i, c := range calls {
			for _, l := range []Limiter{tb, gc, lb} {
				l.Decide(c.at, c.key, c.cost)
			}
			at := c.at + time.Duration(r.Int64N(int64(pol.Per)))
			if i+1 < len(calls) {
				at = c.at + time.Duration(r.Int64N(int64(calls[i+1].at-c.at)+1))
			}
			for key := range Key(4) {
				a := tb.(Inspector).Inspect(at, key)[0].Value
				b := gc.(Inspector).Inspect(at, key)[0].Value
				q := lb.(Inspector).Inspect(at, key)[0].Value
				require.InDelta(t, a, b, 1e-6, "%v call %d key %d at %v: token-bucket vs gcra", pol, i, key, at)
				require.InDelta(t, a, float64(pol.Burst)-q, 1e-6, "%v call %d key %d at %v: token-bucket vs leaky-bucket", pol, i, key, at)
			}
		}
	}
}

// sameSlice is what require.Equal holds of two slices of comparable
// values (the same values, and nil only beside nil), without its cost: the
// hot loops of the tests call require only when it is false.
func sameSlice[T comparable](a, b []T) bool {
	return slices.Equal(a, b) && (a == nil) == (b == nil)
}
