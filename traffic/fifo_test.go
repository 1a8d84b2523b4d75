package traffic

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFifoMatchesSlice: random pushes and pops (more pushes than pops at
// first, so the queue spans several chunks, then more pops, so it drains
// and refills) give what a plain slice used as a queue gives.
func TestFifoMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q fifo[int]
	var ref []int
	next := 0
	for step := range 200_000 {
		pushBias := 3 // of 5: grow over the first half, shrink over the second
		if step >= 100_000 {
			pushBias = 2
		}
		if len(ref) == 0 || rng.IntN(5) < pushBias {
			q.push(next)
			ref = append(ref, next)
			next++
		} else {
			// plain comparisons, not require's: this loop runs 200,000 times
			front := *q.front()
			if popped := q.pop(); front != ref[0] || popped != ref[0] {
				t.Fatalf("step %d: front %d, popped %d, want %d", step, front, popped, ref[0])
			}
			ref = ref[1:]
		}
		if q.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, q.len(), len(ref))
		}
		if len(ref) > 0 && (*q.front() != ref[0] || *q.back() != ref[len(ref)-1]) {
			t.Fatalf("step %d: front %d back %d, want %d and %d", step, *q.front(), *q.back(), ref[0], ref[len(ref)-1])
		}
		// what is held follows what is queued: the chunks the entries
		// span (one more when the back chunk is full), plus the spares
		if most := (len(ref)+fifoChunk-1)/fifoChunk + 1 + fifoSpares; q.held() > most {
			t.Fatalf("step %d: %d chunks held for %d entries, want at most %d", step, q.held(), len(ref), most)
		}
	}
}

// TestFifoReusesChunks: a queue that never holds more than a chunk's worth
// keeps at most two chunks however many entries pass through it: 10
// chunks' worth pushed and popped in step, 300 ahead, spans two chunks
// whenever the front is in one chunk and the back in the next, and the
// emptied one is reused.
func TestFifoReusesChunks(t *testing.T) {
	var q fifo[int]
	for i := range 300 {
		q.push(i)
	}
	for i := 300; i < 10*fifoChunk; i++ {
		q.push(i)
		require.Equal(t, i-300, q.pop())
		require.LessOrEqual(t, q.held(), 2)
	}
	// drained: the one chunk in hand is used again from its front
	for q.len() > 0 {
		q.pop()
	}
	require.Equal(t, 0, q.head)
	require.Equal(t, 0, q.tail)
	q.push(7)
	require.Equal(t, 7, *q.front())
	require.Equal(t, 7, *q.back())
	require.LessOrEqual(t, q.held(), 2)
}

// TestFifoReusesBursts: a replay's pattern, a second's lines pushed and
// the lines that left the window popped in turns of several chunks (here
// 4 chunks each way over a queue of 10 chunks), allocates nothing once the
// first turn has filled the spares: every chunk a turn frees serves the
// next turn's pushes (4 <= fifoSpares).
func TestFifoReusesBursts(t *testing.T) {
	var q fifo[int]
	next, first := 0, 0
	turn := func() {
		for range 4 * fifoChunk {
			q.push(next)
			next++
		}
		for range 4 * fifoChunk {
			if got := q.pop(); got != first {
				t.Fatalf("popped %d, want %d", got, first)
			}
			first++
		}
	}
	for range 10 * fifoChunk {
		q.push(next)
		next++
	}
	turn()
	require.Zero(t, testing.AllocsPerRun(20, turn))
	// 10 chunks' worth queued from the start of a chunk: 10 in use (or
	// 11 when the front is mid-chunk), 4 spares at most
	require.LessOrEqual(t, q.held(), 11+4)
}
