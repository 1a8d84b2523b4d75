package output

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// burstDecisions are the double burst's decisions by fixed-window (all
// admitted) and sliding-log (the second ten rejected), and a shaper that
// admits the first, delays the next four by 100ms steps and rejects the
// rest.
func burstDecisions() (*sim.Report, [][]sim.Decision) {
	l := sim.Limit{Rate: 10, PerNs: s, Burst: 10}
	r := &sim.Report{Scenario: "double-burst", Limit: l, DurationNs: 3 * s, Results: []sim.Result{
		{Label: "fixed-window", Limit: l}, {Label: "sliding-log", Limit: l}, {Label: "shaper", Limit: l},
	}}
	ds := make([][]sim.Decision, 3)
	for i := 0; i < 20; i++ {
		at := time.Duration(900*ms + int64(i)*10*ms)
		d := sim.Decision{Time: at, Key: "alice", Cost: 1, Attempt: 1}
		ds[0] = append(ds[0], d)
		if i >= 10 {
			d.Verdict = algorithms.Reject
		}
		ds[1] = append(ds[1], d)
		d.Verdict = algorithms.Reject
		switch {
		case i == 0:
			d.Verdict = algorithms.Accept
		case i < 5:
			d.Verdict, d.Delay = algorithms.Delay, time.Duration(int64(i)*100*ms-int64(i)*10*ms)
		}
		ds[2] = append(ds[2], d)
	}
	return r, ds
}

func drawTerm(t *testing.T, r *sim.Report, ds [][]sim.Decision, opt TermOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := TermTimeline(&buf, r, ds, opt); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTermTimelineDoubleBurst(t *testing.T) {
	r, ds := burstDecisions()
	got := drawTerm(t, r, ds, TermOptions{Width: 80, ASCII: true})
	want := `Timeline from 900ms to 1.1s, one column = 5ms:
fixed-window  o.o.o.o.o.o.o.o.o.o.|o.o.o.o.o.o.o.o.o.o.
sliding-log   o.o.o.o.o.o.o.o.o.o.|x.x.x.x.x.x.x.x.x.x.
shaper        o.d.d.d.d.x.x.x.x.x.|x.x.x.x.x.x.x.x.x.x.
  > released  ....................|o...................
              '         '         '          '         '
              900ms     950ms     1s         1.05s     1.1s
Later, shaper released 3 more delayed requests, from 1.1s to 1.3s.
o admitted  d delayed  x rejected  ODX several in a column (most notable)
| window boundary (every 1s)
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTermTimelineSeveralInOneSlot(t *testing.T) {
	// On 40 columns the 5ms slots no longer fit: 10ms slots still give each
	// request its own column; 20ms slots put two in each, and a slot with
	// admitted and rejected requests shows both, on two lines.
	r, ds := burstDecisions()
	got := drawTerm(t, r, ds, TermOptions{Width: 40, ASCII: true})
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[0], "Timeline from 900ms to 1.1s, one column = 10ms") {
		t.Fatalf("heading: %q", lines[0])
	}
	if lines[2] != "sliding-log   oooooooooo|xxxxxxxxxx" {
		t.Errorf("sliding-log line: %q", lines[2])
	}
	one := []sim.Decision{
		{Time: 0, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
		{Time: 1, Decision: algorithms.Decision{Verdict: algorithms.Reject}},
		{Time: 2, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
		{Time: 30 * time.Second, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
	}
	r1 := &sim.Report{Limit: sim.Limit{Rate: 1, PerNs: s, Burst: 1}, Results: []sim.Result{{Label: "a"}}}
	got = drawTerm(t, r1, [][]sim.Decision{one}, TermOptions{Width: 40, ASCII: true})
	rows := strings.Split(got, "\n")
	if !strings.HasPrefix(rows[1], "a             O") || !strings.HasPrefix(rows[2], "  > rejected  x") {
		t.Errorf("a slot with two admitted and a rejected request shows O, and x on the rejected line: %q", rows[1:3])
	}
}

func TestTermTimelineFitsWidth(t *testing.T) {
	r, ds := burstDecisions()
	for _, width := range []int{40, 57, 80, 100, 133, 200} {
		for _, ascii := range []bool{false, true} {
			got := drawTerm(t, r, ds, TermOptions{Width: width, ASCII: ascii})
			for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if strings.HasPrefix(l, "Timeline") || strings.HasPrefix(l, "Later") {
					continue // sentences are not drawn to width
				}
				if n := utf8.RuneCountInString(l); n > width {
					t.Errorf("width %d: line of %d columns: %q", width, n, l)
				}
			}
		}
	}
}

func TestTermTimelineColor(t *testing.T) {
	r, ds := burstDecisions()
	plain := drawTerm(t, r, ds, TermOptions{Width: 80})
	if strings.Contains(plain, "\x1b[") {
		t.Fatal("colour codes without Color")
	}
	colored := drawTerm(t, r, ds, TermOptions{Width: 80, Color: true})
	for _, code := range []string{"\x1b[32m•", "\x1b[31m×", "\x1b[33m◦", ansiReset} {
		if !strings.Contains(colored, code) {
			t.Errorf("no %q in the coloured timeline", code)
		}
	}
	// Without the codes it is the plain drawing.
	stripped := colored
	for _, code := range []string{"\x1b[32m", "\x1b[31m", "\x1b[33m", ansiDim, ansiReset} {
		stripped = strings.ReplaceAll(stripped, code, "")
	}
	if stripped != plain {
		t.Errorf("coloured drawing differs from the plain one beyond its codes:\n%s\n%s", stripped, plain)
	}
}

func TestTermTimelineReplayedTimes(t *testing.T) {
	// Replayed traffic keeps its absolute times: the heading gives the
	// start and the axis offsets from it.
	base := time.Duration(1_764_252_000 * s) // 2025-11-27T14:00:00Z
	ds := []sim.Decision{{Time: base}, {Time: base + 90*time.Second}}
	r := &sim.Report{Limit: sim.Limit{Rate: 1, PerNs: 60 * s, Burst: 1}, Results: []sim.Result{{Label: "gcra"}}}
	got := drawTerm(t, r, [][]sim.Decision{ds}, TermOptions{Width: 80, ASCII: true})
	if !strings.HasPrefix(got, "Timeline from 2025-11-27T14:00:00Z to +") {
		t.Errorf("heading: %s", got)
	}
	if !strings.Contains(got, "+1m") {
		t.Errorf("axis offsets: %s", got)
	}
}

func TestTermTimelineEmpty(t *testing.T) {
	r := &sim.Report{Results: []sim.Result{{Label: "a"}}}
	if got := drawTerm(t, r, [][]sim.Decision{nil}, TermOptions{}); got != "" {
		t.Errorf("no decisions, no drawing: %q", got)
	}
	if err := TermTimeline(&bytes.Buffer{}, nil, nil, TermOptions{}); err == nil {
		t.Error("nil report: no error")
	}
}

func TestLayoutBoundariesInSlots(t *testing.T) {
	// Windows that do not fall on slot edges (or are too many) are marked
	// inside empty slots.
	g := layout(0, 20*time.Minute-1, time.Minute, 64, 1)
	if g.seps {
		t.Fatalf("20 boundaries over %d slots get their own columns", g.slots)
	}
	marks := 0
	for i := 0; i < g.slots; i++ {
		if g.boundaryIn(i, time.Minute) {
			marks++
		}
	}
	if marks != 20 { // 0, 1m, ..., 19m
		t.Errorf("%d slots hold a boundary, want 20 (slot %v, span %v..%v)", marks, g.slot, g.start, g.end)
	}
}

func TestTermStrip(t *testing.T) {
	rows := []StripRow{
		{Label: "herd", BucketNs: 100 * ms, Counts: []int64{60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 60, 1}},
		{Label: "jitter", BucketNs: 100 * ms, Counts: []int64{20, 5, 5, 5, 5, 5, 5, 5, 5, 5, 20, 5}},
	}
	var buf bytes.Buffer
	if err := TermStrip(&buf, rows, 0, 1200*time.Millisecond, "attempts", TermOptions{Width: 60, ASCII: true}); err != nil {
		t.Fatal(err)
	}
	want := `attempts in each 100ms, from 0 to 2s, one column = 100ms (its busiest 100ms):
herd    @         @.
jitter  -.........-.
        '         '         '
        0         1s        2s
The tallest mark (@) is 60 attempts in one 100ms.
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		c, top int64
		want   int
	}{{0, 10, 0}, {1, 1000, 1}, {10, 10, 9}, {5, 10, 5}, {3, 0, 0}} {
		if got := level(tc.c, tc.top, 9); got != tc.want {
			t.Errorf("level(%d, %d) = %d, want %d", tc.c, tc.top, got, tc.want)
		}
	}
}

// TestTermTimelineBurstAgainstPace: eight requests in 50ms, at 200ms a
// column, through a token bucket of burst 5 (five admitted, three
// rejected) and a leaky bucket (one admitted, four delayed, three
// rejected): the burst's column shows the admissions on the row's line
// and the rejections on a line of their own, where one mark used to say
// only "rejected".
func TestTermTimelineBurstAgainstPace(t *testing.T) {
	l := sim.Limit{Rate: 5, PerNs: s, Burst: 5}
	r := &sim.Report{Scenario: "burst", Limit: l, DurationNs: 10 * s, Results: []sim.Result{
		{Label: "token-bucket", Limit: l}, {Label: "leaky-bucket", Limit: l},
	}}
	ds := make([][]sim.Decision, 2)
	for i := range 8 {
		d := sim.Decision{Time: time.Duration(int64(i) * 50 * ms / 8), Key: "k", Cost: 1, Attempt: 1}
		tb, lb := d, d
		if i >= 5 {
			tb.Verdict = algorithms.Reject
		}
		switch {
		case i >= 5:
			lb.Verdict = algorithms.Reject
		case i > 0:
			lb.Verdict, lb.Delay = algorithms.Delay, time.Duration(int64(i)*200*ms)
		}
		ds[0], ds[1] = append(ds[0], tb), append(ds[1], lb)
	}
	late := sim.Decision{Time: time.Duration(9 * s), Key: "k", Cost: 1, Attempt: 1}
	ds[0], ds[1] = append(ds[0], late), append(ds[1], late)
	got := drawTerm(t, r, ds, TermOptions{Width: 80, ASCII: true})
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[1], "token-bucket  O") || !strings.HasPrefix(lines[2], "  > rejected  X") {
		t.Errorf("token-bucket's burst:\n%s", got)
	}
	if !strings.HasPrefix(lines[3], "leaky-bucket  D") || !strings.HasPrefix(lines[4], "  > rejected  X") ||
		!strings.HasPrefix(lines[5], "  > released  .oooo") {
		t.Errorf("leaky-bucket's burst:\n%s", got)
	}
	if !strings.Contains(got, "> rejected: where a column holds admissions and rejections") {
		t.Errorf("no legend of the rejected line:\n%s", got)
	}
}
