package algorithms

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExpiryHeapOrder(t *testing.T) {
	var h expiryHeap
	// Ties on the instant pop by key.
	for _, e := range []expiryEntry{{5, 3}, {5, 1}, {9, 0}, {5, 2}, {1, 9}} {
		h.push(e.at, e.key)
	}
	var got []expiryEntry
	for h.len() > 0 {
		require.Equal(t, h.e[0], h.min())
		got = append(got, h.pop())
	}
	require.Equal(t, []expiryEntry{{1, 9}, {5, 1}, {5, 2}, {5, 3}, {9, 0}}, got)

	// Random pushes and pops, many ties: every pop is the least remaining
	// by (at, key).
	r := rand.New(rand.NewPCG(1, 2))
	var ref []expiryEntry
	for range 5000 {
		if r.IntN(3) > 0 || len(ref) == 0 {
			e := expiryEntry{time.Duration(r.IntN(50)), Key(r.IntN(20))}
			h.push(e.at, e.key)
			ref = append(ref, e)
			continue
		}
		least := slices.MinFunc(ref, func(a, b expiryEntry) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key, b.key))
		})
		require.Equal(t, least, h.pop())
		ref = slices.DeleteFunc(ref, func(e expiryEntry) bool { return e == least }) // duplicates are equal
		for range countEqual(h.e, least) {
			ref = append(ref, least) // keep the duplicates still in the heap
		}
		require.Equal(t, len(ref), h.len())
	}
}

func countEqual(es []expiryEntry, x expiryEntry) int {
	n := 0
	for _, e := range es {
		if e == x {
			n++
		}
	}
	return n
}

func TestExpiryQueue(t *testing.T) {
	var q expiryQueue
	require.Zero(t, q.popDue(100), "empty")
	for i := range 10 {
		q.push(time.Duration(i)) // 0..9
	}
	require.Equal(t, 4, q.popDue(3)) // 0, 1, 2, 3 are due at 3
	require.Equal(t, 0, q.popDue(3))
	// Wrap around the ring of 16, then grow it while head is not 0.
	for i := 10; i < 40; i++ {
		q.push(time.Duration(i))
	}
	require.Equal(t, 36, q.size)
	require.GreaterOrEqual(t, len(q.at), 36)
	require.Equal(t, 1, q.popDue(4))
	require.Equal(t, 10, q.popDue(14)) // FIFO kept across the growth: 5..14
	// Equal instants are due together.
	for range 3 {
		q.push(100)
	}
	require.Equal(t, 25, q.popDue(99)) // 15..39
	require.Equal(t, 3, q.popDue(100))
	require.Zero(t, q.size)

	// A long run at a steady size (about 9 due at once) wraps around the
	// ring without growing it.
	ring := len(q.at)
	for i := range 1000 {
		q.push(time.Duration(1000 + i))
		q.popDue(time.Duration(1000 + i - 8))
	}
	require.Equal(t, ring, len(q.at))
}

// fakeState is a state whose fresh instant is set by the test.
type fakeState struct {
	until time.Duration
	n     int64
}

func TestKeyed(t *testing.T) {
	k := newKeyed(16, func(s *fakeState) time.Duration { return s.until })

	s := k.get(0, 5) // the table grows to key 5; the state is fresh
	require.Equal(t, fakeState{}, *s)
	require.GreaterOrEqual(t, len(k.state), 6)
	require.False(t, k.isLive(5))
	s.until, s.n = 100, 1
	k.touch(5, 0)
	require.True(t, k.isLive(5))

	s = k.get(50, 2)
	s.until = 80
	k.touch(2, 8) // 8 bytes of entries beyond the fixed 16
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 32}, k.Memory())

	// Key 5 changes: its fresh instant moves to 200, while the heap still
	// holds 100 for it.
	s = k.get(60, 5)
	s.until = 200
	k.touch(5, 0)
	require.Equal(t, 2, k.heap.len()) // key 2 and key 5 once each

	requireLive(t, &k, 79, 2, 32)
	requireLive(t, &k, 80, 1, 16) // key 2 fresh at 80 exactly: released, zeroed
	require.Equal(t, fakeState{}, k.state[2])
	require.False(t, k.isLive(2))
	requireLive(t, &k, 100, 1, 16) // key 5 checked at 100, pushed back to 200
	require.Equal(t, []expiryEntry{{200, 5}}, k.heap.e)
	requireLive(t, &k, 199, 1, 16)
	requireLive(t, &k, 200, 0, 0)
	require.Equal(t, fakeState{}, k.state[5])

	// A released key comes back as a new one; entry bytes add to the peak.
	s = k.get(300, 5)
	s.until = 400
	k.touch(5, 0)
	k.addBytes(40)
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 56}, k.Memory())
	k.addBytes(-40)

	// Growing the table to a far key keeps the states held.
	s = k.get(310, 1000)
	require.Equal(t, time.Duration(400), k.state[5].until)
	s.until = 500
	k.touch(1000, 0)
	requireLive(t, &k, 400, 1, 16)
	requireLive(t, &k, 500, 0, 0)
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 56}, k.Memory())
}
