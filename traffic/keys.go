package traffic

import (
	"strconv"
	"strings"
	"sync"
)

// Keys maps key names to dense ids from 0, so that limiters keep per-key
// state in slices. Sources of many clients reserve a range of ids at once
// (prefix-0 .. prefix-(n-1)) without storing a name per client; other names
// are interned one by one. A name always gets the same id in one key space,
// whichever way it is reached.
//
// Concurrency: one goroutine at a time may add keys (Range, Intern,
// InternBytes: the one reading the traffic), while any number of others
// read the key space (Name, Lookup, Len), as the engine's runs do while
// the traffic is still being read. Finding a name that is already interned
// takes no lock; handing out new ids and the readers take mu.
type Keys struct {
	// mu guards every field below against readers in other goroutines; the
	// goroutine that adds keys reads them without it (it is the only writer)
	mu     sync.RWMutex
	named  map[string]uint32
	ranges map[string]keyRange
	// ids in order of allocation: either a single name or a whole range
	blocks []keyBlock
	next   uint32
	// while declaring, single names wait until every range is known
	declaring     bool
	pending       []string
	pendingRanges map[string]int
	rangeOrder    []string
	// the attributes requests carry beside their key (Plan.Attrs), made
	// by Plan.Open before any reader
	attrs *attrSpace
}

type keyRange struct {
	base, n uint32
}

type keyBlock struct {
	base, n uint32
	name    string // the name, or the prefix of a range
	isRange bool
}

// NewKeys returns an empty key space.
func NewKeys() *Keys {
	return &Keys{named: map[string]uint32{}, ranges: map[string]keyRange{}}
}

// Len is the number of ids handed out.
func (k *Keys) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return int(k.next)
}

// Range reserves ids for prefix-0 .. prefix-(n-1) and returns the id of
// prefix-0. During the declaration phase it records the largest n asked for
// each prefix and returns 0; after it, a range is allocated once, and asking
// again for a prefix returns the same base (n must not exceed the first n).
// A range first reserved after the declaration phase cannot take over a name
// of it interned before (that name keeps its own id): declare ranges.
func (k *Keys) Range(prefix string, n int) uint32 {
	if k.declaring {
		if _, ok := k.pendingRanges[prefix]; !ok {
			k.rangeOrder = append(k.rangeOrder, prefix)
		}
		k.pendingRanges[prefix] = max(k.pendingRanges[prefix], n)
		return 0
	}
	if r, ok := k.ranges[prefix]; ok {
		return r.base
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	base := k.next
	k.ranges[prefix] = keyRange{base, uint32(n)}
	k.blocks = append(k.blocks, keyBlock{base: base, n: uint32(n), name: prefix, isRange: true})
	k.next += uint32(n)
	return base
}

// Intern returns the id of name, allocating one if it is new. During the
// declaration phase (see Plan.Open) it only records the name and returns 0.
func (k *Keys) Intern(name string) uint32 {
	if k.declaring {
		k.pending = append(k.pending, name)
		return 0
	}
	if id, ok := k.named[name]; ok {
		return id
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if r, ok := k.ranges[name[:i]]; ok {
			if n, ok := canonicalIndex(name[i+1:]); ok && n < r.n {
				return r.base + n
			}
		}
	}
	k.mu.Lock()
	id := k.next
	k.named[name] = id
	k.blocks = append(k.blocks, keyBlock{base: id, n: 1, name: name})
	k.next++
	k.mu.Unlock()
	return id
}

// InternBytes is Intern for a name held in bytes (a field of a trace
// line): a name already interned is found without allocating, so reading
// a trace allocates only for each new key's name.
func (k *Keys) InternBytes(name []byte) uint32 {
	if !k.declaring {
		if id, ok := k.named[string(name)]; ok {
			return id
		}
	}
	return k.Intern(string(name))
}

// declare runs fn with single names held back, then interns them, so that a
// name inside a range gets the range's id whichever source declared first.
func (k *Keys) declare(fn func()) {
	k.declaring = true
	k.pendingRanges = map[string]int{}
	fn()
	k.declaring = false
	for _, p := range k.rangeOrder {
		k.Range(p, k.pendingRanges[p])
	}
	k.rangeOrder, k.pendingRanges = nil, nil
	for _, n := range k.pending {
		k.Intern(n)
	}
	k.pending = nil
}

// canonicalIndex parses s as a decimal without sign or leading zeros, as
// strconv.Itoa writes it.
func canonicalIndex(s string) (uint32, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}

// Name returns the name of id.
func (k *Keys) Name(id uint32) string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	// blocks are in increasing base order: binary search
	lo, hi := 0, len(k.blocks)
	for lo < hi {
		m := (lo + hi) / 2
		if k.blocks[m].base+k.blocks[m].n <= id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(k.blocks) {
		return ""
	}
	b := k.blocks[lo]
	if !b.isRange {
		return b.name
	}
	return b.name + "-" + strconv.Itoa(int(id-b.base))
}

// Lookup returns the id of name if the key space has it, without adding it.
func (k *Keys) Lookup(name string) (uint32, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if id, ok := k.named[name]; ok {
		return id, true
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if r, ok := k.ranges[name[:i]]; ok {
			if n, ok := canonicalIndex(name[i+1:]); ok && n < r.n {
				return r.base + n, true
			}
		}
	}
	return 0, false
}
