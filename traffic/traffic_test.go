package traffic

import (
	"errors"
	"fmt"
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
// (which changes every poisson trace) is noticed. The values come from
// splitmix64(splitmix64(seed) ^ fnv1a64(name)), computed by a separate
// implementation of both (in Python); too many 64-bit products to do by hand.
func TestSourceSeedPinned(t *testing.T) {
	for _, tt := range []struct {
		seed uint64
		name string
		want uint64
	}{
		{0, "#0", 0x3e0c9bad22f45d8d},
		{0, "#1", 0xb51a03048ec01485},
		{1, "#0", 0xb10d62eeaf94e967},
		{42, "#0", 0xd0e380c78d9f1539},
		{42, "#1", 0x48d585d6efd94379},
		{42, "poisson:clients=client*20#0", 0xdcc53fd10793fe76},
	} {
		require.Equal(t, tt.want, SourceSeed(tt.seed, tt.name), "SourceSeed(%d, %q)", tt.seed, tt.name)
	}
}

func TestSourceSeedDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for _, seed := range []uint64{0, 1, 2, 42, 1<<64 - 1} {
		for i := range 1000 {
			s := SourceSeed(seed, fmt.Sprint("steady:key=k#", i))
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

// TestPlanSeeds: Plan.Open gives each source SourceSeed(Seed, its seed
// name), by index when it has none, so that adding a source, before or
// after, does not change another's draws.
func TestPlanSeeds(t *testing.T) {
	var two, three, named [][2]uint64
	_, _, err := Plan{Seed: 42, Sources: []Source{seedSource{opened: &two}, seedSource{opened: &two}}}.Open()
	require.NoError(t, err)
	_, _, err = Plan{Seed: 42, Sources: []Source{
		seedSource{opened: &three}, seedSource{opened: &three}, seedSource{opened: &three},
	}}.Open()
	require.NoError(t, err)
	require.Equal(t, [][2]uint64{{0, 0xd0e380c78d9f1539}, {1, 0x48d585d6efd94379}}, two)
	require.Equal(t, two, three[:2]) // the first two unchanged by a third
	require.Equal(t, [2]uint64{2, SourceSeed(42, "#2")}, three[2])
	// With names, a source inserted before keeps the others' seeds.
	_, _, err = Plan{Seed: 42, Sources: []Source{seedSource{opened: &named}, seedSource{opened: &named}},
		SeedNames: []string{"new#0", "#0"}}.Open()
	require.NoError(t, err)
	require.Equal(t, two[0][1], named[1][1], "the source named #0 keeps its seed at index 1")
}

func TestPlanOpenError(t *testing.T) {
	boom := errors.New("boom")
	var opened [][2]uint64
	_, _, err := Plan{Sources: []Source{seedSource{opened: &opened}, seedSource{opened: &opened, err: boom}}}.Open()
	require.ErrorIs(t, err, boom)
}
