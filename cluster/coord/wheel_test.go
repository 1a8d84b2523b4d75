package coord

import (
	"container/heap"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// plainCevs is the plain queue the wheel is held to: container/heap over
// a slice, in cevLess order.
type plainCevs []cev

func (h plainCevs) Len() int           { return len(h) }
func (h plainCevs) Less(i, j int) bool { return cevLess(&h[i], &h[j]) }
func (h plainCevs) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *plainCevs) Push(x any)        { *h = append(*h, x.(cev)) }
func (h *plainCevs) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// The wheel gives back the events container/heap gives back, in the same
// order, on random sequences of pushes, peeks and pops whose instants run
// ahead of the last popped as a store's do: mostly a jittered trip ahead,
// with ties of instant, class and send time told apart by sequence;
// sometimes far ahead (past the wheel); sometimes at the last instant
// popped or before the slot a peek moved the wheel to; sometimes after
// the wheel emptied (its slot moves back), negative instants too.
func TestCevWheelMatchesHeap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		shift, bits uint
		trip, far   time.Duration // the trip's span, the far one's
	}{
		{"trips within the wheel", 4, 8, 2000, 1 << 16},
		{"trips past the wheel", 2, 6, 5000, 1 << 12},
		{"one slot", 20, 6, 100, 1000},
		{"unit slots", 0, 7, 300, 5000},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(c.shift)))
			for round := range 20 {
				w := newCevWheel(c.shift, c.bits)
				var twin plainCevs
				now := time.Duration(r.IntN(2000)) - 1000
				var seq uint64
				for range 4000 {
					switch op := r.IntN(10); {
					case op < 5 || len(twin) == 0:
						at := now
						switch k := r.IntN(20); {
						case k == 0:
							at += dur(r, c.far)
						case k == 1:
							at -= dur(r, c.trip)
						case k < 8:
							at += dur(r, 4) // ties
						default:
							at += dur(r, c.trip)
						}
						ev := cev{at: at, sub: dur(r, 3), class: uint8(r.IntN(3)), seq: seq}
						if r.IntN(4) == 0 {
							ev.seq = seq / 2 // a timeout takes its operation's number
						}
						seq++
						w.Push(ev)
						heap.Push(&twin, ev)
					case op < 7:
						require.Equal(t, twin[0], *w.Peek(), "round %d", round)
					default:
						ev := heap.Pop(&twin).(cev)
						require.Equal(t, ev, w.Pop(), "round %d", round)
						now = max(now, ev.at)
					}
					require.Equal(t, len(twin), w.Len())
				}
				for len(twin) > 0 {
					require.Equal(t, heap.Pop(&twin).(cev), w.Pop())
				}
				require.Zero(t, w.Len())
			}
		})
	}
}

// dur draws a duration in [0, d).
func dur(r *rand.Rand, d time.Duration) time.Duration { return time.Duration(r.Int64N(int64(d))) }
