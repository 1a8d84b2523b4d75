package sim

import (
	"sync"
	"time"
)

// progressBoard joins the progress reports of a Run's algorithms into the
// calls of Config.Progress: the virtual time that every run still going
// has reached, so that a progress bar follows the whole run, not its
// fastest row. A run that has finished no longer holds it back.
type progressBoard struct {
	mu      sync.Mutex
	fn      func(done, total time.Duration)
	total   time.Duration
	at      []time.Duration // each run's last report; -1 before its first
	running []bool
	passed  time.Duration // the last done passed to fn; -1 before the first
}

func newProgressBoard(fn func(done, total time.Duration), n int, total time.Duration) *progressBoard {
	b := &progressBoard{fn: fn, total: total, at: make([]time.Duration, n), running: make([]bool, n), passed: -1}
	for i := range n {
		b.at[i], b.running[i] = -1, true
	}
	return b
}

// reporter returns run i's report function, nil without a board.
func (b *progressBoard) reporter(i int) func(done, total time.Duration) {
	if b == nil {
		return nil
	}
	return func(done, _ time.Duration) { b.report(i, done) }
}

// report records that run i has reached done.
func (b *progressBoard) report(i int, done time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at[i] = max(b.at[i], done)
	b.pass()
}

// finished records that run i has ended (or never started).
func (b *progressBoard) finished(i int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running[i] = false
	b.pass()
}

// pass calls fn with the time every running run has reached, when each has
// reported and it is later than the last one passed.
func (b *progressBoard) pass() {
	low, any := time.Duration(0), false
	for i, r := range b.running {
		if !r {
			continue
		}
		if b.at[i] < 0 {
			return // not heard from yet
		}
		if !any || b.at[i] < low {
			low = b.at[i]
		}
		any = true
	}
	if !any || low <= b.passed {
		return
	}
	b.passed = low
	b.fn(low, b.total)
}
