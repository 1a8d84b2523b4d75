package traffic

import (
	"encoding/binary"
	"math/bits"
)

// keyTable finds the id of a short key of a trace line (up to 16 bytes: an
// IPv4 address, a status, a user name) in a table of its own before asking
// Keys: the key's bytes are held in the slot, packed into two words, so
// that finding it is a hash of two words, one probe or a few, and a
// comparison of words, without hashing a string nor following its pointer
// to compare it. Ids come from Keys (a name always has the same id in a
// key space), so the table only remembers them; longer keys go to Keys.
type keyTable struct {
	slots []keySlot // open addressing, linear probing; a power of 2 long
	n     int       // slots in use
	shift uint      // 64 - log2(len(slots))
}

type keySlot struct {
	w0, w1 uint64 // the key, packed by packKey
	id     uint32
	len    uint8 // the key's length; 0: the slot is free
}

// maxTableKey is the longest key the table holds.
const maxTableKey = 16

// packKey packs a key of 1 to 16 bytes into two words: with its length,
// they tell it from any other key (bytes of a short key may be read twice,
// as overlapping words).
func packKey(b []byte) (w0, w1 uint64) {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32, 0
	}
	for i, c := range b {
		w0 |= uint64(c) << (8 * i)
	}
	return w0, 0
}

// slot is where a key's probe starts.
func (t *keyTable) slot(w0, w1 uint64, n int) int {
	// the top bits of a product by an odd constant depend on every bit
	h := (w0 ^ (w1*0xc2b2ae3d27d4eb4f + uint64(n))) * 0x9e3779b97f4a7c15
	return int(h >> t.shift)
}

// intern returns the id of name in k, interning it if it is new.
func (t *keyTable) intern(k *Keys, name []byte) uint32 {
	n := len(name)
	if n == 0 || n > maxTableKey || k.declaring {
		return k.InternBytes(name)
	}
	w0, w1 := packKey(name)
	if len(t.slots) > 0 {
		mask := len(t.slots) - 1
		for i := t.slot(w0, w1, n); ; i = (i + 1) & mask {
			s := &t.slots[i]
			if s.len == 0 {
				break
			}
			if s.w0 == w0 && s.w1 == w1 && int(s.len) == n {
				return s.id
			}
		}
	}
	id := k.InternBytes(name)
	t.insert(keySlot{w0: w0, w1: w1, id: id, len: uint8(n)})
	return id
}

// insert adds a key not in the table, growing it to keep it at most half
// full.
func (t *keyTable) insert(e keySlot) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]keySlot, max(1024, 2*len(old)))
		t.shift = uint(64 - bits.Len(uint(len(t.slots)-1)))
		t.n = 0
		for _, o := range old {
			if o.len != 0 {
				t.insert(o)
			}
		}
	}
	mask := len(t.slots) - 1
	i := t.slot(e.w0, e.w1, int(e.len))
	for t.slots[i].len != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = e
	t.n++
}
