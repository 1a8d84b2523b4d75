package algorithms

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSlabGeometry: the pages and node capacity of zones, worked by hand
// from ngx_slab_init (704 bytes of headers, 24 per page, the first page
// aligned to 4096) and the zone's two allocations at start.
func TestSlabGeometry(t *testing.T) {
	for _, tt := range []struct {
		size        int64
		pages       int64
		keyLen      int
		nodes       int64
		explanation string
	}{
		// (32768-704)/4120 = 7 pages; headers 704+7*24 = 872 -> first page at
		// 4096, 7 pages fit after it. The tree head takes one chunk of a
		// 128-byte page (31 left), the log string a 32-byte page: 5 pages
		// of 32 nodes + 31.
		{32 << 10, 7, 4, 5*32 + 31, "32k, IPv4 as $binary_remote_addr"},
		{32 << 10, 7, 48, 5*32 + 31, "32k, the longest key of a 128-byte node"},
		// 80+49 = 129 bytes: 256-byte chunks, 16 a page, none beside the tree head
		{32 << 10, 7, 49, 5 * 16, "32k, 129-byte nodes"},
		// 1m: (1048576-704)/4120 = 254; 704+254*24 = 6800 -> 8192; 254 fit
		{1 << 20, 254, 15, 252*32 + 31, "1m: nginx's 'about 8 thousand 128-byte states'"},
		// 10m: 10485056/4120 = 2544; 704+2544*24 = 61760 -> 65536; 2544 fit
		{10 << 20, 2544, 11, 2542*32 + 31, "10m"},
		// 80+2000 = 2080 bytes > half a page: a page each
		{32 << 10, 7, 2000, 5, "32k, keys of 2000 bytes"},
	} {
		require.Equal(t, tt.pages, slabPages(tt.size), tt.explanation)
		n, err := NginxZoneNodes(tt.size, tt.keyLen)
		require.NoError(t, err)
		require.Equal(t, tt.nodes, n, tt.explanation)
	}
	_, err := NginxZoneNodes(32<<10-1, 4)
	require.ErrorContains(t, err, "want a zone from 32k")
	require.Equal(t, 5, slabClass(25))    // the log string: 32 bytes
	require.Equal(t, 7, slabClass(80+48)) // 128
	require.Equal(t, 8, slabClass(80+49)) // 256
	require.Equal(t, 11, slabClass(2048))
	require.Equal(t, -1, slabClass(2049)) // one page
	require.Equal(t, -2, slabClass(4097))
	require.Equal(t, int32(127), slabChunks(5)) // a 32-byte page gives one chunk to its bitmap
	require.Equal(t, int32(504), slabChunks(3)) // 8-byte: 8 chunks of bitmap
	require.Equal(t, int32(64), slabChunks(6))
	require.Equal(t, int32(32), slabChunks(7))
}

// zoneRow is one request to a zone: at t ms, key (by name), and what
// follows: the verdict, the evictions and refusals so far, the nodes in
// the zone.
type zoneRow struct {
	ms        int64
	key       string
	verdict   Verdict
	evictions int64
	refusals  int64
	live      int64
	why       string
}

// newZone is rate=<rate>r/s burst=<burst> nodelay in a zone of size, with
// keys named by names.
func newZone(t *testing.T, rate, burst int64, per time.Duration, size int64) (*NginxZone, func(string) Key) {
	t.Helper()
	p := nginxParams(rate, per, burst, true, 0)
	p.NginxZone = size
	lim, err := newNginxLimiter(p)
	require.NoError(t, err)
	z := lim.(*NginxZone)
	ids := map[string]Key{}
	var names []string
	z.NameKeys(func(k Key) string { return names[k] })
	return z, func(name string) Key {
		if id, ok := ids[name]; ok {
			return id
		}
		ids[name] = Key(len(names))
		names = append(names, name)
		return ids[name]
	}
}

func runZoneRows(t *testing.T, z *NginxZone, key func(string) Key, rows []zoneRow) {
	t.Helper()
	for i, r := range rows {
		d := z.Decide(time.Duration(r.ms)*time.Millisecond, key(r.key), 1)
		ev, ref := z.ZoneCounts()
		live, _ := z.liveAt(0)
		require.Equal(t, r.verdict, d.Verdict, "row %d (%s): verdict", i, r.why)
		require.Equal(t, [3]int64{r.evictions, r.refusals, r.live}, [3]int64{ev, ref, live},
			"row %d (%s): evictions, refusals, nodes", i, r.why)
	}
}

// fill sends one request for each of n keys k000, k001, ... at 0, 1, ...
// ms: 4-byte keys, 128-byte nodes.
func fill(t *testing.T, z *NginxZone, key func(string) Key, n int) {
	t.Helper()
	for i := range n {
		d := z.Decide(time.Duration(i)*time.Millisecond, key(fmt.Sprintf("k%03d", i)), 1)
		require.Equal(t, Accept, d.Verdict)
	}
	ev, ref := z.ZoneCounts()
	require.Zero(t, ev+ref)
}

func TestNginxZoneLRUEviction(t *testing.T) {
	// rate=1r/s burst=0 nodelay in a 32k zone: 191 nodes of 4-byte keys.
	z, key := newZone(t, 1, 0, time.Second, 32<<10)
	fill(t, z, key, 191)
	runZoneRows(t, z, key, []zoneRow{
		// a new key: the expiry pass finds k000 idle 191 ms (< 60 s) and
		// stops; the allocation fails; the forced pass frees k000 (an
		// eviction), then stops at k001; the allocation takes k000's chunk
		{191, "new", Accept, 1, 0, 191, "the zone is full: the LRU node goes"},
		// k000 lost its node: it starts afresh. Unbounded, its excess
		// 0 - 1000*192/1000 + 1000 = 808 > burst 0 would reject it.
		{192, "k000", Accept, 2, 0, 191, "an evicted key is let through (k001 evicted now)"},
		// a lookup that finds its node (k190, last 190): rejected, excess
		// 0 - 3 + 1000 > 0, but moved to the head of the queue
		{193, "k190", Reject, 2, 0, 191, "found: rejected, and now the most recent"},
		{194, "k999", Accept, 3, 0, 191, "k002 evicted"},
		{195, "new", Reject, 3, 0, 191, "a known key is limited as usual"},
	})
	// the queue from its tail: k003 ... k189, k191's "new"... k190 was
	// moved to the head at 193 ms, so it outlives k189
	require.Equal(t, key("k003"), Key(z.tail))
	require.Equal(t, key("new"), Key(z.head))
}

func TestNginxZoneIdleExpiry(t *testing.T) {
	// rate=1r/m (16 milli-requests/s) burst=5 nodelay, a 32k zone.
	z, key := newZone(t, 1, 5, time.Minute, 32<<10)
	runZoneRows(t, z, key, []zoneRow{
		{0, "a", Accept, 0, 0, 1, "a's node: excess 0"},
		{0, "b", Accept, 0, 0, 2, ""},
		{0, "b", Accept, 0, 0, 2, "b's excess 1000"},
		{1000, "c", Accept, 0, 0, 3, "misses: the tail, a, idle 1 s < 60 s: nothing freed"},
		// a idle 60000 ms: 0 - 16*60000/1000 <= 0, freed; b idle 60000
		// ms: 1000 - 960 = 40 > 0, the pass stops
		{60000, "d", Accept, 0, 0, 3, "a expires (not an eviction), b has not drained"},
		// b drained at 62500 ms: 1000 - 16*62500/1000 = 0; the tail is b,
		// then c, idle 61.5 s: 0 - 984 <= 0: both freed, two at most
		{62500, "e", Accept, 0, 0, 2, "b and c expire: d and e are left"},
		{62500, "d", Accept, 0, 0, 2, "a hit frees nothing"},
	})
	require.Equal(t, key("e"), Key(z.tail)) // d was moved to the head
}

func TestNginxZoneRefusal(t *testing.T) {
	// A full 32k zone of 128-byte nodes, then a key of 100 bytes (a
	// 180-byte node: the 256-byte class). Every 128-byte page is in use,
	// none is free.
	z, key := newZone(t, 1, 0, time.Second, 32<<10)
	fill(t, z, key, 191)
	long := strings.Repeat("x", 100)
	rows := []zoneRow{
		// the forced pass frees k000, in the page the tree head shares:
		// no page comes free, the 256-byte allocation fails again: 503
		{200, long, Reject, 1, 1, 190, "refused: the freed chunk is in a page still used"},
		// a short key takes the chunk k000 left
		{201, "short", Accept, 1, 1, 191, "a 128-byte node still fits"},
	}
	runZoneRows(t, z, key, rows)
	d := z.Decide(202*time.Millisecond, key(long), 1)
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: time.Millisecond}, d)
	// each retry evicts one more: k001..k030 share the tree head's page,
	// which never comes free; k031..k062 fill the next page, so the
	// allocation succeeds once k062 is evicted, at the 63rd attempt
	for i := 3; i <= 62; i++ {
		require.Equal(t, Reject, z.Decide(time.Duration(200+i)*time.Millisecond, key(long), 1).Verdict, "attempt %d", i)
	}
	require.Equal(t, Accept, z.Decide(263*time.Millisecond, key(long), 1).Verdict)
	ev, ref := z.ZoneCounts()
	require.Equal(t, int64(63), ev)
	require.Equal(t, int64(62), ref)
}

func TestNginxZoneKeyTooLong(t *testing.T) {
	// nginx does not limit a key of more than 65535 bytes
	z, key := newZone(t, 1, 0, time.Second, 32<<10)
	long := strings.Repeat("x", 65536)
	for i := range 3 {
		require.Equal(t, Accept, z.Decide(time.Duration(i), key(long), 1).Verdict)
	}
	live, _ := z.liveAt(0)
	require.Zero(t, live)
}

// TestNginxZoneLargeMatchesUnbounded: in a zone that never fills, the
// zone changes no decision: a node's state when found is what Nginx keeps
// (or the fresh state it released).
func TestNginxZoneLargeMatchesUnbounded(t *testing.T) {
	p := nginxParams(5, time.Second, 3, false, 1)
	plain, err := newNginxLimiter(p)
	require.NoError(t, err)
	p.NginxZone = 10 << 20
	zoned, err := newNginxLimiter(p)
	require.NoError(t, err)
	rng := uint64(1)
	now := time.Duration(0)
	for i := range 20000 {
		rng = rng*6364136223846793005 + 1442695040888963407
		now += time.Duration(rng>>40) % (300 * time.Millisecond)
		k := Key(rng >> 59) // 32 keys
		c := int64(1 + (rng>>20)%2)
		require.Equal(t, plain.Decide(now, k, c), zoned.Decide(now, k, c), "decision %d", i)
	}
}

func TestNginxZoneParams(t *testing.T) {
	p := nginxParams(1, time.Second, 0, true, 0)
	p.NginxZone = 1000
	_, err := newNginxLimiter(p)
	require.ErrorContains(t, err, "zone: 1000: want a zone from 32k")
	p = bucketPolicy(1, time.Second, 1)
	p.NginxZone = 1 << 20
	_, err = New("gcra", p)
	require.ErrorContains(t, err, "gcra takes no zone (only nginx)")
	p = nginxParams(1, time.Second, 0, true, 0)
	p.NginxZone = 1 << 20
	_, err = NewTable("nginx", p)
	require.ErrorContains(t, err, "not modelled in a cluster")
}
