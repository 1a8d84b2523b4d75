package algorithms

// flights counts the units in flight per key, for the keys that have any:
// an open-addressing hash table (linear probing, deletion by backward
// shift) that holds only the keys in flight, so that it stays as small as
// the requests in flight, and in cache, however many keys the traffic has
// (a slice indexed by key would spread a million keys' counters over 8 MB
// and miss the cache at nearly every decision and completion).
//
// Its slots are a power of two, at least twice the keys held; it grows,
// and never shrinks. Nothing outside reads its layout: the counts are the
// same as a slice's would be.
type flights struct {
	slots []flight
	n     int // keys held
}

// flight is a slot: a key and its units in flight (0: the slot is free).
type flight struct {
	key   Key
	units int64
}

// home is key's first slot in a table of mask+1 slots (Fibonacci hashing:
// the top bits of the key times 2^64/phi, so that near keys spread).
func home(key Key, mask int) int {
	return int((uint64(key) * 0x9e3779b97f4a7c15) >> 32 & uint64(mask))
}

// find returns the slot of key, or of the free slot where it would go.
func (f *flights) find(key Key) int {
	mask := len(f.slots) - 1
	i := home(key, mask)
	for f.slots[i].units != 0 && f.slots[i].key != key {
		i = (i + 1) & mask
	}
	return i
}

// get returns key's units in flight.
func (f *flights) get(key Key) int64 {
	if f.n == 0 {
		return 0
	}
	return f.slots[f.find(key)].units
}

// add adds units (> 0) to key's, and reports whether the key had none.
func (f *flights) add(key Key, units int64) (fresh bool) {
	if 2*(f.n+1) > len(f.slots) {
		f.grow()
	}
	s := &f.slots[f.find(key)]
	if s.units == 0 {
		s.key = key
		f.n++
		fresh = true
	}
	s.units += units
	return fresh
}

// sub takes units off key's (down to 0, when the key leaves the table),
// and returns how many it took.
func (f *flights) sub(key Key, units int64) int64 {
	if f.n == 0 {
		return 0
	}
	i := f.find(key)
	s := &f.slots[i]
	if s.units == 0 {
		return 0
	}
	took := min(units, s.units)
	s.units -= took
	if s.units == 0 {
		f.n--
		f.remove(i)
	}
	return took
}

// remove frees slot i, moving back the entries after it that their probe
// would no longer reach (Knuth's algorithm R, TAOCP vol. 3, 6.4).
func (f *flights) remove(i int) {
	mask := len(f.slots) - 1
	j := i
	for {
		f.slots[i] = flight{}
		for {
			j = (j + 1) & mask
			if f.slots[j].units == 0 {
				return
			}
			// the entry at j may move to i iff its home is not
			// cyclically in (i, j]
			h := home(f.slots[j].key, mask)
			if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
				break
			}
		}
		f.slots[i] = f.slots[j]
		i = j
	}
}

// grow doubles the slots (16 at first) and places the keys held again.
func (f *flights) grow() {
	old := f.slots
	f.slots = make([]flight, max(16, 2*len(old)))
	for _, s := range old {
		if s.units != 0 {
			f.slots[f.find(s.key)] = s
		}
	}
}
