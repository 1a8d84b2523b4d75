package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

func TestProgressBar(t *testing.T) {
	var errb bytes.Buffer
	asTerminal(t, 100, &errb)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	old := wallClock
	wallClock = clock.now
	t.Cleanup(func() { wallClock = old })

	p := newProgress(&errb)
	require.NotNil(t, p)
	hook := p.hook()
	hook(time.Second, 20*time.Second)
	require.Empty(t, errb.String(), "nothing during the first second: short runs never show a bar")

	clock.t = clock.t.Add(2 * time.Second)
	hook(5*time.Second, 20*time.Second)
	got := errb.String()
	require.True(t, strings.HasPrefix(got, "\rsimulated 5s of 20s ["), got)
	require.Contains(t, got, "] 25%  elapsed 2s, about 6s left")
	require.LessOrEqual(t, len(got)-1, 99, "fits the terminal")

	clock.t = clock.t.Add(50 * time.Millisecond)
	hook(6*time.Second, 20*time.Second)
	require.Equal(t, got, errb.String(), "not redrawn within progressEvery")

	clock.t = clock.t.Add(time.Second)
	hook(10*time.Second, 20*time.Second)
	require.Contains(t, errb.String(), "simulated 10s of 20s")

	errb.Reset()
	p.done()
	require.Regexp(t, "^\r +\r$", errb.String(), "the bar is erased")
}

func TestProgressLine(t *testing.T) {
	require.Equal(t, "simulated 10s of 20s [============>           ] 50%  elapsed 4s, about 4s left",
		progressLine(10*time.Second, 20*time.Second, 4*time.Second, 79))
	require.Equal(t, "replayed 5m12s of the trace  elapsed 3s",
		progressLine(5*time.Minute+12*time.Second, 0, 3*time.Second, 79))
	require.Equal(t, "simulated 20s of 20s [========================] 100%  elapsed 4s, almost done",
		progressLine(20*time.Second, 20*time.Second, 4*time.Second, 79))
	require.LessOrEqual(t, len(progressLine(10*time.Second, 20*time.Second, 4*time.Second, 30)), 30)
}

// TestProgressLeavesStdoutAlone runs a long run twice, once with stderr a
// terminal that draws the bar: stdout is the same, byte for byte.
func TestProgressLeavesStdoutAlone(t *testing.T) {
	path := writeFile(t, "long.yaml", `name: long
duration: 3s
limit: 100/s
traffic:
  - type: steady
    rate: 100000/s
`)
	args := []string{"compare", path, "--algorithms", "fixed-window,gcra"}
	var plainOut, plainErr bytes.Buffer
	require.Equal(t, 0, runWith(&plainOut, &plainErr, args...))
	require.Empty(t, plainErr.String())

	delay, every := progressDelay, progressEvery
	progressDelay, progressEvery = 0, 0
	t.Cleanup(func() { progressDelay, progressEvery = delay, every })
	var out, errb bytes.Buffer
	asTerminal(t, 80, &errb)
	require.Equal(t, 0, runWith(&out, &errb, args...))
	require.Contains(t, errb.String(), "simulated ")
	require.True(t, strings.HasSuffix(errb.String(), "\r"), "the bar is erased at the end")
	require.Equal(t, plainOut.String(), out.String())
}
