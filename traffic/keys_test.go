package traffic

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestKeysIntern(t *testing.T) {
	k := NewKeys()
	require.Equal(t, 0, k.Len())
	// dense ids from 0 in the order names are first seen
	require.Equal(t, uint32(0), k.Intern("alice"))
	require.Equal(t, uint32(1), k.Intern("bob"))
	require.Equal(t, uint32(0), k.Intern("alice")) // the same name, the same id
	require.Equal(t, uint32(2), k.Intern(""))      // the empty name is a name
	require.Equal(t, 3, k.Len())
	for id, name := range []string{"alice", "bob", ""} {
		require.Equal(t, name, k.Name(uint32(id)))
	}
	require.Equal(t, "", k.Name(3)) // not handed out
}

func TestKeysRange(t *testing.T) {
	k := NewKeys()
	require.Equal(t, uint32(0), k.Intern("alice"))
	// the range takes the next 3 ids, 1..3, without naming them one by one
	require.Equal(t, uint32(1), k.Range("client", 3))
	require.Equal(t, uint32(4), k.Intern("bob"))
	require.Equal(t, 5, k.Len())
	for _, tt := range []struct {
		id   uint32
		want string
	}{
		{0, "alice"},
		{1, "client-0"}, // base + 0
		{2, "client-1"},
		{3, "client-2"}, // base + n-1
		{4, "bob"},
	} {
		require.Equal(t, tt.want, k.Name(tt.id), "id %d", tt.id)
		require.Equal(t, tt.id, k.Intern(tt.want), "name %q", tt.want)
	}
	// asking again for the prefix gives the same block, allocates nothing
	require.Equal(t, uint32(1), k.Range("client", 3))
	require.Equal(t, uint32(1), k.Range("client", 2))
	require.Equal(t, 5, k.Len())
}

// TestKeysNotCanonical: only names strconv.Itoa would write for an index in
// the range are the range's; anything else is a key of its own.
func TestKeysNotCanonical(t *testing.T) {
	for _, name := range []string{
		"client-03",         // leading zero
		"client-00",         // leading zero of 0
		"client-10",         // n = 10: indexes are 0..9
		"client-",           // no index
		"client--1",         // negative
		"client-+1",         // sign
		"client-1 ",         // trailing space
		"client-4294967296", // 2^32: past uint32
		"client-4294967295", // 2^32-1: parses, but past n
		"client",            // the prefix alone
		"Client-1",          // another prefix
		"x-client-1",        // another prefix
	} {
		t.Run(name, func(t *testing.T) {
			k := NewKeys()
			k.declare(func() {
				k.Range("client", 10)
				k.Intern(name)
			})
			// ids 0..9 are the range; the name is the 11th key
			require.Equal(t, 11, k.Len())
			require.Equal(t, uint32(10), k.Intern(name))
			require.Equal(t, name, k.Name(10))
		})
	}
}

// TestKeysNameRoundTrip: Name of every id is a name that Intern maps back to
// that id, and no two ids share a name.
func TestKeysNameRoundTrip(t *testing.T) {
	k := NewKeys()
	k.declare(func() {
		k.Intern("client-3") // inside the range below
		k.Intern("a")
		k.Range("client", 5)
		k.Range("a", 2) // "a" and "a-0" are different keys
		k.Intern("a-1") // inside range a
		k.Range("empty", 0)
		k.Intern("client-5") // just past the range
		k.Range("", 3)       // names "-0", "-1", "-2"
		k.Intern("-1")
	})
	// ranges first in the order declared: client 0..4, a 5..6, empty none,
	// "" 7..9; then the single names left: a 10, client-5 11
	require.Equal(t, 12, k.Len())
	seen := map[string]uint32{}
	for id := uint32(0); id < uint32(k.Len()); id++ {
		name := k.Name(id)
		require.NotContains(t, seen, name)
		seen[name] = id
		require.Equal(t, id, k.Intern(name), "name %q", name)
	}
	require.Equal(t, map[string]uint32{
		"client-0": 0, "client-1": 1, "client-2": 2, "client-3": 3, "client-4": 4,
		"a-0": 5, "a-1": 6, "-0": 7, "-1": 8, "-2": 9, "a": 10, "client-5": 11,
	}, seen)
	require.Equal(t, 12, k.Len()) // Intern of known names allocated nothing
}

// TestKeysRangesTakeLargestN: two sources with one prefix and different
// numbers of clients share one block, as large as the larger.
func TestKeysRangesTakeLargestN(t *testing.T) {
	for _, ns := range [][]int{{3, 5}, {5, 3}} {
		k := NewKeys()
		k.declare(func() {
			for _, n := range ns {
				require.Equal(t, uint32(0), k.Range("c", n)) // 0 while declaring
			}
		})
		require.Equal(t, 5, k.Len())
		require.Equal(t, uint32(0), k.Range("c", 3))
		require.Equal(t, uint32(0), k.Range("c", 5))
		require.Equal(t, uint32(4), k.Intern("c-4"))
		require.Equal(t, "c-4", k.Name(4))
	}
}

// TestKeysNameInRangeThroughPlan: a single key "client-3" and a source of 10
// clients "client" share one id, whichever source comes first in the file.
func TestKeysNameInRangeThroughPlan(t *testing.T) {
	single := func() Source {
		return &Times{Common: Common{Clients: Clients{Key: "client-3"}, Cost: 1}, At: []time.Duration{time.Second}}
	}
	many := func() Source {
		return &Times{Common: Common{Clients: Clients{N: 10, Prefix: "client"}, Cost: 1}, At: []time.Duration{0}}
	}
	for _, tt := range []struct {
		name    string
		sources []Source
	}{
		{"name first", []Source{single(), many()}},
		{"range first", []Source{many(), single()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, s, err := Plan{Sources: tt.sources}.Open()
			require.NoError(t, err)
			got, err := drain(s)
			require.NoError(t, err)
			require.Equal(t, 10, k.Len()) // no 11th key for client-3
			require.Len(t, got, 11)
			// the range's 10 at 0, then the single key's at 1s: id base+3
			require.Equal(t, time.Second, got[10].At)
			require.Equal(t, uint32(3), got[10].Key)
			require.Equal(t, got[3].Key, got[10].Key)
			require.Equal(t, "client-3", k.Name(got[10].Key))
		})
	}
}

func TestCanonicalIndex(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want uint32
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"10", 10, true},
		{"4294967295", 1<<32 - 1, true}, // the largest uint32
		{"4294967296", 0, false},        // one past
		{"42949672950", 0, false},       // 11 digits
		{"", 0, false},
		{"00", 0, false}, // leading zero
		{"07", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1a", 0, false},
		{" 1", 0, false},
	} {
		got, ok := canonicalIndex(tt.s)
		require.Equal(t, tt.ok, ok, "%q", tt.s)
		if ok {
			require.Equal(t, tt.want, got, "%q", tt.s)
			require.Equal(t, tt.s, strconv.FormatUint(uint64(got), 10)) // canonical: Itoa gives it back
		}
	}
}

// fuzzName makes a key name from two bytes: one of a few prefixes, and an
// index that is canonical or not, so that names hit ranges and miss them.
func fuzzName(p, s byte) (prefix, name string) {
	prefix = []string{"client", "c", "a-b", "", "c-1"}[int(p)%5]
	switch s % 8 {
	case 0, 1, 2, 3: // canonical index, in or out of a range
		return prefix, prefix + "-" + strconv.Itoa(int(s/8))
	case 4: // leading zero
		return prefix, prefix + "-0" + strconv.Itoa(int(s/8))
	case 5: // negative
		return prefix, prefix + "--" + strconv.Itoa(int(s/8))
	case 6: // no index
		return prefix, prefix + "-"
	default: // the prefix alone
		return prefix, prefix
	}
}

// FuzzKeys runs a sequence of Intern and Range calls, each op three bytes
// (kind, prefix, index or n), either plainly or inside a declaration phase
// as Plan.Open does, and checks that Name(Intern(name)) == name, that ids
// are stable and dense, and, after a declaration phase, that every id's
// name interns back to it.
func FuzzKeys(f *testing.F) {
	// an op is (kind: even Intern, odd Range; prefix; index or n), see fuzzName
	f.Add(false, []byte{0, 0, 3 * 8, 1, 0, 10}) // client-3, then range client of 10
	f.Add(true, []byte{0, 0, 3 * 8, 1, 0, 10})  // the same, declared
	f.Add(true, []byte{1, 0, 10, 0, 0, 3 * 8})  // declared, range first
	f.Add(false, []byte{1, 0, 10, 0, 0, 3 * 8}) // range first, plainly
	// ranges c of 3 and 5 (declared: 5 wins), c-4 in it, c-04 not
	f.Add(true, []byte{1, 1, 3, 1, 1, 5, 0, 1, 4 * 8, 0, 1, 4*8 + 4})
	// prefixes with dashes: range a-b of 4, a-b-1, c-1-0, range c-1 of 2, ""
	f.Add(false, []byte{1, 2, 4, 0, 2, 8, 0, 4, 0, 1, 4, 2, 0, 3, 7})
	// the empty prefix: range "" of 3, "-1", "--1", "-", "-2"
	f.Add(true, []byte{1, 3, 3, 0, 3, 8, 0, 3, 13, 0, 3, 6, 0, 3, 16})
	f.Add(true, []byte{1, 0, 0, 0, 0, 0}) // a range of 0, then client-0
	f.Add(false, []byte{})
	f.Fuzz(func(t *testing.T, declared bool, ops []byte) {
		k := NewKeys()
		firstN := map[string]int{} // plain: the n a prefix was first given
		declN := map[string]int{}  // declared: the largest n per prefix
		var names []string         // every name interned
		run := func(check bool) {
			for len(ops) >= 3 {
				kind, p, s := ops[0], ops[1], ops[2]
				ops = ops[3:]
				prefix, name := fuzzName(p, s)
				if kind%2 == 0 {
					names = append(names, name)
					id := k.Intern(name)
					if declared {
						require.Equal(t, uint32(0), id) // held back
					}
					if check {
						require.Equal(t, name, k.Name(id))
						require.Less(t, int(id), k.Len())
					}
					continue
				}
				n := int(s % 16)
				if f, ok := firstN[prefix]; ok && !declared {
					n = min(n, f) // the documented contract: n <= the first n
				}
				before := k.Len()
				base := k.Range(prefix, n)
				if declared {
					require.Equal(t, uint32(0), base) // recorded only
					require.Equal(t, 0, k.Len())
					declN[prefix] = max(declN[prefix], n)
					continue
				}
				if _, ok := firstN[prefix]; !ok {
					firstN[prefix] = n
					require.Equal(t, uint32(before), base) // the next ids
					require.Equal(t, before+n, k.Len())
				} else {
					require.Equal(t, before, k.Len())
				}
				for i := range n {
					require.Equal(t, prefix+"-"+strconv.Itoa(i), k.Name(base+uint32(i)))
				}
			}
		}
		if declared {
			k.declare(func() { run(false) })
			total := 0
			for _, n := range declN {
				total += n
			}
			// every range, and at most one id per distinct name besides
			require.GreaterOrEqual(t, k.Len(), total)
			require.LessOrEqual(t, k.Len(), total+len(names))
			for prefix, n := range declN {
				base := k.Range(prefix, n)
				for i := range n {
					name := prefix + "-" + strconv.Itoa(i)
					require.Equal(t, base+uint32(i), k.Intern(name), "%q", name)
				}
			}
			// a bijection between [0, Len) and the names
			seen := map[string]bool{}
			for id := uint32(0); id < uint32(k.Len()); id++ {
				name := k.Name(id)
				require.False(t, seen[name], "two ids named %q", name)
				seen[name] = true
				require.Equal(t, id, k.Intern(name), "%q", name)
			}
		} else {
			run(true)
		}
		// every name interned still gets one stable id, and names it
		ids := map[string]uint32{}
		n := k.Len()
		for _, name := range names {
			id := k.Intern(name)
			require.Equal(t, name, k.Name(id))
			if prev, ok := ids[name]; ok {
				require.Equal(t, prev, id)
			}
			ids[name] = id
		}
		require.Equal(t, n, k.Len()) // known names allocate nothing
	})
}

// TestKeysReadWhileInterning: one goroutine interns (as the engine's
// producer reads a trace) while others resolve names and ids (as its runs
// show decisions and sample a key); run with -race.
func TestKeysReadWhileInterning(t *testing.T) {
	k := NewKeys()
	k.declare(func() { k.Range("user", 1000) })
	const n = 20000
	done := make(chan struct{})
	errs := make(chan error, 4)
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			if id := k.InternBytes([]byte("ip-" + strconv.Itoa(i))); id != uint32(1000+i) {
				errs <- fmt.Errorf("ip-%d: %d", i, id)
				return
			}
			if id := k.Intern("user-" + strconv.Itoa(i%1000)); id != uint32(i%1000) {
				errs <- fmt.Errorf("user-%d: %d", i%1000, id)
				return
			}
		}
		errs <- nil
	}()
	for r := 0; r < 3; r++ {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				have := k.Len()
				if have > 1000 {
					id := uint32(have - 1)
					name := k.Name(id)
					if got, ok := k.Lookup(name); !ok || got != id {
						errs <- fmt.Errorf("%q: %d, %v; want %d", name, got, ok, id)
						return
					}
				}
				if id, ok := k.Lookup("user-999"); !ok || id != 999 {
					errs <- fmt.Errorf("user-999: %d, %v", id, ok)
					return
				}
			}
		}()
	}
	for r := 0; r < 4; r++ {
		require.NoError(t, <-errs)
	}
	require.Equal(t, 1000+n, k.Len())
}
