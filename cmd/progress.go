package cmd

import (
	"io"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sweep"
)

// progress draws a progress bar for a long run on stderr, and only when
// stderr is a terminal: never in a pipe, a file or a test, and never on
// stdout, whose bytes it leaves alone. It reads the wall clock, which no
// simulation does, to say how long the run has taken and how long it may
// still take. The bar is github.com/schollz/progressbar's; progress says
// when it shows and what it says.
//
// The engine reports the virtual time that every algorithm's run has
// reached, the slowest one's (sim.Config.Progress), so the bar follows the
// whole run; it shows that time against the scenario's duration, with the
// elapsed time and an estimate of the time left. With charts of several
// keys a second run follows each row's busiest key (runner.Options.
// KeyProgress): the bar starts again, saying "busiest key". A trace replayed without
// a duration has no total: the bar then shows how far into the trace the
// run is. A sweep's bar counts its points. The bar appears only once a run
// has taken progressDelay, is redrawn at most every progressEvery, and is
// erased when the run ends.
type progress struct {
	w        io.Writer
	width    int
	now      func() time.Time
	start    time.Time
	last     time.Time // the last drawing
	bar      *progressbar.ProgressBar
	spinning bool   // the bar has no total: a spinner
	shown    bool   // the bar was drawn
	phase    string // the run the bar follows: "", or the charts' second run
}

// Wall-clock pacing of the bar (variables for tests).
var (
	progressDelay = time.Second
	progressEvery = 200 * time.Millisecond
	wallClock     = time.Now
)

// barWidth is the width of the bar itself, at most: the words beside it
// take the rest of the line.
const barWidth = 24

// barScale is the bar's total: a run's share done is counted in millionths.
const barScale = 1_000_000

// newProgress returns the bar for stderr, or nil when stderr is not a
// terminal.
func newProgress(stderr io.Writer) *progress {
	if !isTerminal(stderr) {
		return nil
	}
	p := &progress{w: stderr, width: termWidth(stderr), now: wallClock, start: wallClock()}
	p.bar = progressbar.NewOptions64(barScale,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetTheme(progressbar.ThemeASCII),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		// the spinner of a bar without a total turns as it is redrawn,
		// not on a timer of its own: nothing draws between two updates
		progressbar.OptionSetSpinnerChangeInterval(0),
	)
	// its clock, for the elapsed time and the rate that predicts the time
	// left, starts with the run
	p.bar.StartWithoutRender()
	return p
}

// hook is the sim.Config.Progress of the bar; nil (no reporting at all)
// for no bar.
func (p *progress) hook() func(done, total time.Duration) {
	if p == nil {
		return nil
	}
	return p.update
}

// keyHook is the runner.Options.KeyProgress of the bar: the second run
// of the charts, which follows each row's busiest key; nil for no bar.
func (p *progress) keyHook() func(done, total time.Duration) {
	if p == nil {
		return nil
	}
	return func(done, total time.Duration) { p.run("busiest key: ", done, total) }
}

// update redraws the bar of a run that has simulated done of total (0:
// a trace without a duration), if it is time to.
func (p *progress) update(done, total time.Duration) { p.run("", done, total) }

// run redraws the bar of a run, its words after what (the charts' second
// run says which), if it is time to.
func (p *progress) run(what string, done, total time.Duration) {
	if what != p.phase {
		// a second run starts from 0; the first may have filled the bar,
		// which then counts as finished and draws no more
		p.phase = what
		p.bar.Reset()
	}
	if !p.due() {
		return
	}
	if total <= 0 {
		p.draw(-1, what+"replayed "+output.FormatDuration(done.Round(time.Millisecond))+" of the trace")
		return
	}
	p.draw(float64(min(done, total))/float64(total),
		what+"simulated "+output.FormatDuration(done.Round(time.Millisecond))+" of "+output.FormatDuration(total))
}

// points redraws the bar of a sweep, if it is time to: the points done
// of the total (fractions for the points under way). While a run replays
// a trace of unknown length the bar turns, saying how far into the trace
// it is.
func (p *progress) points(s sweep.Progress) {
	if !p.due() {
		return
	}
	what := "swept " + strconv.Itoa(int(s.Done)) + " of " + strconv.Itoa(s.Total) + " points"
	if s.Replayed > 0 {
		p.draw(-1, what+", replayed "+output.FormatDuration(s.Replayed.Round(time.Millisecond))+" of the trace")
		return
	}
	p.draw(min(s.Done/float64(max(s.Total, 1)), 1), what)
}

// redis redraws the bar of a replay on Redis, if it is time to: row i of
// n, named label, has replayed done of total (0: a trace without a
// duration, whose rows count whole).
func (p *progress) redis(label string, i, n int, done, total time.Duration) {
	if !p.due() {
		return
	}
	share := 0.0
	if total > 0 {
		share = float64(min(done, total)) / float64(total)
	}
	p.draw(min((float64(i)+share)/float64(max(n, 1)), 1),
		"on Redis: "+label+" ("+strconv.Itoa(i+1)+" of "+strconv.Itoa(n)+"), "+output.FormatDuration(done.Round(time.Millisecond)))
}

// due says whether to redraw now: not before progressDelay, then every
// progressEvery.
func (p *progress) due() bool {
	now := p.now()
	if now.Sub(p.start) < progressDelay || (p.shown && now.Sub(p.last) < progressEvery) {
		return false
	}
	p.last, p.shown = now, true
	return true
}

// draw sets the bar to the share done (-1: no total, a spinner that
// turns), with what it says before it.
func (p *progress) draw(share float64, what string) {
	// the words, the percentage and the times take about 30 columns
	// beside the bar; a narrow terminal gets a shorter bar, or none. Both
	// are set without drawing: the bar draws itself when its percentage
	// changes (Describe would draw it once more)
	width := max(0, min(barWidth, p.width-len(what)-30))
	if share < 0 {
		width = max(width, 2) // a spinner of no width never turns
	}
	progressbar.OptionSetWidth(width)(p.bar)
	progressbar.OptionSetDescription(what + " ")(p.bar)
	if share < 0 {
		if !p.spinning {
			p.bar.ChangeMax64(-1)
			p.spinning = true
		}
		// a spinner draws itself only when its turn moves the share it
		// shows, which a narrow one does not always do: draw it here
		p.bar.Add64(1)
		_ = p.bar.RenderBlank()
		return
	}
	if p.spinning { // a sweep's trace has ended: a bar again
		p.bar.ChangeMax64(barScale)
		p.spinning = false
	}
	p.bar.Set64(int64(share * barScale))
}

// done erases the bar, if one was drawn.
func (p *progress) done() {
	if p == nil || !p.shown {
		return
	}
	p.bar.Finish() // erases it (OptionClearOnFinish)
}
