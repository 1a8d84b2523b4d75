package cmd

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/stretchr/testify/require"
)

// startServe runs `ratesim serve`'s server on a free loopback port until
// the test ends, and returns its address.
func startServe(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var said bytes.Buffer
	go func() { done <- servePlayground(ctx, ln, &said) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		require.Contains(t, said.String(), "http://"+ln.Addr().String()+"/")
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	return resp, body
}

// staleStatic is what TestServePlayground says when web/static was built
// from another tree (a built-in or a lesson landed without a rebuild).
const staleStatic = "web/static is older than the tree: rebuild it with .ci/build-web (docs/playground.md)"

// requireFresh fails, first saying to rebuild web/static, unless the
// presets of kind that web/static lists (got) are the tree's (want).
func requireFresh(t *testing.T, kind string, want, got []string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	var missing, extra []string
	for _, n := range want {
		if !slices.Contains(got, n) {
			missing = append(missing, n)
		}
	}
	for _, n := range got {
		if !slices.Contains(want, n) {
			extra = append(extra, n)
		}
	}
	t.Fatalf("%s: every %s is a preset, in order; the presets lack %v and have %v that the tree has not",
		staleStatic, kind, missing, extra)
}

// TestServePlayground: serve gives the page, the engine as the gzip file
// it is (under 3 MB, a WebAssembly module inside), and presets for every
// built-in and lesson, with the traces the lessons replay; nothing of it
// comes from elsewhere. The quick twin
// of TestPlaygroundInChromium.
func TestServePlayground(t *testing.T) {
	base := startServe(t)
	_, page := get(t, base+"/")
	require.Contains(t, string(page), "<title>ratesim playground</title>")
	require.NotContains(t, string(page), "http://", "no request outside the page's own")
	for _, f := range []string{"app.js", "worker.js", "style.css", "wasm_exec.js"} {
		get(t, base+"/"+f)
	}
	resp, gz := get(t, base+"/ratesim.wasm.gz")
	require.Equal(t, "application/gzip", resp.Header.Get("Content-Type"))
	require.Empty(t, resp.Header.Get("Content-Encoding"), "the worker unzips it")
	require.Less(t, len(gz), 3<<20, "at most 3 MB of wasm gzipped")
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	head := make([]byte, 4)
	_, err = io.ReadFull(zr, head)
	require.NoError(t, err)
	require.Equal(t, []byte("\x00asm"), head)

	_, data := get(t, base+"/presets.json")
	var presets struct {
		Builtins []struct {
			Name string `json:"name"`
			Fits bool   `json:"fits"`
		} `json:"builtins"`
		Lessons []struct {
			Name string `json:"name"`
			Text string `json:"text"`
			Runs []struct {
				Text  string   `json:"text"`
				Files []string `json:"files"`
			} `json:"runs"`
		} `json:"lessons"`
	}
	require.NoError(t, json.Unmarshal(data, &presets))
	var names []string
	for _, b := range presets.Builtins {
		names = append(names, b.Name)
	}
	var want []string
	for _, b := range scenarios.Builtins() {
		want = append(want, b.Name)
	}
	requireFresh(t, "built-in", want, names)
	var ls []string
	for _, l := range presets.Lessons {
		ls = append(ls, l.Name)
		require.True(t, strings.HasPrefix(l.Text, "Lesson "+l.Name+": "), "%s: %s", l.Name, staleStatic)
		require.NotEmpty(t, l.Runs, "every lesson runs in the page: %s: %s", l.Name, staleStatic)
		for _, r := range l.Runs {
			// a replay's trace is served beside the page, as bundled
			for _, f := range r.Files {
				require.Contains(t, r.Text, f, staleStatic)
				_, got := get(t, base+"/traces/"+f)
				want, err := scenarios.Trace(f)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s: %s", f, staleStatic)
			}
		}
	}
	requireFresh(t, "lesson", lessons.Names(), ls)
}

// TestServeBadAddr: an address serve cannot listen on exits 2.
func TestServeBadAddr(t *testing.T) {
	status, _, errOut := run(t, "serve", "--addr", "127.0.0.1:notaport")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "--addr: ")
}

// teachingBuiltins are the built-ins the lessons run: those whose rerun
// the page must draw within 200 ms (docs/playground.md).
func teachingBuiltins() []string {
	var names []string
	seen := map[string]bool{}
	for _, l := range lessons.All() {
		for _, r := range l.Runs {
			if r.Replay == nil && !seen[r.Scenario] {
				seen[r.Scenario] = true
				names = append(names, r.Scenario)
			}
		}
	}
	return names
}

// pageCounts are the results table of the page, by row label.
const pageCounts = `Object.fromEntries([...document.querySelectorAll("#results tbody tr")].map(tr =>
  [tr.dataset.label, Object.fromEntries([...tr.querySelectorAll("td[data-col]")].map(td => [td.dataset.col, +td.textContent]))]))`

// waitRuns waits until the page has finished more than n runs, and
// returns how many it has.
func waitRuns(t *testing.T, ctx context.Context, n int) int {
	t.Helper()
	return waitRunsFor(t, ctx, n, 600)
}

// waitRunsFor is waitRuns for a run that may take longer: tries times
// 50 ms.
func waitRunsFor(t *testing.T, ctx context.Context, n, tries int) int {
	t.Helper()
	for range tries {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[int](`+(document.body.dataset.runs || 0)`))
		require.NoError(t, err)
		if got > n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
	t.Fatalf("the page did not run again (after %d runs); it says %q", n, status)
	return 0
}

// rerunMs is how long the page's last run took, from asking the worker to
// the end of the drawing.
func rerunMs(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`+document.body.dataset.rerunMs`))
	require.NoError(t, err)
	return ms
}

// TestPlaygroundInChromium opens `ratesim serve`'s page in a real
// headless Chromium: the double-burst preset shows compare's counts, a
// moved control reruns it, a clicked request is explained, a scenario
// carried in the URL runs, and nothing logs a console error. It measures
// the rerun of every teaching built-in, and saves a screenshot (with
// -update into docs/images/playground.png, which docs/playground.md and
// the README show).
func TestPlaygroundInChromium(t *testing.T) {
	testenv.Long(t, "the playground in headless Chromium")
	exe := chromium()
	if exe == "" {
		t.Skip("no chromium on this machine: apt-get install chromium fonts-liberation (.ci/run installs them)")
	}
	base := startServe(t)
	ctx := browserTab(t, exe, 1400, 1000, 4*time.Minute)
	require.NoError(t, chromedp.Do(ctx))
	var mu sync.Mutex
	var problems []string
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, "console "+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, string(ev.Entry.Source)+": "+ev.Entry.Text)
			}
		}
	}))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/")))
	runs := waitRuns(t, ctx, 0)
	version, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("version")))
	require.NoError(t, err)
	require.Equal(t, "dev", version)

	// the double-burst preset: compare's counts
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#preset"), "builtin:double-burst")))
	do(t, ctx, `document.getElementById("preset").dispatchEvent(new Event("change"))`)
	runs = waitRuns(t, ctx, runs)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]map[string]int64](pageCounts))
	require.NoError(t, err)
	status, out, errOut := run(t, "compare", "double-burst", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var cli struct {
		Results []struct {
			Label                                string
			Offered, Accepted, Delayed, Rejected int64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cli))
	require.Len(t, got, len(cli.Results))
	for _, r := range cli.Results {
		require.Equal(t, r.Offered, got[r.Label]["offered"], r.Label)
		require.Equal(t, r.Accepted, got[r.Label]["accepted"], r.Label)
		require.Equal(t, r.Delayed, got[r.Label]["delayed"], r.Label)
		require.Equal(t, r.Rejected, got[r.Label]["rejected"], r.Label)
	}
	require.EqualValues(t, 20, got["fixed-window"]["accepted"])
	require.EqualValues(t, 10, got["sliding-log"]["accepted"])
	cmdLine, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("command")))
	require.NoError(t, err)
	require.Equal(t, "ratesim compare double-burst", cmdLine)

	// the timeline as a PNG, the download's picture: twice the chart's
	// size, the accepted requests green
	b64, err := chromedp.Run(ctx, chromedp.Evaluate[string](`png("timeline-svg").then(b => new Promise(r => {
	  const f = new FileReader(); f.onload = () => r(f.result.split(",")[1]); f.readAsDataURL(b); }))`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err, "the timeline's PNG")
	require.Equal(t, 1800, img.Bounds().Dx(), "the chart's 900 units, twice")
	green := false
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && !green; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == 0x2a && g>>8 == 0x8a && b>>8 == 0x3a {
				green = true
				break
			}
		}
	}
	require.True(t, green, "the accepted requests are drawn green in the PNG")

	// why this decision: sliding-log's first rejection, the 11th request
	slRow, err := chromedp.Run(ctx, chromedp.Evaluate[int](`+document.querySelector('#results tr[data-label="sliding-log"]').dataset.row`))
	require.NoError(t, err)
	clickDecision(t, ctx, slRow, 10)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#why-table tbody tr`))))
	why, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](fmt.Sprintf(`(() => {
	  const tr = document.querySelector('#why-table tr[data-row="%d"]');
	  return {head: document.getElementById("why-head").textContent,
	    verdict: tr.querySelector('[data-col="verdict"]').textContent,
	    before: tr.querySelector('[data-col="before"]').textContent,
	    after: tr.querySelector('[data-col="after"]').textContent};
	})()`, slRow)))
	require.NoError(t, err)
	require.Contains(t, why["head"], "Request at 1s, key alice")
	require.Equal(t, "reject", why["verdict"])
	require.Equal(t, "in window 10, limit 10", why["before"])
	require.Equal(t, "in window 10, limit 10", why["after"])

	// a control: the bursts 400ms past the boundary, both in one window
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#c-burst-offset"), "400")))
	do(t, ctx, `document.getElementById("c-burst-offset").dispatchEvent(new Event("change"))`)
	runs = waitRuns(t, ctx, runs)
	got, err = chromedp.Run(ctx, chromedp.Evaluate[map[string]map[string]int64](pageCounts))
	require.NoError(t, err)
	require.EqualValues(t, 10, got["fixed-window"]["accepted"], "both bursts in one window: the limit holds")
	yaml, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("yaml")))
	require.NoError(t, err)
	require.Contains(t, yaml, "at: 1300ms")

	// a scenario carried in the URL
	text := "name: linked\nduration: 2s\nlimit: {rate: 5, per: 1s}\nalgorithms: [fixed-window, sliding-log]\n" +
		"traffic:\n  - {type: steady, key: bob, rate: 10/s}\n"
	var z bytes.Buffer
	zw, err := flate.NewWriter(&z, flate.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write([]byte(text))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	link := base + "/#s=" + base64.RawURLEncoding.EncodeToString(z.Bytes())
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link)))
	waitRuns(t, ctx, 0)
	got, err = chromedp.Run(ctx, chromedp.Evaluate[map[string]map[string]int64](pageCounts))
	require.NoError(t, err)
	require.EqualValues(t, 20, got["sliding-log"]["offered"])
	require.EqualValues(t, 10, got["sliding-log"]["accepted"])
	yaml, err = chromedp.Run(ctx, chromedp.Value(chromedp.ID("yaml")))
	require.NoError(t, err)
	require.Equal(t, text, yaml)

	// an error at line:col
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("yaml"), strings.Replace(text, "rate: 5,", "rate: five,", 1)),
		chromedp.Click(chromedp.ID("run"))))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#errors li`))))
	errLine, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#errors li`)))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(errLine, "scenario.yaml:3:15: limit.rate: "), errLine)

	// a lesson's replay of a bundled trace: the page fetches the trace
	// from beside it and shows compare's counts of the same scenario
	lessonCounts(t, ctx)

	// a cluster row's why: kong-local-pods' sixth request, decided by the
	// store (row 2, central) with nothing in flight (web/play's
	// TestWhyOnACluster works it out)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/")))
	runs = waitRuns(t, ctx, 0)
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#preset"), "builtin:kong-local-pods")))
	do(t, ctx, `document.getElementById("preset").dispatchEvent(new Event("change"))`)
	runs = waitRuns(t, ctx, runs)
	clickDecision(t, ctx, 2, 5)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#why-table tbody tr`))))
	where, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#why-table tr[data-row="2"] [data-col="cluster"]').textContent`))
	require.NoError(t, err)
	require.Contains(t, where, "decided in the store at ")
	require.Contains(t, where, "0 store operations in flight (0 of this key)")

	// the rerun of each teaching built-in, after a control moves
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/")))
	runs = waitRuns(t, ctx, 0)
	var times []string
	for _, name := range teachingBuiltins() {
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#preset"), "builtin:"+name)))
		do(t, ctx, `document.getElementById("preset").dispatchEvent(new Event("change"))`)
		runs = waitRuns(t, ctx, runs)
		first := rerunMs(t, ctx)
		do(t, ctx, `(() => {
		  const c = document.getElementById("c-burst");
		  c.value = +c.value + 1;
		  c.dispatchEvent(new Event("change"));
		})()`)
		runs = waitRuns(t, ctx, runs)
		phases, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.phases`))
		require.NoError(t, err)
		times = append(times, fmt.Sprintf("%s %.0f/%.0f ms (%s)", name, first, rerunMs(t, ctx), phases))
	}
	t.Logf("run/rerun of the teaching built-ins (load %s): %s", loadAvg(), strings.Join(times, "; "))

	// the screenshot: double-burst's lesson, a rejection explained
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/")))
	waitRuns(t, ctx, 0)
	clickDecision(t, ctx, 1, 10)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#why-table tbody tr`))))
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, problems, "the page runs with no console error")
	path := filepath.Join(t.TempDir(), "playground.png")
	if *update {
		path = filepath.Join("..", "docs", "images", "playground.png")
	}
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)
}

// clickDecision clicks the mouse where the timeline draws decision index
// of row, as a user would.
func clickDecision(t *testing.T, ctx context.Context, row, index int) {
	t.Helper()
	do(t, ctx, `document.getElementById("timeline-svg").scrollIntoView()`)
	p, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ X, Y float64 }](fmt.Sprintf(`pointOf(%d, %d)`, row, index)))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y)))
}

// do runs a statement of JavaScript in the page.
func do(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("("+js+", true)"))
	require.NoError(t, err)
}

// loadAvg is the machine's load, for the log of the times measured.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// lessonCounts picks accuracy-on-real-traffic, whose runs replay a trace
// bundled with ratesim, and holds its first run's counts in the page to
// compare's of the same scenario beside the same trace.
func lessonCounts(t *testing.T, ctx context.Context) {
	t.Helper()
	runs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`+(document.body.dataset.runs || 0)`))
	require.NoError(t, err)
	l, ok := lessons.Named("accuracy-on-real-traffic")
	require.True(t, ok)
	r := l.Runs[0]
	require.NotNil(t, r.Replay)
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#preset"), "lesson:"+l.Name)))
	do(t, ctx, `document.getElementById("preset").dispatchEvent(new Event("change"))`)
	// 31,000 requests through three rows, a few seconds in WebAssembly
	// (more on a loaded machine)
	waitRunsFor(t, ctx, runs, 6000)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]map[string]int64](pageCounts))
	require.NoError(t, err)

	dir := t.TempDir()
	data, err := scenarios.Trace(r.Replay.Trace)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, r.Replay.Trace), data, 0o644))
	f, err := r.Replay.File(r.Replay.Trace)
	require.NoError(t, err)
	text, err := scenarios.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scenario.yaml"), text, 0o644))
	status, out, errOut := run(t, "compare", filepath.Join(dir, "scenario.yaml"), "--algorithms", r.Algorithms, "--format", "json")
	require.Equal(t, 0, status, errOut)
	var cli struct {
		Results []struct {
			Label                                string
			Offered, Accepted, Delayed, Rejected int64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cli))
	require.Len(t, got, 3)
	for _, c := range cli.Results {
		require.Greater(t, c.Offered, int64(30_000))
		require.Equal(t, c.Offered, got[c.Label]["offered"], c.Label)
		require.Equal(t, c.Accepted, got[c.Label]["accepted"], c.Label)
		require.Equal(t, c.Rejected, got[c.Label]["rejected"], c.Label)
	}
}
