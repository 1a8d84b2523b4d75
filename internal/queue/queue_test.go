package queue

import (
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
