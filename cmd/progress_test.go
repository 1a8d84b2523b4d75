package cmd

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/sweep"
)

func TestProgressNotOnAPipe(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	require.Nil(t, p, "no bar when stderr is not a terminal")
	require.Nil(t, p.hook(), "and no hook: the engine does not even count")
	p.done()
	require.Empty(t, buf.String())
}

// fakeClock is a wall clock that moves when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// onTerminal makes errb a terminal of the given width and the wall clock
// a fake one, for the bar's test.
func onTerminal(t *testing.T, width int, errb *bytes.Buffer) *fakeClock {
	asTerminal(t, width, errb)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	old := wallClock
	wallClock = clock.now
	t.Cleanup(func() { wallClock = old })
	return clock
}

// lastDrawing is what the terminal shows of the bar: the text after the
// last carriage return that is not blank.
func lastDrawing(s string) string {
	parts := strings.Split(s, "\r")
	for i := len(parts) - 1; i >= 0; i-- {
		if strings.TrimSpace(parts[i]) != "" {
			return strings.TrimSpace(parts[i])
		}
	}
	return ""
}

// erased says whether the terminal's line is blank at the end of s.
func erased(s string) bool {
	i := strings.LastIndex(strings.TrimRight(s, "\r"), "\r")
	return strings.HasSuffix(s, "\r") && strings.TrimSpace(s[i+1:]) == ""
}

func TestProgressBar(t *testing.T) {
	var errb bytes.Buffer
	clock := onTerminal(t, 100, &errb)
	p := newProgress(&errb)
	require.NotNil(t, p)
	hook := p.hook()
	hook(time.Second, 20*time.Second)
	require.Empty(t, errb.String(), "nothing during the first second: short runs never show a bar")

	clock.t = clock.t.Add(2 * time.Second)
	hook(5*time.Second, 20*time.Second)
	got := lastDrawing(errb.String())
	require.True(t, strings.HasPrefix(got, "simulated 5s of 20s"), got)
	require.Contains(t, got, "25%")
	require.Contains(t, got, "[=====", "a bar a quarter full")
	for _, l := range strings.Split(errb.String(), "\r") {
		require.LessOrEqual(t, len(l), 100, "fits the terminal: %q", l)
	}

	drawn := errb.String()
	clock.t = clock.t.Add(50 * time.Millisecond)
	hook(6*time.Second, 20*time.Second)
	require.Equal(t, drawn, errb.String(), "not redrawn within progressEvery")

	clock.t = clock.t.Add(time.Second)
	hook(10*time.Second, 20*time.Second)
	got = lastDrawing(errb.String())
	require.True(t, strings.HasPrefix(got, "simulated 10s of 20s"), got)
	require.Contains(t, got, "50%")

	p.done()
	require.True(t, erased(errb.String()), "the bar is erased: %q", errb.String())
}

// TestProgressKinds: a trace without a duration has no total, so its bar
// says how far into the trace the run is; a sweep's bar counts its points;
// the charts' second run, after the first, says it follows the busiest key.
func TestProgressKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		draw func(p *progress)
		want string // the drawing shows it
		pct  string
	}{
		{"trace", func(p *progress) { p.hook()(5*time.Minute+12*time.Second, 0) }, "replayed 5m12s of the trace", ""},
		{"sweep", func(p *progress) { p.points(sweep.Progress{Done: 16.5, Total: 64}) }, "swept 16 of 64 points", "25%"},
		{"sweep of a trace", func(p *progress) {
			p.points(sweep.Progress{Done: 2, Total: 8, Replayed: 12*time.Minute + 3*time.Second})
		}, "swept 2 of 8 points, replayed 12m3s of the trace", ""},
		{"redis", func(p *progress) { p.redis("gcra", 1, 4, 1500*time.Millisecond, 3*time.Second) }, "on Redis: gcra (2 of 4), 1.5s", "37%"},
		{"the charts' second run", func(p *progress) {
			p.hook()(10*time.Second, 10*time.Second)
			now := p.now // a second later
			p.now = func() time.Time { return now().Add(time.Second) }
			p.keyHook()(3*time.Second, 10*time.Second)
		}, "busiest key: simulated 3s of 10s", "30%"},
	} {
		var errb bytes.Buffer
		clock := onTerminal(t, 80, &errb)
		p := newProgress(&errb)
		clock.t = clock.t.Add(2 * time.Second)
		c.draw(p)
		got := lastDrawing(errb.String())
		require.Contains(t, got, c.want, c.name)
		require.Contains(t, got, c.pct, c.name)
		p.done()
		require.True(t, erased(errb.String()), "%s: the bar is erased: %q", c.name, errb.String())
	}
}

// TestProgressLeavesStdoutAlone runs a long compare and a sweep twice,
// once with stderr a terminal that draws the bar: the bar shows the
// simulated time (the sweep's, its points) and is erased at the end;
// stdout is the same, byte for byte. "Long" is 100,000 arrivals, past
// the sim.ProgressEvery events after which a run first reports.
func TestProgressLeavesStdoutAlone(t *testing.T) {
	path := writeFile(t, "long.yaml", `name: long
duration: 1s
limit: 100/s
traffic:
  - type: steady
    rate: 100000/s
`)
	// a trace replayed without a duration: its length is known at its end
	var trace strings.Builder
	trace.WriteString("time\n")
	for i := range 100000 {
		trace.WriteString(strconv.Itoa(i) + "\n")
	}
	tracePath := writeFile(t, "trace.csv", trace.String())
	replay := writeFile(t, "replay.yaml", `name: replay
limit: 100/s
traffic:
  - type: replay
    path: `+tracePath+`
    time-field: time
    time-unit: ms
`)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"compare", path, "--algorithms", "fixed-window,gcra"}, "simulated "},
		{[]string{"sweep", path, "--vary", "limit.burst=1,5,10"}, "swept "},
		{[]string{"sweep", replay, "--vary", "limit.burst=1,5,10"}, "replayed "},
		{[]string{"traffic", path}, "simulated "},
	} {
		var plainOut, plainErr bytes.Buffer
		require.Equal(t, 0, runWith(&plainOut, &plainErr, c.args...))
		require.NotContains(t, plainErr.String(), c.says, "no bar on a pipe")

		delay, every := progressDelay, progressEvery
		progressDelay, progressEvery = 0, 0
		var out, errb bytes.Buffer
		asTerminal(t, 80, &errb)
		require.Equal(t, 0, runWith(&out, &errb, c.args...))
		progressDelay, progressEvery = delay, every
		require.Contains(t, errb.String(), c.says, "%v: %q", c.args, errb.String())
		require.True(t, erased(errb.String()), "%s: the bar is erased at the end: %q", c.args[0], errb.String())
		require.Equal(t, plainOut.String(), out.String(), c.args[0])
	}
}
