package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

func realAlg(name string, p algorithms.Policy) Algorithm {
	return Algorithm{Name: name, Label: name, Params: algorithms.Params{Policy: p}}
}

func i64p(n int64) *int64 { return &n }

// The fixed-window double burst of docs/algorithms.md, worked example 1, held
// against the sliding log: the fixed window admits the second ten, which
// the log rejects. One key, no retries: the first of them is the one
// first divergence, the nine after it follow it.
func TestBaselineDoubleBurst(t *testing.T) {
	t.Parallel()
	var at []time.Duration
	for i := range 10 {
		at = append(at, 900*ms+time.Duration(i)*10*ms)
	}
	for i := range 10 {
		at = append(at, 1000*ms+time.Duration(i)*10*ms)
	}
	p := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	cfg := baseConfig(timesPlan(at...), realAlg("fixed-window", p), realAlg("sliding-log", p))
	cfg.Duration = 3 * time.Second
	cfg.Baseline = "sliding-log"
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Nil(t, rep.Results[1].Baseline, "the baseline row is not held against itself")
	require.Equal(t, &BaselineResult{Label: "sliding-log", Compared: 20, Differs: 10,
		WronglyAllowed: 10, WronglyLimited: 0, FirstDivergences: i64p(1)}, rep.Results[0].Baseline)
}

// Worked by hand, L = 2 per 1s, one key, sliding-window against
// sliding-log (the counter's rule: prev*(W-e) + (cur+1)*W <= L*W):
//
//	   0ms  both admit (counter: 0 + 1000 <= 2000; log: 0 + 1 <= 2)
//	 900ms  both admit (counter: 0 + 2000; log: 1 + 1)
//	1500ms  both admit (counter: prev 2, e 500: 1000 + 1000; log: only 900 counts)
//	1600ms  both reject (counter: 800 + 2000; log: 900, 1500)
//	1950ms  counter rejects (100 + 2000 > 2000), log admits (900 expired):
//	        wrongly limited, the first divergence
//	2100ms  counter admits (prev 1, e 100: 900 + 1000), log rejects (1500,
//	        1950): wrongly allowed, but only because 1950 differed: a cascade
//	  10s   both admit; the key has been idle for more than 2s, the longest
//	        either remembers (the counter's two windows): it starts afresh
//
// and the same six again from 20s: a second first divergence.
func TestBaselineHandWorked(t *testing.T) {
	t.Parallel()
	six := []time.Duration{0, 900 * ms, 1500 * ms, 1600 * ms, 1950 * ms, 2100 * ms}
	at := slices.Clone(six)
	at = append(at, 10*time.Second)
	for _, x := range six {
		at = append(at, 20*time.Second+x)
	}
	p := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := baseConfig(timesPlan(at...), realAlg("sliding-log", p), realAlg("sliding-window", p))
	cfg.Duration = 30 * time.Second
	cfg.Baseline = "sliding-log"
	rec := &recorder{}
	cfg.Observe = func(i int) Observer {
		if i == 1 {
			return rec
		}
		return nil
	}
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, &BaselineResult{Label: "sliding-log", Compared: 13, Differs: 4,
		WronglyAllowed: 2, WronglyLimited: 2, FirstDivergences: i64p(2)}, rep.Results[1].Baseline)
	// the caller's observer still sees every decision
	require.Len(t, rec.got, 13)
	require.Equal(t, algorithms.Reject, rec.got[4].Verdict)
	require.Equal(t, algorithms.Accept, rec.got[5].Verdict)
}

func TestBaselineUnknownLabel(t *testing.T) {
	t.Parallel()
	p := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := baseConfig(timesPlan(0), realAlg("sliding-log", p))
	cfg.Baseline = "gcra"
	_, err := Run(cfg)
	require.ErrorContains(t, err, `baseline "gcra" is not a row`)
}

// randomTraffic is n requests over keys sources (one key each, cost 1 or
// 2), at random whole milliseconds (so that many share an instant) over
// span, and the merged order the engine processes them in: by time, then
// by source.
type arrival struct {
	at   time.Duration
	src  int
	key  string
	cost int64
}

func randomTraffic(rng *rand.Rand, keys, n int, span time.Duration) (traffic.Plan, []arrival) {
	var plan traffic.Plan
	var all []arrival
	for k := range keys {
		key := fmt.Sprintf("k%d", k)
		cost := int64(1 + rng.IntN(2))
		m := n / keys
		at := make([]time.Duration, m)
		for i := range at {
			at[i] = time.Duration(rng.Int64N(int64(span/ms))) * ms
		}
		slices.Sort(at)
		plan.Sources = append(plan.Sources, &traffic.Times{
			Common: traffic.Common{Clients: traffic.Clients{Key: key}, Cost: cost}, At: at})
		for _, x := range at {
			all = append(all, arrival{x, k, key, cost})
		}
	}
	slices.SortStableFunc(all, func(a, b arrival) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.src - b.src
	})
	return plan, all
}

// directDecisions decides the arrivals with a fresh limiter, one after the
// other: what a row does without retries.
func directDecisions(t *testing.T, name string, p algorithms.Params, all []arrival) []bool {
	lim, err := algorithms.New(name, p)
	require.NoError(t, err)
	ids := map[string]algorithms.Key{}
	out := make([]bool, len(all))
	for i, a := range all {
		id, ok := ids[a.key]
		if !ok {
			id = algorithms.Key(len(ids))
			ids[a.key] = id
		}
		v := lim.Decide(a.at, id, a.cost).Verdict
		out[i] = v == algorithms.Accept || v == algorithms.Delay
	}
	return out
}

// directCompare counts by brute force what BaselineResult counts, first
// divergences with the rule written out once more: a difference on a key
// whose earlier requests, since it was last idle for horizon, all agreed.
func directCompare(label string, all []arrival, base, row []bool, horizon time.Duration) BaselineResult {
	res := BaselineResult{Label: label, Compared: int64(len(all))}
	var first int64
	for i, a := range all {
		if base[i] == row[i] {
			continue
		}
		res.Differs++
		if row[i] {
			res.WronglyAllowed++
		} else {
			res.WronglyLimited++
		}
		// walk back over the key's earlier requests until a gap of horizon
		primary, next := true, a.at
		for j := i - 1; j >= 0; j-- {
			if all[j].key != a.key {
				continue
			}
			if next-all[j].at >= horizon {
				break
			}
			next = all[j].at
			if base[j] != row[j] {
				primary = false
				break
			}
		}
		if primary {
			first++
		}
	}
	res.FirstDivergences = &first
	return res
}

// Random traffic through pairs of algorithms: the engine's counts equal a
// direct comparison of the two decision lists, decided outside the engine.
// The feed's batches are made small so that rows run far apart and the
// pairs hold and match many chunks.
func TestBaselineRandomAgainstDirect(t *testing.T) {
	t.Parallel()
	shape := feedShape{64, 4}

	pairs := [][2]string{
		{"sliding-log", "sliding-window"},
		{"sliding-log", "fixed-window"},
		{"sliding-log", "token-bucket"},
		{"gcra", "nginx"},
		{"fixed-window", "sliding-window"},
	}
	rng := rand.New(rand.NewPCG(18, 2026))
	var differs, first int64
	defer func() {
		// the cases are not all trivial: rows differed, and not only first
		if !t.Failed() {
			require.Greater(t, first, int64(0))
			require.Greater(t, differs, first)
		}
	}()
	for trial := range 30 {
		pr := pairs[trial%len(pairs)]
		rate := int64(1 + rng.IntN(6))
		per := []time.Duration{time.Second, time.Minute}[rng.IntN(2)]
		if pr[1] == "nginx" {
			per = time.Second
		}
		p := algorithms.Params{Policy: algorithms.Policy{Rate: rate, Per: per, Burst: rate}}
		keys := 1 + rng.IntN(4)
		n := 500 + rng.IntN(3000)
		span := time.Duration(1+rng.IntN(40)) * per
		plan, all := randomTraffic(rng, keys, n, span)
		t.Run(fmt.Sprintf("%d-%s-vs-%s-%d/%v", trial, pr[1], pr[0], rate, per), func(t *testing.T) {
			a := Algorithm{Name: pr[0], Label: "base", Params: p}
			b := Algorithm{Name: pr[1], Label: "row", Params: p}
			cfg := baseConfig(plan, b, a, b)
			cfg.Algorithms[2].Label = "row2"
			cfg.Duration = 0
			cfg.Baseline = "base"
			rep, err := runWith(cfg, shape)
			require.NoError(t, err)
			base := directDecisions(t, pr[0], p, all)
			row := directDecisions(t, pr[1], p, all)
			ha, _ := memoryOf(&a)
			hb, _ := memoryOf(&b)
			want := directCompare("base", all, base, row, max(ha, hb))
			require.Equal(t, &want, rep.Results[0].Baseline)
			require.Equal(t, &want, rep.Results[2].Baseline)
			differs, first = differs+want.Differs, first+*want.FirstDivergences
			require.Nil(t, rep.Results[1].Baseline)
		})
	}
}

// With retries the rows' attempts do not line up, but their first
// attempts do: the counts equal a comparison of the first attempts each
// row's observer saw, and first divergences are not defined.
func TestBaselineWithRetriesAgainstObserved(t *testing.T) {
	t.Parallel()
	shape := feedShape{32, 2}
	rng := rand.New(rand.NewPCG(7, 18))
	plan, _ := randomTraffic(rng, 3, 2000, 20*time.Second)
	p := algorithms.Params{Policy: algorithms.Policy{Rate: 3, Per: time.Second, Burst: 3}}
	cfg := baseConfig(plan, Algorithm{Name: "sliding-log", Label: "log", Params: p},
		Algorithm{Name: "sliding-window", Label: "counter", Params: p})
	cfg.Duration = 0
	cfg.Retries = []traffic.RetryPolicy{{Policy: "fixed", Delay: 150 * ms, MaxAttempts: 3},
		{Policy: "fixed", Delay: 150 * ms, MaxAttempts: 3}, {Policy: "fixed", Delay: 150 * ms, MaxAttempts: 3}}
	cfg.Baseline = "log"
	recs := []*recorder{{}, {}}
	cfg.Observe = func(i int) Observer { return recs[i] }
	rep, err := runWith(cfg, shape)
	require.NoError(t, err)
	firsts := func(r *recorder) (out []Decision) {
		for _, d := range r.got {
			if d.Attempt == 1 {
				out = append(out, d)
			}
		}
		return out
	}
	b, r := firsts(recs[0]), firsts(recs[1])
	require.Len(t, r, len(b))
	want := BaselineResult{Label: "log", Compared: int64(len(b))}
	for i := range b {
		require.Equal(t, b[i].Time, r[i].Time)
		ba, ra := b[i].Verdict != algorithms.Reject, r[i].Verdict != algorithms.Reject
		if ba != ra {
			want.Differs++
			if ra {
				want.WronglyAllowed++
			} else {
				want.WronglyLimited++
			}
		}
	}
	require.Greater(t, rep.Results[1].Attempts, rep.Results[1].Offered, "some retried")
	require.Greater(t, want.Differs, int64(0))
	require.Equal(t, &want, rep.Results[1].Baseline)
}

// The pairs hold no more than the feed's ring lets rows get apart (and a
// chunk), however many requests: memory does not grow with them.
func TestBaselineMemoryBounded(t *testing.T) {
	t.Parallel()
	shape := feedShape{128, 2}
	rng := rand.New(rand.NewPCG(3, 4))
	plan, all := randomTraffic(rng, 4, 200000, 10*time.Minute)
	p := algorithms.Params{Policy: algorithms.Policy{Rate: 50, Per: time.Second, Burst: 50}}
	cfg := baseConfig(plan, Algorithm{Name: "sliding-log", Label: "log", Params: p},
		Algorithm{Name: "fixed-window", Label: "fw", Params: p},
		Algorithm{Name: "sliding-window", Label: "sw", Params: p})
	cfg.Duration = 0
	cmp, err := newBaselineCmp(&cfg, "log")
	require.NoError(t, err)
	// run as Run does, keeping the comparator to look at
	cfg.Baseline = ""
	cfg.Observe = func(i int) Observer { return cmp.observer(i, nil) }
	_, err = runWith(cfg, shape)
	require.NoError(t, err)
	res, err := cmp.finish()
	require.NoError(t, err)
	require.Equal(t, int64(len(all)), res[1].Compared)
	bound := (shape.slots+1)*shape.batch + baselineChunk
	for _, i := range []int{1, 2} {
		t.Logf("row %d: at most %d pending (bound %d)", i, cmp.pairs[i].peak, bound)
		require.LessOrEqual(t, cmp.pairs[i].peak, bound, "row %d", i)
	}
}
