package traffic

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// poisson is a poisson source of rate per second with the given clients,
// from 0 to end.
func poisson(c Common, rate int64, end time.Duration) *Poisson {
	c.End = end
	return &Poisson{Common: c, Rate: Rate{Count: rate, Per: time.Second}}
}

// TestPoissonGolden pins the first arrivals of seed 42, so that a change to
// the generator (the seeding, the draws or their order) is noticed: these
// values are what the generator produced when it was written, not
// hand-computed. The instants are the same whatever the keys: gaps and
// clients come from two generators.
func TestPoissonGolden(t *testing.T) {
	at := []time.Duration{55014577, 61215502, 94147375, 465995087, 491909587, 684687927}
	for _, tt := range []struct {
		name  string
		src   *Poisson
		names []string
	}{
		{"one key", poisson(one, 10, time.Hour), []string{"k", "k", "k", "k", "k", "k"}},
		{"uniform", poisson(clients(5), 10, time.Hour), []string{"c-2", "c-1", "c-0", "c-3", "c-4", "c-2"}},
		{"zipf", func() *Poisson {
			p := poisson(clients(1000), 10, time.Hour)
			p.KeyDist, p.ZipfS = KeyZipf, 1.1
			return p
		}(), []string{"c-9", "c-77", "c-266", "c-0", "c-162", "c-2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := NewKeys()
			k.declare(func() { tt.src.Declare(k) })
			s, err := tt.src.Open(k, 0, 42)
			require.NoError(t, err)
			got, _ := drainAtMost(s, len(at))
			require.Equal(t, at, ats(got))
			require.Equal(t, tt.names, keyNames(k, got))
		})
	}
}

// draw opens src with seed and reads n arrivals.
func draw(t testing.TB, src Source, seed uint64, n int) []Arrival {
	t.Helper()
	k := NewKeys()
	k.declare(func() { src.Declare(k) })
	s, err := src.Open(k, 0, seed)
	require.NoError(t, err)
	got, _ := drainAtMost(s, n)
	require.Len(t, got, n)
	return got
}

// each opens src with seed and calls fn on its first n arrivals, without
// keeping them.
func each(t testing.TB, src Source, seed uint64, n int, fn func(a *Arrival)) {
	t.Helper()
	k := NewKeys()
	k.declare(func() { src.Declare(k) })
	s, err := src.Open(k, 0, seed)
	require.NoError(t, err)
	var a Arrival
	for i := range n {
		if !s.Next(&a) { // not require.True: it is slow in a loop
			t.Fatalf("the stream ended after %d arrivals, want %d", i, n)
		}
		fn(&a)
	}
}

// TestPoissonRate: over a million arrivals at 1000/s, the mean gap is 1ms
// within 1% (the standard error of the mean of 1e6 exponential gaps is
// 0.1%), and the instants never decrease.
func TestPoissonRate(t *testing.T) {
	const n = 1_000_000
	var last time.Duration
	decreasing := 0
	each(t, poisson(one, 1000, 0), 7, n, func(a *Arrival) {
		if a.At < last {
			decreasing++
		}
		last = a.At
	})
	require.Zero(t, decreasing)
	require.InEpsilon(t, float64(time.Millisecond), float64(last)/n, 0.01)
}

// TestPoissonDispersion: the counts of a Poisson process in disjoint
// intervals have variance equal to their mean. At 1000/s over 1000 intervals
// of 1s, the sample variance / mean has a standard error of about
// sqrt(2/999) = 4.5%: 15% is more than three of them.
func TestPoissonDispersion(t *testing.T) {
	const intervals = 1000
	src := poisson(one, 1000, intervals*time.Second)
	k := NewKeys()
	k.declare(func() { src.Declare(k) })
	s, err := src.Open(k, 0, 11)
	require.NoError(t, err)
	counts := make([]float64, intervals)
	var a Arrival
	for s.Next(&a) {
		counts[a.At/time.Second]++
	}
	var sum, sq float64
	for _, c := range counts {
		sum += c
	}
	mean := sum / intervals
	for _, c := range counts {
		sq += (c - mean) * (c - mean)
	}
	variance := sq / (intervals - 1)
	require.InEpsilon(t, 1000, mean, 0.01)
	require.InEpsilon(t, 1, variance/mean, 0.15)
}

// TestPoissonUniformKeys: 1e6 arrivals over 10 clients give each 1e5 within
// 2% (the standard deviation of a count is sqrt(1e6*0.1*0.9) = 300, 0.3%).
func TestPoissonUniformKeys(t *testing.T) {
	src := poisson(clients(10), 1000, 0)
	src.KeyDist = KeyUniform
	counts := make([]float64, 10)
	each(t, src, 3, 1_000_000, func(a *Arrival) { counts[a.Key]++ })
	for c, n := range counts {
		require.InEpsilon(t, 100_000, n, 0.02, "client %d", c)
	}
}

// TestPoissonZipfKeys: with s = 1.1 over 1000 keys, rank k (client k) has
// probability p_k = (k+1)^-s / H, H = sum over j = 1..1000 of j^-s (about
// 5.6). Over 1e6 draws the counts of ranks 0..9 are within 3% of 1e6*p_k:
// rank 9, the rarest checked, expects about 14250, with a standard deviation
// of 119 (0.8%).
func TestPoissonZipfKeys(t *testing.T) {
	const n, keys, s = 1_000_000, 1000, 1.1
	src := poisson(clients(keys), 1000, 0)
	src.KeyDist, src.ZipfS = KeyZipf, s
	counts := make([]float64, keys)
	each(t, src, 5, n, func(a *Arrival) { counts[a.Key]++ })
	var h float64
	for j := 1; j <= keys; j++ {
		h += math.Pow(float64(j), -s)
	}
	for k := range 10 {
		want := n * math.Pow(float64(k+1), -s) / h
		require.InEpsilon(t, want, counts[k], 0.03, "rank %d", k)
	}
	// the heaviest first: rank 0 is drawn more than rank 1, more than rank 9
	require.Greater(t, counts[0], counts[1])
	require.Greater(t, counts[1], counts[9])
}

// TestPoissonZipfMemory: a zipf over a million keys holds no table of the
// keys: opening the source and drawing 100,000 arrivals allocates a few
// small objects (the stream, two generators, the Zipf sampler) and the
// sampler's table of ranges of u (256 KiB, whatever the key count).
func TestPoissonZipfMemory(t *testing.T) {
	src := poisson(clients(1_000_000), 1000, 0)
	src.KeyDist, src.ZipfS = KeyZipf, 1.1
	k := NewKeys()
	k.declare(func() { src.Declare(k) })
	k.Range("c", 1_000_000) // resolved once, outside the measurement
	run := func() {
		s, err := src.Open(k, 0, 9)
		require.NoError(t, err)
		var a Arrival
		for range 100_000 {
			require.True(t, s.Next(&a))
		}
	}
	allocs := testing.AllocsPerRun(2, run)
	require.LessOrEqual(t, allocs, 10.0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run()
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4096+4<<zipfRangeBits))
}

// TestPoissonStartEnd: arrivals fall in [Start, End), the first one gap after
// Start.
func TestPoissonStartEnd(t *testing.T) {
	src := &Poisson{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: 10 * time.Second, End: 20 * time.Second},
		Rate: Rate{Count: 100, Per: time.Second}}
	got, _ := openOne(t, src, 0)
	require.InDelta(t, 1000, len(got), 150) // 100/s for 10s: 1000, sd 32
	for _, a := range got {
		require.GreaterOrEqual(t, a.At, 10*time.Second)
		require.Less(t, a.At, 20*time.Second)
	}
	require.Equal(t, 20*time.Second, src.End())
	require.Equal(t, time.Duration(0), (&Poisson{}).End())
}

func TestPoissonCopiesSourceAndCost(t *testing.T) {
	src := &Poisson{Common: Common{Clients: Clients{Key: "k"}, Cost: 9, End: time.Second}, Rate: Rate{Count: 10, Per: time.Second}}
	got, _ := openOne(t, src, 3)
	require.NotEmpty(t, got)
	for _, a := range got {
		require.Equal(t, int64(9), a.Cost)
		require.Equal(t, int32(3), a.Source)
	}
}

// TestPoissonSeeded: one seed, one trace; another seed, another trace.
func TestPoissonSeeded(t *testing.T) {
	src := poisson(clients(50), 100, 0)
	a, b, c := draw(t, src, 1, 1000), draw(t, src, 1, 1000), draw(t, src, 2, 1000)
	require.Equal(t, a, b)
	require.NotEqual(t, ats(a), ats(c))
}

// TestPoissonNearLimits: without an end, a poisson source stops before the
// largest time.Duration instead of overflowing; a rate of 0 sends nothing.
func TestPoissonNearLimits(t *testing.T) {
	// 1 per 2^61 ns: the gaps average a quarter of the time left
	src := &Poisson{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: maxDur - 1<<62}, Rate: Rate{Count: 1, Per: 1 << 61}}
	for seed := range uint64(50) {
		s, err := src.Open(NewKeys(), 0, seed)
		require.NoError(t, err)
		got, more := drainAtMost(s, 1000)
		require.False(t, more)
		for _, a := range got {
			require.GreaterOrEqual(t, a.At, src.Start)
		}
	}
	// 1 per max: the first gap alone overflows more often than not
	src = &Poisson{Common: Common{Clients: Clients{Key: "k"}, Cost: 1}, Rate: Rate{Count: 1, Per: maxDur}}
	for seed := range uint64(50) {
		s, err := src.Open(NewKeys(), 0, seed)
		require.NoError(t, err)
		_, more := drainAtMost(s, 1000)
		require.False(t, more)
	}
	src = &Poisson{Common: Common{Clients: Clients{Key: "k"}, Cost: 1}, Rate: Rate{Per: time.Second}}
	got, _ := openOne(t, src, 0)
	require.Empty(t, got)
}

func TestPoissonInvalid(t *testing.T) {
	for _, src := range []Poisson{
		{Common: clients(3), Rate: Rate{1, time.Second}, KeyDist: KeyZipf, ZipfS: 1},
		{Common: clients(3), Rate: Rate{1, time.Second}, KeyDist: KeyZipf, ZipfS: math.NaN()},
		{Common: clients(3), Rate: Rate{1, time.Second}, KeyDist: KeyZipf, ZipfS: math.Inf(1)},
		{Common: clients(3), Rate: Rate{1, time.Second}, KeyDist: "pareto"},
	} {
		_, err := src.Open(NewKeys(), 0, 0)
		require.Error(t, err)
	}
	// a zipf over one client is that client
	src := &Poisson{Common: Common{Clients: Clients{N: 1, Prefix: "c"}, Cost: 1, End: time.Second},
		Rate: Rate{Count: 100, Per: time.Second}, KeyDist: KeyZipf, ZipfS: 2}
	got, k := openOne(t, src, 0)
	require.NotEmpty(t, got)
	for _, name := range keyNames(k, got) {
		require.Equal(t, "c-0", name)
	}
}

// TestPoissonInPlan: a poisson source's arrivals depend only on its own
// configuration and its seed SourceSeed(plan seed, its seed name): sources
// added after it, of any kind, change nothing of it, and with seed names
// neither do sources added before it.
func TestPoissonInPlan(t *testing.T) {
	p := &Poisson{Common: Common{Clients: Clients{N: 20, Prefix: "client"}, Cost: 1, End: 10 * time.Second},
		Rate: Rate{Count: 50, Per: time.Second}, KeyDist: KeyZipf, ZipfS: 1.3}
	only := func(plan Plan, index int32) []Arrival {
		keys, s, err := plan.Open()
		require.NoError(t, err)
		all, err := drain(s)
		require.NoError(t, err)
		var out []Arrival
		for _, a := range all {
			if a.Source == index {
				a.Key -= keys.Range("client", 20) // relative to client-0
				out = append(out, a)
			}
		}
		return out
	}
	alone := only(Plan{Seed: 5, Sources: []Source{p}}, 0)
	require.NotEmpty(t, alone)
	withOthers := only(Plan{Seed: 5, Sources: []Source{p,
		&Steady{Common: Common{Clients: Clients{Key: "bob"}, Cost: 1, End: 10 * time.Second}, Rate: Rate{Count: 7, Per: time.Second}},
		&Poisson{Common: Common{Clients: Clients{N: 20, Prefix: "client"}, Cost: 1, End: 10 * time.Second}, Rate: Rate{Count: 50, Per: time.Second}},
	}}, 0)
	require.Equal(t, alone, withOthers)
	// the same source opened directly with its seed gives the same trace
	named := func(srcs []Source, names []string, index int32) []Arrival {
		return only(Plan{Seed: 5, Sources: srcs, SeedNames: names}, index)
	}
	steady := &Steady{Common: Common{Clients: Clients{Key: "bob"}, Cost: 1, End: 10 * time.Second}, Rate: Rate{Count: 7, Per: time.Second}}
	first := named([]Source{p}, []string{"poisson:c#0"}, 0)
	second := named([]Source{steady, p}, []string{"steady:bob#0", "poisson:c#0"}, 1)
	for i := range second {
		second[i].Source = 0
	}
	require.Equal(t, first, second, "a source added before a named one leaves its draws alone")
	direct := draw(t, p, SourceSeed(5, "#0"), len(alone))
	require.Equal(t, alone, direct)
}
