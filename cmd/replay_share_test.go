package cmd

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reportScenario is the scenario text that replay's --report page shows.
func reportScenario(t *testing.T, args ...string) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "r.html")
	status, _, errOut := run(t, append(args, "--report", page)...)
	require.Equal(t, 0, status, errOut)
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<pre id="scenario">(.*?)</pre>`).FindSubmatch(data)
	require.NotNil(t, m, "the page shows the scenario")
	return html.UnescapeString(string(m[1]))
}

// The scenario text of a replay whose rows share one nginx zone lists the
// one row that ran, labelled as the report labels it, with each
// location's burst in a comment above it; with one location kept
// (--scope) the text is that location's row.
func TestReplaySharedZoneScenarioText(t *testing.T) {
	conf, log := gatewayFiles(t, sharedZoneConf, sharedZoneLog)
	text := reportScenario(t, "replay", log, "--gateway", conf)
	_, algs, ok := strings.Cut(text, "algorithms:\n")
	require.True(t, ok, text)
	algs, _, _ = strings.Cut(algs, "traffic:")
	require.Equal(t, `  # zone=z (nginx.conf:4): one state per key for /a/, /b/,
  # each request checked with its location's burst: /a/ burst=5 nodelay, /b/ burst=0 nodelay
  - name: nginx
    label: "/a/ + /b/"
    rate: 10
    per: 1s
`, algs)

	// one location alone: its row, written as every replay's text is
	text = reportScenario(t, "replay", log, "--gateway", conf, "--scope", "/b/")
	require.Contains(t, text, "algorithms:\n- name: nginx\n  label: \"/b/\"\n", text)
	require.NotContains(t, text, " + ")
	require.NotContains(t, text, "#")
}

// A Kong service's plugin, used by two routes, is one row in the text as
// in the run: the rows were alike but for their routes.
func TestReplayKongSharedPluginScenarioText(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "kong.yaml"), filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(kongSharedDeck), 0o644))
	require.NoError(t, os.WriteFile(trace, []byte(`{"ts": 1700000000.00, "consumer": "alice", "path": "/a"}
{"ts": 1700000000.05, "consumer": "alice", "path": "/b"}
`), 0o644))
	text := reportScenario(t, "replay", trace, "--gateway", conf, "--trace-format", "jsonl")
	require.Equal(t, 1, strings.Count(text, "- name: "), text)
	require.Contains(t, text, `label: "ra + rb"`, text)
	require.NotContains(t, text, "#", "no comment: the rows were alike")
}
