package output

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// TermOptions say how TermTimeline and TermStrip draw for a terminal.
type TermOptions struct {
	// Width is the terminal's width in columns, labels included; 0 means
	// 80. Narrower than 40 draws as if 40.
	Width int
	// ASCII draws with plain ASCII marks instead of Unicode ones.
	ASCII bool
	// Color adds ANSI colours (the caller decides: a terminal, no NO_COLOR).
	Color bool
	// Absolute says the instants are a replayed trace's, since the Unix
	// epoch: TermStrip labels them as dates whatever their year (TermTimeline
	// learns it from the report).
	Absolute bool
}

// DefaultTermWidth is the width drawn for when TermOptions.Width is 0.
const DefaultTermWidth = 80

const (
	minTermWidth  = 40
	maxLabelWidth = 24
	minTickGap    = 8 // columns between two ticks of the axis, at least
)

// verdict kinds, in increasing order of notability: a column holding
// several decisions shows the most notable one.
const (
	kindNone = iota
	kindAccept
	kindDelay
	kindReject
	nKinds
)

// termMarks is one set of marks.
type termMarks struct {
	empty, boundary, tick string
	one, several          [nKinds]string
	released              string // the label of a row of releases
	rejected              string // the label of a row of rejections
}

var (
	unicodeMarks = termMarks{
		empty: "·", boundary: "│", tick: "╵",
		one:      [nKinds]string{kindAccept: "•", kindDelay: "◦", kindReject: "×"},
		several:  [nKinds]string{kindAccept: "●", kindDelay: "○", kindReject: "✕"},
		released: "  └ released",
		rejected: "  └ rejected",
	}
	asciiMarks = termMarks{
		empty: ".", boundary: "|", tick: "'",
		one:      [nKinds]string{kindAccept: "o", kindDelay: "d", kindReject: "x"},
		several:  [nKinds]string{kindAccept: "O", kindDelay: "D", kindReject: "X"},
		released: "  > released",
		rejected: "  > rejected",
	}
)

// ANSI colours of the marks.
const (
	ansiReset = "\x1b[0m"
	ansiDim   = "\x1b[2m"
)

var kindColor = [nKinds]string{kindAccept: "\x1b[32m", kindDelay: "\x1b[33m", kindReject: "\x1b[31m"}

// TermTimeline draws a small run for a terminal: one line per algorithm
// (decisions[i] are the decisions of r.Results[i], in processing order),
// with a mark per time slot (one column) at the arrival of each attempt:
//
//	o • admitted at once   d ◦ delayed   x × rejected
//
// (ASCII, then Unicode). A slot with several attempts shows the most
// notable verdict (rejected, then delayed, then admitted) in its capital
// or heavy form (O D X, ● ○ ✕); where a column holds both admissions and
// rejections, the algorithm's rejections go on a "rejected" line of their
// own under it, so that no admission hides under a rejection (a burst
// through a token bucket shows what its burst let through). Under an
// algorithm that delayed requests, a
// "released" line marks when they reached the backend (o •, O ●); those
// released after the drawn span are counted in a note under the axis.
//
// The span runs from the first attempt to the last (to the last release
// when that needs no wider slot), widened to whole axis ticks; the slot is the shortest of 1, 2, 5 x 10^n (then 10s, 15s, 30s, 1m,
// 2m, ...) that fits the width. Window boundaries (multiples of the
// report's W) get a column of their own (| │) between slots when they fall on
// slot edges and are not too many; otherwise, and for an algorithm whose W
// differs from the report's, an empty slot holding a boundary shows the
// boundary mark, and the axis ticks every boundary when they are not too
// dense. An axis of ticks and times runs under the lines: times
// from 0 for synthetic traffic, offsets from the span's start (given in the
// heading) for replayed traffic. A legend ends the drawing.
//
// Nothing is drawn when no decision was made. Colours, when on: admitted
// green, delayed yellow, rejected red, empty slots and the axis dim.
func TermTimeline(w io.Writer, r *sim.Report, decisions [][]sim.Decision, opt TermOptions) error {
	if r == nil {
		return errNilReport
	}
	m := unicodeMarks
	if opt.ASCII {
		m = asciiMarks
	}
	var t0, t1 time.Duration
	n := 0
	for _, ds := range decisions {
		for i := range ds {
			if n == 0 || ds[i].Time < t0 {
				t0 = ds[i].Time
			}
			if n == 0 || ds[i].Time > t1 {
				t1 = ds[i].Time
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	labels := make([]string, len(r.Results))
	labelW := utf8.RuneCountInString(m.released)
	for i := range r.Results {
		labels[i] = shorten(r.Results[i].Label, maxLabelWidth, opt.ASCII)
		labelW = max(labelW, utf8.RuneCountInString(labels[i]))
	}
	labelW += 2
	width := opt.Width
	if width <= 0 {
		width = DefaultTermWidth
	}
	width = max(width, minTermWidth)
	W := time.Duration(r.Limit.PerNs)
	g := layout(t0, t1, W, width-labelW, 1)
	abs := AbsoluteTimes(r)
	g.setAbsolute(abs)
	// Draw the releases of delayed requests too when that keeps the slot.
	var last time.Duration
	for _, ds := range decisions {
		for i := range ds {
			if ds[i].Verdict == algorithms.Delay {
				last = max(last, ds[i].Time+ds[i].Delay)
			}
		}
	}
	if last > t1 {
		if h := layout(t0, last, W, width-labelW, 1); h.slot == g.slot {
			g = h
			g.setAbsolute(abs)
		}
	}

	p := &painter{color: opt.Color}
	timelineHeading(p, g)
	type note struct {
		labels      []string
		n           int
		first, last time.Duration
	}
	var notes []*note
	split := false
	for i := range r.Results {
		if i >= len(decisions) {
			break
		}
		aw := time.Duration(r.Results[i].Limit.PerNs)
		if aw <= 0 {
			aw = W
		}
		arrivals := make([][nKinds]int, g.slots)
		releases := make([][nKinds]int, g.slots)
		delayed, later := false, 0
		var first, last time.Duration
		for j := range decisions[i] {
			d := &decisions[i][j]
			k := kindOf(d.Verdict)
			arrivals[g.slotOf(d.Time)][k]++
			if k != kindDelay {
				continue
			}
			delayed = true
			at := d.Time + d.Delay
			if at >= g.end {
				if later == 0 || at < first {
					first = at
				}
				later++
				last = max(last, at)
				continue
			}
			releases[g.slotOf(at)][kindAccept]++
		}
		p.text(pad(labels[i], labelW))
		if rejections := splitRejections(arrivals); rejections != nil {
			// admissions and rejections share a column: each on its line,
			// so that no admission hides under a rejection
			split = true
			g.row(p, &m, arrivals, aw)
			p.text("\n" + pad(m.rejected, labelW))
			g.row(p, &m, rejections, aw)
		} else {
			g.row(p, &m, arrivals, aw)
		}
		p.text("\n")
		if delayed {
			p.text(pad(m.released, labelW))
			g.row(p, &m, releases, aw)
			p.text("\n")
		}
		if later > 0 {
			var nt *note
			for _, x := range notes {
				if x.n == later && x.first == first && x.last == last {
					nt = x
				}
			}
			if nt == nil {
				nt = &note{n: later, first: first, last: last}
				notes = append(notes, nt)
			}
			nt.labels = append(nt.labels, r.Results[i].Label)
		}
	}
	g.axis(p, &m, labelW, width)
	for _, nt := range notes {
		each := ""
		if len(nt.labels) > 1 {
			each = " each"
		}
		when := " at " + g.label(nt.first)
		if nt.last != nt.first {
			when = " from " + g.label(nt.first) + " to " + g.label(nt.last)
		}
		p.text("Later, " + Join(nt.labels) + " released " + plural(int64(nt.n), "more delayed request") +
			each + "," + when + ".\n")
	}
	legend(p, &m, g, width)
	if split {
		p.text(strings.TrimSpace(m.rejected) + ": where a column holds admissions and rejections, the rejections are on this line\n")
	}
	_, err := w.Write(p.buf.Bytes())
	return err
}

// splitRejections moves a row's rejections to a line of their own when a
// column holds both an admission (accepted or delayed) and a rejection,
// and returns that line; nil, leaving counts alone, when none does.
func splitRejections(counts [][nKinds]int) [][nKinds]int {
	mixed := false
	for _, c := range counts {
		mixed = mixed || c[kindReject] > 0 && c[kindAccept]+c[kindDelay] > 0
	}
	if !mixed {
		return nil
	}
	rej := make([][nKinds]int, len(counts))
	for i := range counts {
		rej[i][kindReject] = counts[i][kindReject]
		counts[i][kindReject] = 0
	}
	return rej
}

func kindOf(v algorithms.Verdict) int {
	switch v {
	case algorithms.Accept:
		return kindAccept
	case algorithms.Delay:
		return kindDelay
	case algorithms.Reject:
		return kindReject
	}
	return kindNone
}

// grid is the time axis of a drawing: slots of slot from start to end
// (exclusive), and the columns that draw them, some of which are window
// boundaries between slots.
type grid struct {
	start, end, slot, tick time.Duration
	w                      time.Duration // the report's window
	slots                  int
	seps                   bool // boundaries have columns of their own
	origin                 time.Duration
	absolute               bool // replayed times: labels are offsets from origin
}

// layout picks the slot (a multiple of unit), the ticks and the span for
// instants between t0 and t1 (inclusive) on cols columns.
func layout(t0, t1, w time.Duration, cols int, unit time.Duration) grid {
	var g grid
	for _, slot := range niceSteps() {
		if slot%unit != 0 {
			continue
		}
		tick := slot
		for _, s := range niceSteps() {
			if s >= slot*minTickGap && s%slot == 0 {
				tick = s
				break
			}
		}
		start := floorTo(t0, tick)
		end := floorTo(t1, tick) + tick
		if end < start { // overflow: as wide as it gets
			end = t1 + 1
		}
		n := int64((end - start) / slot)
		if n > int64(cols) {
			continue
		}
		g = grid{start: start, end: end, slot: slot, tick: tick, w: w, slots: int(n)}
		if w > 0 && w%slot == 0 {
			seps := int64(0)
			for b := floorTo(start, w) + w; b < end; b += w {
				if b > start {
					seps++
				}
			}
			if seps > 0 && seps*4 <= n && n+seps <= int64(cols) {
				g.seps = true
			}
		}
		break
	}
	if g.slots == 0 { // nothing fits: one slot for everything
		span := (t1 + 1 - t0 + unit - 1) / unit * unit
		g = grid{start: t0, end: t0 + span, slot: span, tick: span, w: w, slots: 1}
	}
	g.origin = 0
	if int64(g.start) >= epoch2000 {
		g.absolute, g.origin = true, g.start
	}
	return g
}

// setAbsolute makes the grid's instants absolute (labelled from a date)
// when abs, whatever their year: a replayed trace's.
func (g *grid) setAbsolute(abs bool) {
	if abs {
		g.absolute, g.origin = true, g.start
	}
}

// niceSteps are the slot and tick lengths: 1, 2, 5 x 10^n up to 5s, then
// 10s, 15s, 30s, 1m, 2m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 24h and
// doublings.
func niceSteps() []time.Duration {
	var out []time.Duration
	for d := time.Duration(1); d < 10*time.Second; d *= 10 {
		out = append(out, d, 2*d, 5*d)
	}
	out = append(out, 10*time.Second, 15*time.Second, 30*time.Second,
		time.Minute, 2*time.Minute, 5*time.Minute, 10*time.Minute, 15*time.Minute, 30*time.Minute,
		time.Hour, 2*time.Hour, 3*time.Hour, 6*time.Hour, 12*time.Hour, 24*time.Hour)
	for d := 48 * time.Hour; d > 0 && d < 1<<61; d *= 2 {
		out = append(out, d)
	}
	return out
}

// floorTo rounds t down to a multiple of step (toward minus infinity).
func floorTo(t, step time.Duration) time.Duration {
	q := t / step
	if t%step < 0 {
		q--
	}
	return q * step
}

func (g *grid) slotOf(t time.Duration) int {
	i := int((t - g.start) / g.slot)
	return min(max(i, 0), g.slots-1)
}

// sepBefore says whether slot i has a boundary column before it.
func (g *grid) sepBefore(i int) bool {
	if !g.seps || i == 0 {
		return false
	}
	return (g.start+time.Duration(i)*g.slot)%g.w == 0
}

// column is the column (from 0, after the labels) where instant t is
// drawn: a boundary's own column when t is one, else its slot's; the end
// of the span is one past the last column.
func (g *grid) column(t time.Duration) int {
	i := int((t - g.start) / g.slot)
	col := i
	for j := 1; j <= min(i, g.slots-1); j++ {
		if g.sepBefore(j) {
			col++
		}
	}
	if i < g.slots && g.sepBefore(i) && (t-g.start)%g.slot == 0 {
		col-- // the boundary's own column, just before the slot
	}
	return col
}

// width is the number of columns of the drawing.
func (g *grid) width() int { return g.column(g.end) }

// row draws one line of marks; w is the algorithm's window.
func (g *grid) row(p *painter, m *termMarks, counts [][nKinds]int, w time.Duration) {
	for i := range counts {
		if g.sepBefore(i) {
			p.colored("", m.boundary)
		}
		k, total := kindNone, 0
		for kind := kindAccept; kind < nKinds; kind++ {
			if counts[i][kind] > 0 {
				k = kind
			}
			total += counts[i][kind]
		}
		switch {
		case total == 1:
			p.colored(kindColor[k], m.one[k])
		case total > 1:
			p.colored(kindColor[k], m.several[k])
		case g.boundaryIn(i, w):
			p.colored("", m.boundary)
		default:
			p.colored(ansiDim, m.empty)
		}
	}
	p.reset()
}

// boundaryIn says whether slot i holds a boundary of windows of w that has
// no column of its own.
func (g *grid) boundaryIn(i int, w time.Duration) bool {
	if w <= 0 || (g.seps && w == g.w) {
		return false
	}
	from := g.start + time.Duration(i)*g.slot
	b := floorTo(from+g.slot-1, w) // the last boundary before the slot's end
	return b >= from
}

// label writes instant t for the axis.
func (g *grid) label(t time.Duration) string {
	if g.absolute {
		if t == g.origin {
			return "0"
		}
		return "+" + FormatDuration(t-g.origin)
	}
	return FormatDuration(t)
}

// boundaryTicks says whether the axis ticks every window boundary: when
// they have no columns of their own, fall on slot edges, and are at most
// one every other slot.
func (g *grid) boundaryTicks() bool {
	return g.w > 0 && !g.seps && g.w%g.slot == 0 && int64(g.end-g.start)/int64(g.w) <= int64(g.slots/2)
}

// axis draws the ticks and their times under the lines (and a tick at
// every window boundary, see boundaryTicks).
func (g *grid) axis(p *painter, m *termMarks, labelW, width int) {
	n := g.width() + 1
	ticks := []rune(strings.Repeat(" ", n))
	names := []rune(strings.Repeat(" ", width-labelW))
	tick, _ := utf8.DecodeRuneInString(m.tick)
	if g.boundaryTicks() {
		for b := floorTo(g.start, g.w); b < g.end; b += g.w {
			if b >= g.start {
				ticks[g.column(b)] = tick
			}
		}
	}
	free := 0 // the first column a label may start at
	for t := g.start; t <= g.end; t += g.tick {
		c := g.column(t)
		if c >= n {
			break
		}
		ticks[c] = tick
		s := []rune(g.label(t))
		at := c
		if at+len(s) > len(names) {
			at = len(names) - len(s) // the last label may end at its tick
		}
		if at >= free && at >= 0 {
			copy(names[at:], s)
			free = at + len(s) + 2
		}
	}
	p.text(strings.Repeat(" ", labelW))
	p.colored(ansiDim, strings.TrimRight(string(ticks), " "))
	p.reset()
	p.text("\n" + strings.Repeat(" ", labelW))
	p.colored(ansiDim, strings.TrimRight(string(names), " "))
	p.reset()
	p.text("\n")
}

// timelineHeading writes the line above the timeline.
func timelineHeading(p *painter, g grid) {
	from := g.label(g.start)
	if g.absolute {
		from = FormatInstant(int64(g.start), true)
	}
	p.text("Timeline from " + from + " to " + g.label(g.end) + ", one column = " +
		FormatDuration(g.slot) + ":\n")
}

// legend writes what the marks mean, wrapped to the width.
func legend(p *painter, m *termMarks, g grid, width int) {
	items := []string{
		m.one[kindAccept] + " admitted",
		m.one[kindDelay] + " delayed",
		m.one[kindReject] + " rejected",
		m.several[kindAccept] + m.several[kindDelay] + m.several[kindReject] + " several in a column (most notable)",
	}
	if g.w > 0 {
		b := m.boundary + " window boundary"
		switch {
		case g.seps:
		case g.boundaryTicks():
			b += " in an empty column, " + m.tick + " on the axis"
		default:
			b += " in an empty column"
		}
		items = append(items, b+" (every "+FormatDuration(g.w)+")")
	}
	line := ""
	for _, it := range items {
		if line != "" && utf8.RuneCountInString(line)+2+utf8.RuneCountInString(it) > width {
			p.text(line + "\n")
			line = ""
		}
		if line != "" {
			line += "  "
		}
		line += it
	}
	p.text(line + "\n")
}

// painter writes marks, colouring runs of one colour once.
type painter struct {
	buf   bytes.Buffer
	color bool
	cur   string // the colour in effect
}

func (p *painter) colored(color, s string) {
	if p.color && color != p.cur {
		if p.cur != "" {
			p.buf.WriteString(ansiReset)
		}
		p.buf.WriteString(color)
		p.cur = color
	}
	p.buf.WriteString(s)
}

func (p *painter) reset() {
	if p.cur != "" {
		p.buf.WriteString(ansiReset)
		p.cur = ""
	}
}

func (p *painter) text(s string) {
	p.reset()
	p.buf.WriteString(s)
}

// pad pads s with spaces to n columns.
func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int, ascii bool) string {
	s = oneLine(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if ascii {
		return string(r[:n-1]) + "~"
	}
	return string(r[:n-1]) + "…"
}

// StripRow is one line of TermStrip: counts per bucket of BucketNs, bucket
// i covering [StartNs + i*BucketNs, StartNs + (i+1)*BucketNs).
type StripRow struct {
	Label    string
	StartNs  int64
	BucketNs int64
	Counts   []int64
}

// TermStrip draws counts per bucket (sim.Series) as one line of levels per
// row, on a shared scale, for runs too large for TermTimeline: a retry herd
// returning every second shows as a comb. It draws the span [from, to),
// widened to whole axis ticks; a column covers a whole number of buckets
// and shows the largest bucket among them (so the levels keep the bucket's
// unit, e.g. attempts per 100ms, which the heading names with what). The
// levels are " ▁▂▃▄▅▆▇█" (ASCII " .:-=+*#%@"), the top one the largest count
// of all rows; a count above 0 never draws as blank. An axis follows, and
// the count the top level stands for.
func TermStrip(w io.Writer, rows []StripRow, from, to time.Duration, what string, opt TermOptions) error {
	if len(rows) == 0 || to <= from {
		return nil
	}
	levels := []rune(" ▁▂▃▄▅▆▇█")
	m := unicodeMarks
	if opt.ASCII {
		levels = []rune(" .:-=+*#%@")
		m = asciiMarks
	}
	labelW := 0
	bucket := time.Duration(1)
	for _, r := range rows {
		labelW = max(labelW, utf8.RuneCountInString(shorten(r.Label, maxLabelWidth, opt.ASCII)))
		bucket = max(bucket, time.Duration(r.BucketNs))
	}
	labelW += 2
	width := opt.Width
	if width <= 0 {
		width = DefaultTermWidth
	}
	width = max(width, minTermWidth)
	g := layout(from, to-1, 0, width-labelW, bucket)
	g.setAbsolute(opt.Absolute)
	cols := make([][]int64, len(rows))
	var top int64
	for i, r := range rows {
		cols[i] = make([]int64, g.slots)
		for b, c := range r.Counts {
			at := time.Duration(r.StartNs + int64(b)*r.BucketNs)
			if at < g.start || at >= g.end {
				continue
			}
			s := g.slotOf(at)
			cols[i][s] = max(cols[i][s], c)
			top = max(top, c)
		}
	}
	p := &painter{color: opt.Color}
	from0 := g.label(g.start)
	if g.absolute {
		from0 = FormatInstant(int64(g.start), true)
	}
	p.text(what + " in each " + FormatDuration(bucket) + ", from " + from0 + " to " + g.label(g.end) +
		", one column = " + FormatDuration(g.slot) + " (its busiest " + FormatDuration(bucket) + "):\n")
	for i, r := range rows {
		p.text(pad(shorten(r.Label, maxLabelWidth, opt.ASCII), labelW))
		var b strings.Builder
		for _, c := range cols[i] {
			b.WriteRune(levels[level(c, top, len(levels)-1)])
		}
		p.colored("", strings.TrimRight(b.String(), " "))
		p.text("\n")
	}
	g.axis(p, &m, labelW, width)
	p.text("The tallest mark (" + string(levels[len(levels)-1]) + ") is " + strconv.FormatInt(top, 10) + " " + what +
		" in one " + FormatDuration(bucket) + ".\n")
	_, err := w.Write(p.buf.Bytes())
	return err
}

// level maps c in [0, top] to 0..n, anything above 0 to at least 1.
func level(c, top int64, n int) int {
	if c <= 0 || top <= 0 {
		return 0
	}
	l := int((c*int64(n) + top - 1) / top) // round up
	return min(max(l, 1), n)
}
