package algorithms

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shedRow is one call of a priority-shedding table test: value is the id
// of the request's attribute value (NoKey: it carries none).
type shedRow struct {
	at    time.Duration
	value Key
	cost  int64
	want  Verdict
	retry time.Duration
}

func checkShedRows(t *testing.T, l Limiter, rows []shedRow) {
	t.Helper()
	at := l.(Attributed)
	require.True(t, at.ByAttributes())
	for i, r := range rows {
		d := at.DecideAttrs(r.at, []Key{0, r.value}, r.cost)
		require.Equal(t, Decision{Verdict: r.want, RetryAfter: r.retry}, d, "row %d: t=%v value=%d cost=%d", i, r.at, r.value, r.cost)
	}
}

func shedRepeat(n int, r shedRow) []shedRow {
	rows := make([]shedRow, n)
	for i := range rows {
		rows[i] = r
	}
	return rows
}

// netflixParams is max 10 in flight, live 0.9 (value 0) and batch 0.1
// (value 1), for a service time of 1s.
func netflixParams() Params {
	return Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}, Max: 10, Service: time.Second, ClassBy: 1,
		Partitions: []Class{{Name: "live", Value: 0, Share: 0.9}, {Name: "batch", Value: 1, Share: 0.1}}}
}

// TestNetflixPartitionedTable is AbstractPartitionedLimiter's rule by hand:
// live's limit ceil(10*0.9) = 9, batch's ceil(10*0.1) = 1, the unknown
// partition's 0.
func TestNetflixPartitionedTable(t *testing.T) {
	const live, batch, other = 0, 1, 2
	ms := time.Millisecond
	var rows []shedRow
	// total under 10: batch borrows the whole limit
	rows = append(rows, shedRepeat(10, shedRow{0, batch, 1, Accept, 0})...)
	// total full: live keeps its 9 however busy batch is
	rows = append(rows, shedRepeat(9, shedRow{500 * ms, live, 1, Accept, 0})...)
	rows = append(rows,
		// live at 9 of 9, total 19: the total is at 9 when the ten
		// batch complete at 1s (500ms), live's own at 1.5s
		shedRow{500 * ms, live, 1, Reject, 500 * ms},
		shedRow{500 * ms, batch, 1, Reject, 500 * ms},
		shedRow{500 * ms, other, 1, Reject, 500 * ms},
		shedRow{500 * ms, NoKey, 1, Reject, 500 * ms},
		// at 1s: total 9; the unknown partition fits the total only
		shedRow{time.Second, other, 1, Accept, 0},
		// total 10: batch keeps its 1
		shedRow{time.Second, batch, 1, Accept, 0},
		// batch at 1 of 1, total 11: two live complete at 1.5s
		shedRow{time.Second, batch, 1, Reject, 500 * ms},
		// a cost of 2 of the unknown partition: total at 8 after three live
		shedRow{time.Second, other, 2, Reject, 500 * ms},
		// above max: never
		shedRow{time.Second, batch, 11, Reject, Never},
		// at 1.5s the nine live complete: total 2
		shedRow{1500 * ms, NoKey, 8, Accept, 0},
	)
	checkShedRows(t, mustLimiter(t, "netflix-partitioned", netflixParams()), rows)
}

// TestNetflixPartitionLimitInDoubles: the partition's limit is Java's
// Math.ceil of the double product: 100 * 0.07 is 7.000000000000001 in
// doubles, so the partition holds 8, not 7; and 0 gets at least 1.
func TestNetflixPartitionLimitInDoubles(t *testing.T) {
	p := netflixParams()
	p.Max = 100
	p.Partitions = []Class{{Name: "small", Value: 0, Share: 0.07}, {Name: "none", Value: 1, Share: 0}}
	l := mustLimiter(t, "netflix-partitioned", p)
	rows := shedRepeat(100, shedRow{0, NoKey, 1, Accept, 0})
	rows = append(rows, shedRepeat(8, shedRow{0, 0, 1, Accept, 0})...)
	rows = append(rows, shedRow{0, 0, 1, Reject, time.Second}, shedRow{0, 1, 1, Accept, 0}, shedRow{0, 1, 1, Reject, time.Second})
	checkShedRows(t, l, rows)
}

// TestNetflixPartitionsSum: the builder refuses percents above 1.0 in
// all, summed in doubles in order: 0.33 + 0.56 + 0.11 is
// 1.0000000000000002, 0.11 + 0.56 + 0.33 is 1.
func TestNetflixPartitionsSum(t *testing.T) {
	p := netflixParams()
	p.Partitions = []Class{{Name: "a", Value: 0, Share: 0.33}, {Name: "b", Value: 1, Share: 0.56}, {Name: "c", Value: 2, Share: 0.11}}
	_, err := New("netflix-partitioned", p)
	require.ErrorContains(t, err, "at most 1.0")
	p.Partitions = []Class{{Name: "c", Value: 2, Share: 0.11}, {Name: "b", Value: 1, Share: 0.56}, {Name: "a", Value: 0, Share: 0.33}}
	_, err = New("netflix-partitioned", p)
	require.NoError(t, err)
	p.Partitions[0].Share = 1.5
	_, err = New("netflix-partitioned", p)
	require.ErrorContains(t, err, "from 0.0 to 1.0")
}

// stripeParams is max 10 in flight with 20% reserved for the critical
// value 0, for a service time of 1s.
func stripeParams() Params {
	return Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}, Max: 10, Service: time.Second, ClassBy: 1,
		Critical: []Class{{Name: "charge", Value: 0}}, Reserve: 200_000}
}

// TestStripeFleetShedderTable is the fleet usage load shedder's reading by
// hand: non-critical requests get A = floor(10 * 0.8) = 8 of the fleet's
// 10, critical ones the whole fleet.
func TestStripeFleetShedderTable(t *testing.T) {
	const charge, list = 0, 1
	ms := time.Millisecond
	var rows []shedRow
	rows = append(rows, shedRepeat(8, shedRow{0, list, 1, Accept, 0})...)
	rows = append(rows,
		// over the allocation of 8: the first completes at 1s
		shedRow{0, list, 1, Reject, time.Second},
		shedRow{0, NoKey, 1, Reject, time.Second},
		// the reserve is the critical requests'
		shedRow{0, charge, 1, Accept, 0},
		shedRow{0, charge, 1, Accept, 0},
		// the fleet is full
		shedRow{0, charge, 1, Reject, time.Second},
		shedRow{500 * ms, list, 1, Reject, 500 * ms},
	)
	// at 1s all complete; nine critical fill the fleet but one
	rows = append(rows, shedRepeat(9, shedRow{time.Second, charge, 1, Accept, 0})...)
	rows = append(rows,
		// a non-critical request within its allocation still needs
		// room in the fleet
		shedRow{1200 * ms, list, 1, Accept, 0},
		shedRow{1200 * ms, list, 1, Reject, 800 * ms},
		// above the allocation: never; above the fleet: never
		shedRow{1200 * ms, list, 9, Reject, Never},
		shedRow{1200 * ms, charge, 11, Reject, Never},
		// 9 critical: the fleet is at 1 once the nine complete at 2s
		shedRow{1200 * ms, charge, 9, Reject, 800 * ms},
	)
	checkShedRows(t, mustLimiter(t, "stripe-fleet-shedder", stripeParams()), rows)
}

// TestStripeReserveRounding: the allocation is rounded down in integers:
// 20% of 7 leaves 5 (5.6), 0.1% of 10 leaves 9 (9.99).
func TestStripeReserveRounding(t *testing.T) {
	for _, c := range []struct {
		max, reserve, alloc int64
	}{{7, 200_000, 5}, {10, 1_000, 9}, {10, 0, 10}, {3, 999_999, 0}} {
		p := stripeParams()
		p.Max, p.Reserve = c.max, c.reserve
		l := mustLimiter(t, "stripe-fleet-shedder", p)
		rows := shedRepeat(int(c.alloc), shedRow{0, 1, 1, Accept, 0})
		rows = append(rows, shedRow{0, 1, 1, Reject, time.Second})
		if c.alloc == 0 {
			rows[len(rows)-1].retry = Never
		}
		checkShedRows(t, l, rows)
	}
	p := stripeParams()
	p.Reserve = 1_000_000
	_, err := New("stripe-fleet-shedder", p)
	require.ErrorContains(t, err, "below 1")
}

// shedTwin is the shedding rows' rule written plainly over the list of
// admitted requests: in flight at t are those admitted in (t-S, t].
type shedTwin struct {
	max, alloc int64
	limits     map[Key]int64 // netflix: by value id; absent: unknown (0)
	critical   map[Key]bool  // stripe
	netflix    bool
	s          time.Duration
	admitted   []shedCall
}

type shedCall struct {
	at          time.Duration
	key, value  Key
	cost        int64
	class       Key // netflix: the value if a partition, else NoKey; stripe: 1 critical, 0 not
	unknownPart bool
}

func (w *shedTwin) classOf(v Key) Key {
	if w.netflix {
		if _, ok := w.limits[v]; ok {
			return v
		}
		return NoKey
	}
	if w.critical[v] {
		return 1
	}
	return 0
}

func (w *shedTwin) inFlight(t time.Duration, key, class Key, all bool) int64 {
	var sum int64
	for _, a := range w.admitted {
		if a.key == key && a.at+w.s > t && (all || a.class == class) {
			sum += a.cost
		}
	}
	return sum
}

func (w *shedTwin) admits(t time.Duration, c shedCall) bool {
	total := w.inFlight(t, c.key, 0, true)
	own := w.inFlight(t, c.key, c.class, false)
	if w.netflix {
		return total+c.cost <= w.max || own+c.cost <= w.limits[c.class]
	}
	if c.class == 1 {
		return total+c.cost <= w.max
	}
	return total+c.cost <= w.max && own+c.cost <= w.alloc
}

func (w *shedTwin) decide(c shedCall) Decision {
	c.class = w.classOf(c.value)
	fit := c.cost <= w.max
	if !w.netflix && c.class == 0 {
		fit = c.cost <= w.alloc
	}
	if !fit {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if w.admits(c.at, c) {
		if w.s > 0 {
			w.admitted = append(w.admitted, c)
		}
		return Decision{Verdict: Accept}
	}
	// the first completion instant at which it would be admitted
	var ends []time.Duration
	for _, a := range w.admitted {
		if a.key == c.key && a.at+w.s > c.at {
			ends = append(ends, a.at+w.s)
		}
	}
	slices.Sort(ends)
	for _, e := range ends {
		if w.admits(e, c) {
			return Decision{Verdict: Reject, RetryAfter: e - c.at}
		}
	}
	panic("never admitted")
}

// TestSheddingTwin holds both rows to the plain twin above on random
// traces with classes: decisions and retry_after, call for call.
func TestSheddingTwin(t *testing.T) {
	for _, name := range []string{"netflix-partitioned", "stripe-fleet-shedder"} {
		for seed := uint64(1); seed <= 4; seed++ {
			r := rand.New(rand.NewPCG(seed, 42))
			p := netflixParams()
			if name == "stripe-fleet-shedder" {
				p = stripeParams()
				p.Critical = append(p.Critical, Class{Name: "refund", Value: 3})
			}
			p.Max = 2 + int64(r.IntN(9))
			p.Service = time.Duration(1+r.IntN(300)) * time.Millisecond
			l := mustLimiter(t, name, p).(Attributed)
			w := &shedTwin{max: p.Max, netflix: name == "netflix-partitioned", s: p.Service,
				limits: map[Key]int64{}, critical: map[Key]bool{0: true, 3: true}}
			w.alloc = p.Max * (1_000_000 - p.Reserve) / 1_000_000
			for _, c := range p.Partitions {
				w.limits[c.Value] = max(1, int64(math.Ceil(float64(p.Max)*c.Share)))
			}
			var now time.Duration
			for i := range 3000 {
				now += time.Duration(r.IntN(30)) * time.Millisecond
				c := shedCall{at: now, key: Key(r.IntN(2)), value: Key(r.IntN(5)), cost: 1}
				if r.IntN(10) == 0 {
					c.cost = 1 + int64(r.IntN(int(p.Max)+2))
				}
				if c.value == 4 {
					c.value = NoKey
				}
				want := w.decide(c)
				got := l.DecideAttrs(c.at, []Key{c.key, c.value}, c.cost)
				require.Equal(t, want, got, "%s seed %d call %d: %+v", name, seed, i, c)
			}
			requireLive(t, l.(stateHolder), now+p.Service, 0, 0)
		}
	}
}
