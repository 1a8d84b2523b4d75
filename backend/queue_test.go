package backend

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestEvHeapOrder: the event heap gives back its entries by (at, ord),
// with pushes and pops mixed as the backend does them.
func TestEvHeapOrder(t *testing.T) {
	var h evHeap
	r := rand.New(rand.NewPCG(5, 6))
	var n int
	var last entry
	for i := range 200000 {
		if h.Len() == 0 || r.IntN(3) > 0 && h.Len() < 40 {
			h.Push(entry{at: last.at + time.Duration(r.IntN(50)), ord: uint64(i)})
			continue
		}
		e := h.Pop()
		if e.at < last.at || e.at == last.at && e.ord < last.ord {
			t.Fatalf("out of order: %v after %v", e, last)
		}
		last = e
		n++
	}
}
