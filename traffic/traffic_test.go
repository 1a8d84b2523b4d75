package traffic

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// plan mixes every source type, a single key inside a range, two ranges of
// one prefix and equal instants across sources.
func plan() Plan {
	return Plan{Seed: 42, Sources: []Source{
		&Times{Common: Common{Clients: Clients{Key: "client-3"}, Cost: 2},
			At: []time.Duration{500 * time.Millisecond, 0, time.Second}},
		&Burst{Common: Common{Clients: Clients{N: 3, Prefix: "client"}, Cost: 1},
			At: 100 * time.Millisecond, Count: 4, Over: 900 * time.Millisecond},
		&Steady{Common: Common{Clients: Clients{N: 10, Prefix: "client"}, Cost: 1, End: 2 * time.Second},
			Rate: Rate{Count: 7, Per: time.Second}},
		&Steady{Common: Common{Clients: Clients{Key: "bob"}, Cost: 5, Start: time.Second, End: 2 * time.Second},
			Rate: Rate{Count: 3, Per: time.Second}},
	}}
}

// TestPlanOpenTwice: each run gets its own identical copy of the traffic,
// whether the runs are read one after the other or side by side.
func TestPlanOpenTwice(t *testing.T) {
	p := plan()
	k1, s1, err := p.Open()
	require.NoError(t, err)
	first, err := drain(s1)
	require.NoError(t, err)
	// 3 times + 3 clients x 4 burst + 14 steady in [0, 2s) + 3 bob in [1s, 2s)
	require.Len(t, first, 3+12+14+3)
	for i := 1; i < len(first); i++ {
		require.LessOrEqual(t, first[i-1].At, first[i].At)
	}
	// client-0..9 and bob: client-3 is the range's, not an 11th client
	require.Equal(t, 11, k1.Len())
	require.Equal(t, "bob", k1.Name(10))

	k2, s2, err := p.Open()
	require.NoError(t, err)
	second, err := drain(s2)
	require.NoError(t, err)
	require.Equal(t, first, second)
	require.NotSame(t, k1, k2)
	require.Equal(t, k1, k2)

	// side by side: reading one run does not advance the other
	_, a, err := p.Open()
	require.NoError(t, err)
	_, b, err := p.Open()
	require.NoError(t, err)
	var x, y Arrival
	for i := range first {
		require.True(t, a.Next(&x))
		require.True(t, b.Next(&y))
		require.Equal(t, first[i], x)
		require.Equal(t, first[i], y)
	}
	require.False(t, a.Next(&x))
	require.False(t, b.Next(&y))
}

// TestPlanOpenOrder: at equal instants, sources in file order.
func TestPlanOpenOrder(t *testing.T) {
	_, s, err := plan().Open()
	require.NoError(t, err)
	got, err := drain(s)
	require.NoError(t, err)
	var at0, at1s []int32
	for _, a := range got {
		switch a.At {
		case 0:
			at0 = append(at0, a.Source)
		case time.Second:
			at1s = append(at1s, a.Source)
		}
	}
	// at 0: the times source, then steady request 0 (the burst starts at 100ms)
	require.Equal(t, []int32{0, 2}, at0)
	// at 1s: times; not the burst (its last, 100ms + 3*900ms/4, is 775ms); steady
	// request 7 (7*1s/7 = 1s), bob's first
	require.Equal(t, []int32{0, 2, 3}, at1s)
}

func TestSplitMix64(t *testing.T) {
	// Vigna's splitmix64.c seeded with 0: its first two outputs are the
	// mix of 0 and of 0x9e3779b97f4a7c15 (the state after one step)
	require.Equal(t, uint64(0xe220a8397b1dcdaf), splitmix64(0))
	require.Equal(t, uint64(0x6e789e6aa1b965f4), splitmix64(0x9e3779b97f4a7c15))
}

// TestSourceSeedPinned pins a few seeds, so that a change to the derivation
// (which changes every poisson trace and jitter draw) is noticed. The values
// come from splitmix64(splitmix64(seed) ^ (i+1)*0x9e3779b97f4a7c15), computed
// by a separate copy of that formula; too many 64-bit products to do by hand.
func TestSourceSeedPinned(t *testing.T) {
	for _, tt := range []struct {
		seed uint64
		i    int
		want uint64
	}{
		{0, 0, 0x7d91d4c3fe86f0de},
		{0, 1, 0x8249d16640921b3e},
		{1, 0, 0x29e49b199086d8d3},
		{42, 0, 0xb18d344888ae5f83},
		{42, 1, 0xd23e60f1be42fc23},
	} {
		require.Equal(t, tt.want, SourceSeed(tt.seed, tt.i), "SourceSeed(%d, %d)", tt.seed, tt.i)
	}
}

func TestSourceSeedDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for _, seed := range []uint64{0, 1, 2, 42, 1<<64 - 1} {
		for i := range 1000 {
			s := SourceSeed(seed, i)
			require.False(t, seen[s], "SourceSeed(%d, %d) repeats", seed, i)
			seen[s] = true
			// the source's seed is not the scenario's
			require.NotEqual(t, seed, s)
		}
	}
}

// seedSource records the index and seed it is opened with and sends nothing.
type seedSource struct {
	opened *[][2]uint64
	err    error
}

func (s seedSource) Declare(*Keys)      {}
func (s seedSource) End() time.Duration { return 0 }
func (s seedSource) Open(_ *Keys, index int, seed uint64) (Stream, error) {
	*s.opened = append(*s.opened, [2]uint64{uint64(index), seed})
	return &sliceStream{}, s.err
}

// TestPlanSeeds: Plan.Open gives source i SourceSeed(Seed, i), so that adding
// a source does not change another's draws.
func TestPlanSeeds(t *testing.T) {
	var two, three [][2]uint64
	_, _, err := Plan{Seed: 42, Sources: []Source{seedSource{opened: &two}, seedSource{opened: &two}}}.Open()
	require.NoError(t, err)
	_, _, err = Plan{Seed: 42, Sources: []Source{
		seedSource{opened: &three}, seedSource{opened: &three}, seedSource{opened: &three},
	}}.Open()
	require.NoError(t, err)
	require.Equal(t, [][2]uint64{{0, 0xb18d344888ae5f83}, {1, 0xd23e60f1be42fc23}}, two)
	require.Equal(t, two, three[:2]) // the first two unchanged by a third
	require.Equal(t, [2]uint64{2, SourceSeed(42, 2)}, three[2])
}

func TestPlanOpenError(t *testing.T) {
	boom := errors.New("boom")
	var opened [][2]uint64
	_, _, err := Plan{Sources: []Source{seedSource{opened: &opened}, seedSource{opened: &opened, err: boom}}}.Open()
	require.ErrorIs(t, err, boom)
}
