package cluster

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
)

// One skew value v spreads the nodes' clocks evenly over [-v, v]: 4 nodes
// and 3ms give -3, -1, 1 and 3 ms (2v*i/(N-1) = 2ms*i); one node gets 0.
func TestSpreadSkew(t *testing.T) {
	ms := time.Millisecond
	require.Equal(t, []time.Duration{-3 * ms, -1 * ms, 1 * ms, 3 * ms}, SpreadSkew(3*ms, 4))
	require.Equal(t, []time.Duration{0}, SpreadSkew(3*ms, 1))
	// 2ns over 3 nodes: -2 + 4*i/2 = -2, 0, 2
	require.Equal(t, []time.Duration{-2, 0, 2}, SpreadSkew(2, 3))
}

// split's shares add up to the whole: 10 over 4 nodes is 3, 3, 2, 2; 1
// over 2 leaves the second node nothing.
func TestShare(t *testing.T) {
	var sum int64
	for i := range 4 {
		sum += Share(10, i, 4)
	}
	require.Equal(t, int64(10), sum)
	require.Equal(t, []int64{3, 3, 2, 2}, []int64{Share(10, 0, 4), Share(10, 1, 4), Share(10, 2, 4), Share(10, 3, 4)})
	require.Equal(t, []int64{1, 0}, []int64{Share(1, 0, 2), Share(1, 1, 2)})
}

// lease's default K is max(1, B/(2N)): 40 over 4 nodes is 5; 7 over 4 is
// at least 1.
func TestDefaultLease(t *testing.T) {
	require.Equal(t, int64(5), DefaultLease(40, 4))
	require.Equal(t, int64(1), DefaultLease(7, 4))
}

// Which algorithm takes which mode (docs/cluster.md): x-time-rate only the
// nodes' own; sync for the window counters, lease for the buckets.
func TestModesOf(t *testing.T) {
	require.Equal(t, []Mode{Local, Split}, ModesOf("x-time-rate"))
	require.Equal(t, []Mode{Local, Split, Central, Racy, Sync, Global}, ModesOf("fixed-window"))
	require.Equal(t, []Mode{Local, Split, Central, Racy, Lease, Global}, ModesOf("gcra"))
	require.Equal(t, []Mode{Local, Split, Central, Racy, Global}, ModesOf("nginx"))
	require.Equal(t, []Mode{Local, Split}, ModesOf("haproxy"))
	require.True(t, IncrWrites("sliding-window"))
	require.False(t, IncrWrites("gcra"))
	require.Equal(t, []Mode{Local, Split, Central, Racy, Global}, ModesOf("leaky-bucket"))
}

// A row with no rule over a state held apart (algorithms.NewTable refuses
// it: the libraries' and vendors' rows) takes only the modes whose state
// stays on the nodes: local, split, and sync for Cloudflare's counters,
// which a node keeps itself. The others take the store's modes too.
func TestModesOfFollowTheStore(t *testing.T) {
	onNodes := []Mode{Local, Split, Sync}
	p := algorithms.Params{Policy: algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}}
	infos := slices.Concat(algorithms.All(), algorithms.WithBackend(), algorithms.OptIn())
	for _, a := range infos {
		if _, err := algorithms.New(a.Name, p); err != nil {
			continue // needs options of its own (checked below)
		}
		_, err := algorithms.NewTable(a.Name, p)
		for _, m := range ModesOf(a.Name) {
			if !slices.Contains(onNodes, m) {
				require.NoError(t, err, "%s takes %s, which keeps its state in the store", a.Name, m)
			}
		}
	}
	// the shedding rows need partitions or critical values: no store
	require.Equal(t, []Mode{Local, Split}, ModesOf("netflix-partitioned"))
	require.Equal(t, []Mode{Local, Split}, ModesOf("stripe-fleet-shedder"))
	require.Equal(t, []Mode{Local, Split}, ModesOf("aws-usage-plan"))
	require.Equal(t, []Mode{Local, Split, Sync}, ModesOf("cloudflare-rate-limit"))
}

// Defaults fill only what the row left unset, and only the knobs its mode
// reads: B=40 on 4 nodes leases max(1, 40/8) = 5; the ttl is the period.
func TestCoordinationWithDefaults(t *testing.T) {
	sec := time.Second
	require.Equal(t, Coordination{Mode: Central, Clock: StoreClock}, Coordination{}.WithDefaults(40, sec, 4))
	require.Equal(t, Coordination{Mode: Central, Clock: NodeClock}, Coordination{Mode: Central, Clock: NodeClock}.WithDefaults(40, sec, 4))
	require.Equal(t, Coordination{Mode: Racy, Write: WriteSet}, Coordination{Mode: Racy}.WithDefaults(40, sec, 4))
	require.Equal(t, Coordination{Mode: Lease, Lease: 5, LeaseTTL: sec}, Coordination{Mode: Lease}.WithDefaults(40, sec, 4))
	require.Equal(t, Coordination{Mode: Lease, Lease: 3, LeaseTTL: 2 * sec}, Coordination{Mode: Lease, Lease: 3, LeaseTTL: 2 * sec}.WithDefaults(40, sec, 4))
	require.Equal(t, Coordination{Mode: Sync, Sync: 100 * time.Millisecond}, Coordination{Mode: Sync, Sync: 100 * time.Millisecond}.WithDefaults(40, sec, 4))
	require.Equal(t, Coordination{Mode: Global, Sync: 500 * time.Microsecond}, Coordination{Mode: Global}.WithDefaults(40, sec, 4))
	// no nodes yet (an invalid section, reported elsewhere): K stays unset
	require.Equal(t, Coordination{Mode: Lease, LeaseTTL: sec}, Coordination{Mode: Lease}.WithDefaults(40, sec, 0))
}

// A fault's end saturates at the largest instant.
func TestFaultEnd(t *testing.T) {
	require.Equal(t, 15*time.Second, Fault{At: 10 * time.Second, For: 5 * time.Second}.End())
	require.Equal(t, time.Duration(math.MaxInt64), Fault{At: math.MaxInt64 - 1, For: 5}.End())
}

// AllDown: 2 nodes; node 0 down [10, 30) ms, node 1 down [20, 40) ms: both
// down over [20, 30), caused by fault 1 (node 1, the last to go). Node 1
// down again [30, 50): node 0 comes back at 30 as node 1's second fault
// starts there, and ends come first at one instant, so no outage at 30.
// One node down twice at once counts once.
func TestAllDown(t *testing.T) {
	ms := time.Millisecond
	nd := func(node int, at, f time.Duration) Fault {
		return Fault{Type: NodeDown, Node: node, At: at * ms, For: f * ms}
	}
	require.Equal(t, []Outage{{From: 20 * ms, To: 30 * ms, Cause: 1}},
		AllDown(2, []Fault{nd(0, 10, 20), nd(1, 20, 20), {Type: StoreDown, At: 0, For: time.Second}}))
	require.Empty(t, AllDown(2, []Fault{nd(0, 10, 20), nd(1, 30, 20)}))
	require.Empty(t, AllDown(2, []Fault{nd(0, 10, 20), nd(0, 15, 20)}))
	require.Equal(t, []Outage{{From: 10 * ms, To: 30 * ms, Cause: 0}}, AllDown(1, []Fault{nd(0, 10, 20)}))
	require.Empty(t, AllDown(0, []Fault{nd(0, 10, 20)}))
}
