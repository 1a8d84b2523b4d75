package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
)

// chartsWritten are the names of the charts a command wrote, from its
// "wrote DIR/NAME.svg" lines, in order.
func chartsWritten(stderr string) []string {
	var names []string
	for _, l := range strings.Split(stderr, "\n") {
		if p, ok := strings.CutPrefix(l, "wrote "); ok && strings.HasSuffix(p, ".svg") {
			names = append(names, strings.TrimSuffix(filepath.Base(p), ".svg"))
		}
	}
	return names
}

// externalRef finds what in a page could make a browser fetch anything:
// an attribute naming a URL or a file, a CSS url() or import, a script.
var externalRef = regexp.MustCompile(`(?i)\s(src|href|action|srcset|poster)\s*=|url\(|@import|<script|<link|<iframe|<object|<embed`)

// requireHas checks that a page holds s, without printing the page.
func requireHas(t *testing.T, page, s string) {
	t.Helper()
	if !strings.Contains(page, s) {
		t.Fatalf("the page lacks %q", s)
	}
}

// requireMatch checks that a page matches re, without printing the page.
func requireMatch(t *testing.T, re, page string) {
	t.Helper()
	if !regexp.MustCompile(re).MatchString(page) {
		t.Fatalf("the page does not match %q", re)
	}
}

// pageOf runs a command with --report and returns the page.
func pageOf(t *testing.T, args ...string) (page, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	status, _, errOut := run(t, append(args, "--report", path)...)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "wrote "+path+"\n")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data), errOut
}

// requireSelfContained checks that a page refers to nothing outside
// itself: no attribute or style that loads anything, and no URL but the
// SVG namespaces.
func requireSelfContained(t *testing.T, page string) {
	t.Helper()
	require.Empty(t, externalRef.FindAllString(page, -1), "a reference outside the page")
	rest := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(page)
	if u := regexp.MustCompile(`(?i)(https?|ftp|file)://\S*`).FindString(rest); u != "" {
		t.Fatalf("a URL in the page: %s", u)
	}
	requireHas(t, page, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`)
}

// TestReportPage: the page of compare --report holds the command, the
// scenario, the table of every column with its units, the findings and
// every chart --charts writes, as inline SVG, in the same order.
func TestReportPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	status, _, errOut := run(t, "compare", "double-burst", "--charts", dir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	want := chartsWritten(errOut)
	require.NotEmpty(t, want)

	page, _ := pageOf(t, "compare", "double-burst")
	requireSelfContained(t, page)
	requireHas(t, page, "<title>ratesim compare: double-burst</title>")
	requireMatch(t, `<pre id="command">ratesim compare double-burst --report \S+report.html</pre>`, page)
	requireHas(t, page, "<pre id=\"scenario\"># docs/algorithms.md, worked example 1: the fixed-window double burst.\nname: double-burst\n")
	requireHas(t, page, `<table class="results">`)
	requireHas(t, page, `<th class="left">algorithm</th><th>accepted<span class="unit">requests</span></th>`)
	requireHas(t, page, `<tr><td class="left">fixed-window</td><td>20</td><td>0</td><td>0</td><td>100.0</td><td>0</td><td>20 (2.0x)</td><td>16</td></tr>`)
	requireHas(t, page, "<li>fixed-window let 20 requests through in 1s starting at 900ms: 2.0x the limit of 10 per 1s.</li>")
	requireHas(t, page, "<p>accept % counts the delayed requests as accepted: (accepted &#43; delayed) / attempts.</p>")

	var got []string
	for _, m := range regexp.MustCompile(`<figure class="chart" id="chart-1-([a-z-]+)" data-chart="[a-z-]+">\n<figcaption>[a-z-]+</figcaption>\n<svg `).FindAllStringSubmatch(page, -1) {
		got = append(got, m[1])
	}
	require.Equal(t, want, got, "an inline svg per chart, in the order of --charts")
	require.Equal(t, len(want), strings.Count(page, "<svg "))
	require.False(t, strings.Contains(page, "<?xml"), "an XML prolog inside the page")
}

// TestReportPages: replay, sweep and demo write pages too, each with its
// scenario, its table and its charts.
func TestReportPages(t *testing.T) {
	t.Parallel()
	page, _ := pageOf(t, "replay", "../../shared/traces/azure_llm_2023_conv.csv", "--limit", "90000/m",
		"--cost-field", "ContextTokens", "--key-field", "none", "--algorithms", "token-bucket,sliding-log")
	requireSelfContained(t, page)
	requireHas(t, page, "cost-field: ContextTokens")
	requireHas(t, page, `<th>peak/1m<span class="unit">tokens</span></th>`)
	requireHas(t, page, "let 179786 tokens through in 1m")
	requireHas(t, page, "<svg ")

	page, _ = pageOf(t, "sweep", "double-burst", "--vary", "limit.burst=5..20:5")
	requireSelfContained(t, page)
	requireHas(t, page, "<title>ratesim sweep: double-burst</title>")
	requireHas(t, page, "name: double-burst")
	requireHas(t, page, `<pre class="text">`)
	requireHas(t, page, "<svg ")

	page, _ = pageOf(t, "demo", "double-burst")
	requireSelfContained(t, page)
	requireHas(t, page, "<title>ratesim demo double-burst: ")
	requireHas(t, page, "Lesson double-burst: ")
	requireHas(t, page, `<table class="results">`)
	requireHas(t, page, "<svg ")

	// each run of a lesson draws its lead chart first, as --charts writes
	// it: retry-storm's waves of rejections (multiples), in both its runs
	page, _ = pageOf(t, "demo", "retry-storm")
	first := map[string]string{}
	for _, m := range regexp.MustCompile(`id="chart-(\d+)-([a-z-]+)"`).FindAllStringSubmatch(page, -1) {
		if _, ok := first[m[1]]; !ok {
			first[m[1]] = m[2]
		}
	}
	require.Equal(t, map[string]string{"2": "multiples", "3": "multiples"}, first)
}

// chromium is the path of a Chromium or Chrome on this machine, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserTab starts the Chromium at exe headless with a window of w x h
// and returns a tab's context, cancelled after timeout or when the test
// ends.
func browserTab(t *testing.T, exe string, w, h int, timeout time.Duration) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // as root in a container
		chromedp.WindowSize(w, h),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancel)
	return ctx
}

// TestReportInChromium opens a --report page in a real headless Chromium:
// it loads with no console error and no request but the page's own, and
// the DOM shows the table and the first chart, drawn. It saves a
// screenshot of the page; with -update into docs/images/report.png, the
// one docs/charts.md shows.
func TestReportInChromium(t *testing.T) {
	testenv.Long(t, "the --report page in headless Chromium")
	exe := chromium()
	if exe == "" {
		t.Skip("no chromium on this machine: apt-get install chromium fonts-liberation (.ci/run installs them)")
	}
	dir := t.TempDir()
	status, _, errOut := run(t, "compare", "double-burst", "--charts", dir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	first := chartsWritten(errOut)[0]
	path := filepath.Join(dir, "double-burst.html")
	status, _, errOut = run(t, "compare", "double-burst", "--report", path)
	require.Equal(t, 0, status, errOut)
	url := "file://" + path

	ctx := browserTab(t, exe, 1000, 1400, 90*time.Second)

	// start the browser and its tab first, so that the listener misses
	// nothing of the page
	require.NoError(t, chromedp.Do(ctx))
	var mu sync.Mutex
	var problems, requests []string
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, "console "+string(ev.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, string(ev.Entry.Source)+": "+ev.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		}
	}))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("table.results")),
	))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.results tbody tr").length`))
	require.NoError(t, err)
	firstCell, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.results tbody tr td")))
	require.NoError(t, err)
	firstFigure, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("figure.chart").dataset.chart`))
	require.NoError(t, err)
	svgWidth, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector("figure.chart svg").getBoundingClientRect().width`))
	require.NoError(t, err)
	// the screenshot: the results, from the table to the first chart
	require.NoError(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS("section.run"))))
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, problems, "the page loads with no console error")
	require.Equal(t, []string{url}, requests, "no request outside the file")
	require.Equal(t, 8, rows, "a row per algorithm")
	require.Equal(t, "fixed-window", firstCell)
	require.Equal(t, first, firstFigure, "the first chart is the first --charts writes")
	require.Greater(t, svgWidth, 300.0, "the first chart is drawn")
	require.NotEmpty(t, shot)
	out := filepath.Join(t.TempDir(), "report.png")
	if *update {
		out = filepath.Join("..", "docs", "images", "report.png")
		require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	}
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)
}
