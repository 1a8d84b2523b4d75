package traffic

import (
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRamp(t *testing.T) {
	ms := time.Millisecond
	ramp := func(c Common, start, end time.Duration, from, to Rate) *Ramp {
		c.Start, c.End = start, end
		return &Ramp{Common: c, From: from, To: to}
	}
	zero, perS := Rate{Count: 0, Per: time.Second}, func(n int64) Rate { return Rate{Count: n, Per: time.Second} }
	for _, tt := range []struct {
		name  string
		src   *Ramp
		at    []time.Duration
		names []string
	}{
		{
			// 0/s to 10/s over 2s: Λ(t) = 10t²/(2*2s) = 2.5t² (t in s), so
			// request i is at sqrt(i/2.5) s rounded up to a ns. In ns, Λ(t) >= i
			// is t² >= 4e17*i: the smallest such integer t, found by integer
			// square root (Python's math.isqrt, then +1 unless exact), is
			// 632455533 for i=1 (632455532² = 399999999329...e3 < 4e17 <=
			// 632455533²), 894427191 (sqrt(8e17) = 894427190.9999...), ...
			// Request 10 would be at exactly 2s, the end: not sent.
			name: "0/s to 10/s over 2s", src: ramp(one, 0, 2*time.Second, zero, perS(10)),
			at: []time.Duration{0, 632455533, 894427191, 1095445116, 1264911065,
				1414213563, 1549193339, 1673320054, 1788854382, 1897366597},
			names: []string{"k", "k", "k", "k", "k", "k", "k", "k", "k", "k"},
		},
		{
			// falling, 4/s to 2/s over 1s: Λ(t) = 4t - t² (t in s), so request i
			// at 2 - sqrt(4 - i) s: 2 - sqrt(3) = 0.2679491924 s and 2 - sqrt(2)
			// = 0.5857864376 s, each rounded up to a ns (the smallest t with
			// 4e9*t - t² >= 1e18*i, by integer bisection); request 3 would be at
			// 1s, the end
			name: "falling 4/s to 2/s over 1s", src: ramp(one, 0, time.Second, perS(4), perS(2)),
			at:    []time.Duration{0, 267949193, 585786438},
			names: []string{"k", "k", "k"},
		},
		{
			// from = to: Λ(t) = 3t, request i at i/3 s rounded UP (a steady
			// source rounds down: 333333333)
			name: "flat 3/s", src: ramp(one, 0, time.Second, perS(3), perS(3)),
			at:    []time.Duration{0, 333333334, 666666667},
			names: []string{"k", "k", "k"},
		},
		{
			// the same ramp as the first, from 1s, to 3 clients: request i to
			// client i mod 3
			name: "start and clients", src: ramp(clients(3), time.Second, 2*time.Second+500*ms, zero, Rate{Count: 10, Per: 2 * time.Second}),
			// 0/2s to 10/2s (5/s) over 1.5s: Λ = 5t²/3 (t in s), t = sqrt(0.6 i)
			// s rounded up: 774596670 (sqrt(0.6) = 0.77459666924), 1095445116
			// (sqrt(1.2)), 1341640787 (sqrt(1.8) = 1.34164078650); sqrt(2.4) =
			// 1.549 s is past the end (smallest 5t² >= 3e18*i, by bisection)
			at: []time.Duration{time.Second, time.Second + 774596670, time.Second + 1095445116,
				time.Second + 1341640787},
			names: []string{"c-0", "c-1", "c-2", "c-0"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, k := openOne(t, tt.src, 0)
			require.Equal(t, tt.at, ats(got))
			require.Equal(t, tt.names, keyNames(k, got))
		})
	}
}

// TestRampHandValues checks the hand-computed instants of the 0/s to 10/s
// ramp by their definition, independently of the stream: t is the smallest
// integer with t² >= 4e17*i.
func TestRampHandValues(t *testing.T) {
	for i, at := range []int64{0, 632455533, 894427191, 1095445116, 1264911065,
		1414213563, 1549193339, 1673320054, 1788854382, 1897366597} {
		need := new(big.Int).Mul(big.NewInt(4e17), big.NewInt(int64(i)))
		sq := func(x int64) *big.Int { return new(big.Int).Mul(big.NewInt(x), big.NewInt(x)) }
		require.True(t, sq(at).Cmp(need) >= 0, "request %d", i)
		if at > 0 {
			require.True(t, sq(at-1).Cmp(need) < 0, "request %d", i)
		}
	}
}

// TestRampUntil: a ramp cut by End before it reaches To keeps its slope.
func TestRampUntil(t *testing.T) {
	// 0/s to 10/s from 1s to 3s, as the first case of TestRamp shifted by 1s,
	// but cut at 2s: requests at 0, 632455533 and 894427191 after 1s
	src := &Ramp{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: time.Second, End: 2 * time.Second},
		From: Rate{Per: time.Second}, To: Rate{Count: 10, Per: time.Second}, Until: 3 * time.Second}
	got, _ := openOne(t, src, 0)
	require.Equal(t, []time.Duration{time.Second, time.Second + 632455533, time.Second + 894427191}, ats(got))
	require.Equal(t, 2*time.Second, src.End())
}

func TestRampCopiesSourceAndCost(t *testing.T) {
	src := &Ramp{Common: Common{Clients: Clients{Key: "k"}, Cost: 3, End: time.Second},
		From: Rate{Count: 2, Per: time.Second}, To: Rate{Count: 2, Per: time.Second}}
	got, _ := openOne(t, src, 6)
	require.Equal(t, []Arrival{
		{At: 0, Key: 0, Cost: 3, Source: 6},
		{At: 500 * time.Millisecond, Key: 0, Cost: 3, Source: 6},
	}, got)
}

// TestRampExact checks every instant of a long ramp against Λ evaluated in
// exact rationals: Λ(t) >= i and Λ(t-1) < i.
func TestRampExact(t *testing.T) {
	for _, src := range []*Ramp{
		// 1/s to 20000/s over 1s: 10000 requests
		{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, End: time.Second},
			From: Rate{Count: 1, Per: time.Second}, To: Rate{Count: 20000, Per: time.Second}},
		// falling, 7/ms to 3/100ms over 1.3s, from 250ms
		{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: 250 * time.Millisecond, End: 1550 * time.Millisecond},
			From: Rate{Count: 7, Per: time.Millisecond}, To: Rate{Count: 3, Per: 100 * time.Millisecond}},
		// a rate of 3 per ns: many requests share an instant
		{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, End: 1000},
			From: Rate{Per: 1}, To: Rate{Count: 3, Per: 1}},
	} {
		got, _ := openOne(t, src, 0)
		T := int64(src.End() - src.Start)
		lambda := func(t int64) *big.Rat {
			r0 := big.NewRat(src.From.Count, int64(src.From.Per))
			r1 := big.NewRat(src.To.Count, int64(src.To.Per))
			x := new(big.Rat).SetInt64(t)
			v := new(big.Rat).Mul(r0, x)
			q := new(big.Rat).Sub(r1, r0)
			q.Mul(q, x)
			q.Mul(q, x)
			q.Quo(q, new(big.Rat).SetInt64(2*T))
			return v.Add(v, q)
		}
		for i, a := range got {
			at := int64(a.At - src.Start)
			want := new(big.Rat).SetInt64(int64(i))
			require.True(t, lambda(at).Cmp(want) >= 0, "request %d at %d", i, at)
			if at > 0 {
				require.True(t, lambda(at-1).Cmp(want) < 0, "request %d at %d", i, at)
			}
		}
		// and none is missing: Λ(T-1) < len(got)
		require.True(t, lambda(T-1).Cmp(new(big.Rat).SetInt64(int64(len(got)))) < 0)
		require.NotEmpty(t, got)
	}
}

// TestRampExtremes: extreme rates and spans open and stream without a panic,
// in time order, within [Start, End).
func TestRampExtremes(t *testing.T) {
	rates := []Rate{{0, time.Second}, {1, maxDur}, {1, 1}, {maxDur.Nanoseconds(), 1}, {7, time.Minute}}
	spans := [][2]time.Duration{{0, 1}, {0, 2}, {0, maxDur}, {maxDur - 1, maxDur}, {time.Hour, 2 * time.Hour}}
	for _, from := range rates {
		for _, to := range rates[1:] {
			for _, span := range spans {
				src := &Ramp{Common: Common{Clients: Clients{N: 3, Prefix: "c"}, Cost: 1, Start: span[0], End: span[1]}, From: from, To: to}
				s, err := src.Open(NewKeys(), 0, 0)
				require.NoError(t, err)
				got, _ := drainAtMost(s, 100)
				require.NotEmpty(t, got)
				require.Equal(t, span[0], got[0].At)
				for i, a := range got {
					require.Less(t, a.At, span[1])
					if i > 0 {
						require.LessOrEqual(t, got[i-1].At, a.At)
					}
				}
			}
		}
	}
}

func TestRampInvalid(t *testing.T) {
	perS := Rate{Count: 1, Per: time.Second}
	for name, src := range map[string]Ramp{
		"no end":          {From: perS, To: perS},
		"until at start":  {Common: Common{Start: time.Second}, Until: time.Second, From: perS, To: perS},
		"to 0":            {Common: Common{End: time.Second}, From: perS, To: Rate{Per: time.Second}},
		"from negative":   {Common: Common{End: time.Second}, From: Rate{Count: -1, Per: time.Second}, To: perS},
		"per 0":           {Common: Common{End: time.Second}, From: Rate{Count: 1}, To: perS},
		"end before from": {Common: Common{Start: 2 * time.Second, End: time.Second}, From: perS, To: perS},
	} {
		src.Clients = Clients{Key: "k"}
		_, err := src.Open(NewKeys(), 0, 0)
		require.Error(t, err, name)
	}
	_, err := (&Ramp{Common: one, From: perS, To: perS}).Open(NewKeys(), 0, 0)
	require.ErrorIs(t, err, errRampNoEnd)
}

func BenchmarkRamp(b *testing.B) {
	src := &Ramp{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, End: time.Hour},
		From: Rate{Count: 1, Per: time.Second}, To: Rate{Count: 100000, Per: time.Second}}
	s, err := src.Open(NewKeys(), 0, 0)
	require.NoError(b, err)
	var a Arrival
	for b.Loop() {
		if !s.Next(&a) {
			b.Fatal("ended")
		}
	}
}
