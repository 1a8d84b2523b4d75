package cmd

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/output"
)

// progress draws a progress bar for a long run on stderr, and only when
// stderr is a terminal: never in a pipe, a file or a test, and never on
// stdout, whose bytes it leaves alone. It reads the wall clock, which no
// simulation does, to say how long the run has taken and how long it may
// still take.
//
// The engine reports the virtual time that every algorithm's run has
// reached, the slowest one's (sim.Config.Progress), so the bar follows the
// whole run; it shows that time against the scenario's duration, with the
// elapsed time and an estimate of the time left, the elapsed time scaled
// by what is left to simulate. A trace replayed
// without a duration has no total: the bar then shows how far into the
// trace the run is. The bar appears only once a run has taken
// progressDelay, is redrawn at most every progressEvery, and is erased
// when the run ends.
type progress struct {
	w     io.Writer
	width int
	now   func() time.Time
	start time.Time
	last  time.Time // the last drawing
	drawn int       // the length of the line drawn, 0 when none is
}

// Wall-clock pacing of the bar (variables for tests).
var (
	progressDelay = time.Second
	progressEvery = 200 * time.Millisecond
	wallClock     = time.Now
)

// newProgress returns the bar for stderr, or nil when stderr is not a
// terminal.
func newProgress(stderr io.Writer) *progress {
	if !isTerminal(stderr) {
		return nil
	}
	now := wallClock()
	return &progress{w: stderr, width: termWidth(stderr), now: wallClock, start: now}
}

// hook is the sim.Config.Progress of the bar; nil (no reporting at all)
// for no bar.
func (p *progress) hook() func(done, total time.Duration) {
	if p == nil {
		return nil
	}
	return p.update
}

// update redraws the bar, if it is time to.
func (p *progress) update(done, total time.Duration) {
	p.draw(func(elapsed time.Duration) string { return progressLine(done, total, elapsed, p.width-1) })
}

// points redraws the bar of a sweep, if it is time to: done of total
// points (fractions for the points under way).
func (p *progress) points(done float64, total int) {
	p.draw(func(elapsed time.Duration) string { return pointsLine(done, total, elapsed, p.width-1) })
}

// draw redraws the bar with the line made for the time elapsed, if it is
// time to: not before progressDelay, then every progressEvery.
func (p *progress) draw(line func(elapsed time.Duration) string) {
	now := p.now()
	elapsed := now.Sub(p.start)
	if elapsed < progressDelay || (p.drawn > 0 && now.Sub(p.last) < progressEvery) {
		return
	}
	p.last = now
	l := line(elapsed)
	pad := strings.Repeat(" ", max(0, p.drawn-len(l)))
	io.WriteString(p.w, "\r"+l+pad)
	p.drawn = len(l)
}

// pointsLine is one drawing of a sweep's bar, at most width bytes:
//
//	swept 12 of 64 points [====>               ]  18%  elapsed 3s, about 14s left
func pointsLine(done float64, total int, elapsed time.Duration, width int) string {
	line := progressLine(time.Duration(done*float64(time.Second)), time.Duration(total)*time.Second, elapsed, width+1000)
	head := "swept " + strconv.Itoa(int(done)) + " of " + strconv.Itoa(total) + " points"
	if i := strings.Index(line, " ["); i >= 0 {
		line = head + line[i:]
	} else if i := strings.Index(line, "%"); i >= 0 {
		j := strings.LastIndex(line[:i], " ")
		line = head + line[j:]
	}
	return clip(line, width)
}

// done erases the bar, if one was drawn.
func (p *progress) done() {
	if p == nil || p.drawn == 0 {
		return
	}
	io.WriteString(p.w, "\r"+strings.Repeat(" ", p.drawn)+"\r")
	p.drawn = 0
}

// progressLine is one drawing of the bar, at most width bytes (ASCII):
//
//	simulated 8.4s of 20s [========>           ]  42%  elapsed 3s, about 4s left
//	trace +5m12s in  elapsed 3s
func progressLine(done, total, elapsed time.Duration, width int) string {
	el := "elapsed " + output.FormatDuration(elapsed.Round(time.Second))
	if total <= 0 {
		return clip("replayed "+output.FormatDuration(done.Round(time.Millisecond))+" of the trace  "+el, width)
	}
	frac := float64(done) / float64(total)
	frac = min(max(frac, 0), 1)
	head := "simulated " + output.FormatDuration(done.Round(time.Millisecond)) + " of " + output.FormatDuration(total)
	tail := " " + strconv.Itoa(int(frac*100)) + "%  " + el
	if frac > 0 {
		left := time.Duration(float64(elapsed) * (1 - frac) / frac).Round(time.Second)
		if left > 0 {
			tail += ", about " + output.FormatDuration(left) + " left"
		} else {
			tail += ", almost done"
		}
	}
	const barW = 24
	if len(head)+len(tail)+barW+3 > width {
		return clip(head+tail, width) // no room for the bar
	}
	fill := int(frac * float64(barW))
	bar := strings.Repeat("=", fill)
	if fill < barW {
		bar += ">" + strings.Repeat(" ", barW-fill-1)
	}
	return clip(head+" ["+bar+"]"+tail, width)
}

func clip(s string, width int) string {
	if width > 0 && len(s) > width {
		return s[:width]
	}
	return s
}
