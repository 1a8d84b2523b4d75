package sim

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/queue"
)

// WindowSeries is the cost released to the backend in the trailing window
// of WindowNs at every instant, for one key or for every key together: the
// figure a limit of so much per WindowNs bounds. The count at instant t is
// the cost of the releases in (t-WindowNs, t]; Max[i] is the largest count
// at any instant of the step [StartNs+i*StepNs, StartNs+(i+1)*StepNs), so
// the largest of Max is the Peak (or KeyPeak) of WindowNs, exactly, and a
// short run is drawn instant by instant. Steps are 1ms, doubled as often as
// it takes to keep at most windowSteps of them.
type WindowSeries struct {
	Key      string // the key counted; "" for every key together
	WindowNs int64
	StartNs  int64
	StepNs   int64
	Max      []int64
}

// windowSteps bounds the steps of a WindowSeries: about two a pixel of a
// chart's width.
const windowSteps = 2048

// windowStep0 is the first step of a WindowSeries.
const windowStep0 = time.Millisecond

// WindowCounter is an Observer that follows the cost released in the
// trailing window w, of key (every key when all), from the decisions of
// one row. Its memory is the releases of one window and the ones delayed
// past the latest arrival, and at most windowSteps steps: none grows with
// the run. Series returns what it counted once the run is over.
type WindowCounter struct {
	key string
	all bool
	w   time.Duration

	pending releaseHeap   // released after the latest arrival seen
	win     []timedCost   // releases in (now-w, now], oldest first, from head
	head    int           // first of win still in the window
	sum     int64         // their cost
	started bool          // a release was counted
	start   time.Duration // the first step's start
	step    time.Duration
	max     []int64 // by step; the last is now's
	now     time.Duration
}

// timedCost is a release: its instant and cost.
type timedCost struct {
	at   time.Duration
	cost int64
}

// Less orders releases by instant.
func (a *timedCost) Less(b *timedCost) bool { return a.at < b.at }

// releaseHeap orders releases by instant; releases at one instant come
// out in container/heap's order, as they did when it was one.
type releaseHeap = queue.Heap[timedCost, *timedCost]

// NewWindowCounter counts the releases of key in the trailing window w.
func NewWindowCounter(key string, w time.Duration) *WindowCounter {
	return &WindowCounter{key: key, w: max(w, 1), step: windowStep0}
}

// NewAllKeysCounter counts the releases of every key together in the
// trailing window w.
func NewAllKeysCounter(w time.Duration) *WindowCounter {
	return &WindowCounter{all: true, w: max(w, 1), step: windowStep0}
}

// Observe counts an admitted decision's release: at Decided for an
// accepted one, Decided plus its delay for a delayed one. Decisions come in
// arrival order and a release is never before its arrival, so every
// release up to this arrival is known.
func (c *WindowCounter) Observe(d *Decision) error {
	if !c.all && d.Key != c.key {
		return nil
	}
	// a partial admission releases what it was granted, as the peaks count
	switch d.Verdict {
	case algorithms.Accept:
		c.pending.Push(timedCost{d.Decided, algorithms.GrantedOf(d.Decision, d.Cost)})
	case algorithms.Delay:
		c.pending.Push(timedCost{d.Decided + d.Delay, algorithms.GrantedOf(d.Decision, d.Cost)})
	}
	for c.pending.Len() > 0 && c.pending.Peek().at <= d.Time {
		c.release(c.pending.Pop())
	}
	return nil
}

// Series counts the releases still pending, follows the count down to 0
// and returns the series; nil when nothing was released.
func (c *WindowCounter) Series() *WindowSeries {
	for c.pending.Len() > 0 {
		c.release(c.pending.Pop())
	}
	if !c.started {
		return nil
	}
	if c.head < len(c.win) {
		c.advance(c.win[len(c.win)-1].at + c.w)
	}
	if c.max[len(c.max)-1] != 0 { // the step of the last leaving
		c.advance(c.start + time.Duration(len(c.max))*c.step)
	}
	key := c.key
	if c.all {
		key = ""
	}
	return &WindowSeries{Key: key, WindowNs: int64(c.w), StartNs: int64(c.start),
		StepNs: int64(c.step), Max: c.max}
}

// release counts a release; releases come in order of instant.
func (c *WindowCounter) release(r timedCost) {
	if !c.started {
		c.started = true
		c.start = r.at - r.at%c.step
		if r.at < 0 && r.at%c.step != 0 {
			c.start -= c.step
		}
		c.now = r.at
		c.max = []int64{0}
	}
	c.advance(r.at)
	c.win = append(c.win, r)
	c.sum += r.cost
	if last := &c.max[len(c.max)-1]; c.sum > *last {
		*last = c.sum
	}
}

// advance moves the count to instant t >= now: the releases that left the
// window by then leave it, and each step begun on the way starts at the
// count at its start (the count only rises at a release, so a step's
// largest count is at its start or at one of its releases).
func (c *WindowCounter) advance(t time.Duration) {
	for t-c.start >= c.step*windowSteps {
		c.widen()
	}
	idx := int((t - c.start) / c.step)
	for i := len(c.max); i <= idx; i++ {
		if c.sum == 0 {
			// nothing in the window: every step to idx starts at 0
			c.max = append(c.max, make([]int64, idx+1-i)...)
			break
		}
		c.leave(c.start + time.Duration(i)*c.step)
		c.max = append(c.max, c.sum)
	}
	c.leave(t)
	c.now = t
}

// leave takes out of the window the releases at or before t-w.
func (c *WindowCounter) leave(t time.Duration) {
	for c.head < len(c.win) && c.win[c.head].at <= t-c.w {
		c.sum -= c.win[c.head].cost
		c.head++
	}
	if c.head > 1024 && c.head*2 > len(c.win) {
		n := copy(c.win, c.win[c.head:])
		c.win, c.head = c.win[:n], 0
	}
}

// widen doubles the step: each new step's largest count is the larger of
// its two halves'.
func (c *WindowCounter) widen() {
	n := (len(c.max) + 1) / 2
	for i := range n {
		m := c.max[2*i]
		if 2*i+1 < len(c.max) {
			m = max(m, c.max[2*i+1])
		}
		c.max[i] = m
	}
	c.max = c.max[:n]
	c.step *= 2
}
