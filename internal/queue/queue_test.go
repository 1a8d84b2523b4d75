package queue

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

type num int

func (a *num) Less(b *num) bool { return *a < *b }

// The heap gives back what it was given, least first.
func TestHeap(t *testing.T) {
	var h Heap[num, *num]
	r := rand.New(rand.NewPCG(1, 2))
	var want []int
	for range 1000 {
		v := r.IntN(100)
		want = append(want, v)
		h.Push(num(v))
	}
	slices.Sort(want)
	for _, w := range want {
		require.Equal(t, num(w), *h.Peek())
		require.Equal(t, num(w), h.Pop())
	}
	require.Zero(t, h.Len())
}

type tagged struct{ k, id int }

func (a *tagged) Less(b *tagged) bool { return a.k < b.k }

// taggedHeap is container/heap's heap of the same elements.
type taggedHeap []tagged

func (h taggedHeap) Len() int           { return len(h) }
func (h taggedHeap) Less(i, j int) bool { return h[i].k < h[j].k }
func (h taggedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *taggedHeap) Push(x any)        { *h = append(*h, x.(tagged)) }
func (h *taggedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Elements that compare equal come out in container/heap's order: a heap
// that replaced a container/heap gives back ties as it did.
func TestHeapTiesAsContainerHeap(t *testing.T) {
	var h Heap[tagged, *tagged]
	var ref taggedHeap
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		if r.IntN(3) < 2 || h.Len() == 0 {
			x := tagged{r.IntN(20), i}
			h.Push(x)
			heap.Push(&ref, x)
		} else {
			require.Equal(t, heap.Pop(&ref).(tagged), h.Pop())
		}
	}
	for h.Len() > 0 {
		require.Equal(t, heap.Pop(&ref).(tagged), h.Pop())
	}
}

// The deque keeps order from both ends across its growth and wrap.
func TestDeque(t *testing.T) {
	var d Deque[int]
	var model []int
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		switch op := r.IntN(5); {
		case op < 2 || len(model) == 0:
			d.PushBack(i)
			model = append(model, i)
		case op == 2:
			require.Equal(t, model[0], *d.Front())
			require.Equal(t, model[0], d.PopFront())
			model = model[1:]
		case op == 3:
			require.Equal(t, model[0], *d.Front())
			d.DropFront()
			model = model[1:]
		default:
			require.Equal(t, model[len(model)-1], *d.Back())
			require.Equal(t, model[len(model)-1], d.PopBack())
			model = model[:len(model)-1]
		}
		require.Equal(t, len(model), d.Len())
	}
}
