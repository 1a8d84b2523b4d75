package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
)

// Digests of what the engine printed before it was made faster (the
// engine benchmark's work in BENCHMARKS.md: traffic generated once and shared by the algorithms' runs, chunked peak
// windows, a queue of releases of its own, paged counters), so that the
// optimized engine is held to the same bytes: the same decisions, in the
// same order, and the same report.
//
// The JSON digests were made again when every result gained key_peaks
// (docs/metrics.md): the JSON of each run below, with its key_peaks fields
// taken out, is byte for byte what the binary of 680a717 (the commit
// before them) prints, and that binary's JSON has the digests made with
// b942cbe's; the decisions CSV and chart digests did not change.
//
// How they were made: with the binary built from commit b942cbe (before
// any of that work; `go build -o /tmp/ratesim-before .`), from this
// directory,
//
//	/tmp/ratesim-before compare NAME --format json | sha256sum
//	/tmp/ratesim-before compare NAME --format json --decisions d.csv && sha256sum d.csv
//
// and likewise `replay` for the trace, and `--charts DIR --chart-format
// svg` for the state charts (they sample a key's state during the run).
// Every built-in runs, plus examples/checkout-api.yaml and
// testdata/identical/mixed.yaml: 66,000 requests over 5,341 keys (a range
// and named keys), retries with full and equal jitter and retry-after,
// shaping delays, three windows, eleven algorithms: 1.6 million
// decisions, so that the traffic fills the ring of batches many times.
//
// Since the default set leaves the concurrency limiter out, a scenario without an algorithms list and with
// backend.service 0 leaves out the concurrency limiter, which could refuse
// nothing there; the runs of such scenarios (and the replay) name all nine
// algorithms with --algorithms, which brings it back in its place, so
// that they still print what those binaries printed.
//
// Since reports carry the version that made them, each report starts with "ratesim_version": the test takes
// that one line out before the digest, so that the rest is held to the
// same bytes.
//
// The state.svg digests were made again when the state chart began to draw
// the gauges that are bounds (capacity, burst, max, limit) as labelled
// reference lines instead of data lines: a change of drawing in
// output alone; the sampled state, and every other digest, are the same.
// They and the timeline.svg digests were made again when time axes got
// five to ten round ticks (clock ticks for a replay): again a change of
// drawing alone.
var identicalDigests = []struct {
	args      []string // the command, without --format json
	json, csv string   // sha256 of stdout, of the decisions file
	charts    map[string]string
	contains  []string // in stdout, besides
}{
	{args: []string{"compare", "double-burst", "--algorithms", allNine},
		json: "4b5e46737b11809728af349e0d9104e308858df18d83879f3d2f98c5144db404",
		csv:  "bff0199a6bfc2188ba2664b0fe515d6f0da1b718a29a588530854a008d420d61"},
	{args: []string{"compare", "token-vs-leaky"},
		json: "1e6c400a31219ad3b6e2a14f90dc4f110264e1211fdef5a3bb58d843678f4d65",
		csv:  "9470d8786a15e63c6b8dc51b2ae0596361632014b17dc712eb09d52344109b34"},
	{args: []string{"compare", "nginx-burst"},
		json: "cd3a1482b9b3347dade86d91c7b8b91995e340c5f632c75129a2e05e2821ad07",
		csv:  "3ede3ebba93974049b5274b672ac6fdd623ff541175ebc476d427e722aa6ebe7"},
	{args: []string{"compare", "sliding-window-accuracy"},
		json: "056590601dd91b151bca12cb9219844b2070a1cf8a28d9acf95ddfcb4055a497",
		csv:  "3b77647c26e4d479a2ca3404838141842e5b5580ca6733cc1d12df8e48ec5b39"},
	{args: []string{"compare", "retry-storm", "--algorithms", allNine},
		json: "b0f7406db1601287e85825f3378196eeb85ad4ad0204fee9fcc0f8d51c2cee60",
		csv:  "816a2ce9b8a6af9ab7ae8b2393a9ea724f5a31312a489c3fb958f1b48858256a"},
	{args: []string{"compare", "retry-storm-jitter", "--algorithms", allNine},
		json: "aa79bc3c464a4703410dbc9e5d7ea7503ce45295db0de207675c7d6f87c9ce40",
		csv:  "33e9b04df7cdcc32ab487bdcf02ea97a7fe75bfd3e0efe75dd6443881a65d84b"},
	{args: []string{"compare", "api-gateway", "--algorithms", allNine},
		json: "44d027054cbeacaf8a43d8498d3dd7eb0d87588d37ffc25f8b0f92e0e7ea547b",
		csv:  "11229a2da8864e9708c4ffe6a13ba920c669c4c6729e3805e2844db22b626c68",
		charts: map[string]string{
			"state.svg": "60949dfafef588860c6bdd898da5bc3af9d0bcacae84335f1461bc9848c75f24",
		}},
	{args: []string{"compare", "cron-aligned", "--algorithms", allNine},
		json: "090379f87ba831de673c4f1162f020b173df0d420f1ed3a69eba541894f44310",
		csv:  "3268829ab019ed58894442c75231536ff82e63d4256a4c57a63da053b0ba54cf"},
	{args: []string{"compare", "../examples/checkout-api.yaml"},
		json: "3bb3dda3acb18de1ff5c1b082c0d4dda4a12322c5dfe52bd233c6317137a7e49",
		csv:  "0ca0582b43b68d0caf3afd6336a549db9b5e6e5f3e3840f2467eb86e1eaa84c2",
		charts: map[string]string{
			"state.svg":    "ce42122caaa1228e398777f70982510e660dfa68269d8f751268094f6bf13041",
			"timeline.svg": "6d7196f5094160f82e1901819352ad8461aba84622f1a5e6efade89cd8dde3d3",
		}},
	{args: []string{"compare", "testdata/identical/mixed.yaml"},
		json: "0903b42776000d9ef7ba19d0972b94703d82f88524b12e56b8cce825280280e2",
		csv:  "809a0420ff9c59289b0ae0d40b9e599a6153a845dd94a6070d57e1d172f057ff"},
	// The cluster (docs/cluster.md): its built-ins and every mode with jitter, a
	// random balancer, skews and faults (testdata/identical/cluster.yaml),
	// held from c85db46 on, so that work on the cluster engine changes no
	// byte. The decisions of cluster.yaml are those its first working
	// version made (a303b3f..ec9fedd: the FIFOs, the direct scripts, the
	// timeouts and key peaks changed none).
	{args: []string{"compare", "flexible-consistency"},
		json: "6a36204853723da6f50d90cfa7649f477e114742aece2c5cb45a3e2179c32623",
		csv:  "35169920b055025e996ea04fb72f2f4ed66ed33106c661ba45a319260ca0094a",
		charts: map[string]string{
			"state.svg":    "3b90eb83b26f1e8e5b7fdcb5394481c8c6a9543cc22314eb4976a0dbe6c8420e",
			"timeline.svg": "70108dbe5bff36206a959e616d62fd6621a5b06f574907d9814cc59dc6f1508a",
		}},
	{args: []string{"compare", "kong-local-pods"},
		json: "7be0ded9baeb723fca435fee573018aec16bcf840bf59467ed82e0e29f999447",
		csv:  "659caa32b9117a6dcda8c5d8254dd1fc5f7dccf9076354e660f68d66e4a5fcc9"},
	// added with the built-in (a backend behind a cluster, docs/cluster.md), as
	// its first working version prints it, so that later work on either
	// engine changes no byte of it
	{args: []string{"compare", "kong-local-pods-backend"},
		json: "ee9d3d5e33160bce6ee11fb99d692b35a344ec5839060417380c23b6ddcb2ff9",
		csv:  "261fa13b31db02e78a51346b14421ddc4612f7468f6d8e54e63c03bb4f632967"},
	{args: []string{"compare", "redis-race"},
		json: "177f1e7142ad60d1d12bebc2d3b1b9c4067121e9ca1b7dc52815daa79f6d80f3",
		csv:  "406f119462e7b9bb916080b92415da05414c3e893b54dfd51944174bbc0d3e4a"},
	{args: []string{"compare", "sync-interval"},
		json: "2e5c2ab093a5cfe9feae9fd0a24b92676d8ae467f4e37ead6257ca80b18e52fb",
		csv:  "66af2a288482be012bae1882be5de052c1bd80883a202089f8b0f2dc81e0edd3"},
	{args: []string{"compare", "redis-outage"},
		json: "3121a50b48d8a0a45a82265871f3459544778e83a24b8ea9ef9e2799ed502e89",
		csv:  "9111b49dc77494ad6b41625d639c0a387eedb9d56bb74c01a906ec01af677280"},
	{args: []string{"compare", "testdata/identical/cluster.yaml"},
		json: "3d2708698136a5f5ea738b48c5675b2c62a152ab0f92d7694c4b9d24e15906c1",
		csv:  "011b2686a93649c0ae51005dcce72a63c9b7c5fae78d3828910f7d4bcbc37da0",
		charts: map[string]string{
			"state.svg": "90c8c724fa5a0a959482cdcc1c1acf83a1ede7a3d463375fd2be7db490fd0db1",
		}},
	// a trace: keys interned while it is read, 1,753 of them
	{args: []string{"replay", "../../shared/traces/elastic_apache_logs.log", "--limit", "1/s", "--burst", "5", "--algorithms", allNine},
		json: "73e0f66f27b900c87fb88a504ad11df5454df515a1721eadb9b2758c092ac62a",
		csv:  "8ab8f777b846d0303d0a675ba2b719569ebc5f852f0ab4c2a7be4e19b48cc585",
		charts: map[string]string{
			"state.svg": "6110f5c3ffd4181af640a2e63ef2723232c8c572a683f4723ce91586199cd977",
		},
		// the trace as read: its lines, its keys, and the format found
		contains: []string{`"lines": 10000`, `"keys": 1753`, `"format": "combined"`}},
}

// longDigests are the runs of identicalDigests left to RATESIM_LONG=1:
// the Apache log's nine rows over three and a half days, their series
// and a state sampled over them (2 s of CPU), and the 1.6 million
// decisions of mixed.yaml. TestReplayRealTrace replays the log in the
// quick suite.
var longDigests = map[string]string{
	"elastic_apache_logs.log": "the nine rows of the Apache log, with their state chart",
	"mixed.yaml":              "the 1.6 million decisions of testdata/identical/mixed.yaml",
}

// allNine is the default list of algorithms before it left the
// concurrency limiter out of scenarios without a service time.
const allNine = "fixed-window,sliding-log,sliding-window,token-bucket,gcra,leaky-bucket,nginx,concurrency,x-time-rate"

func TestEngineOutputUnchanged(t *testing.T) {
	t.Parallel()
	for _, tc := range identicalDigests {
		t.Run(filepath.Base(tc.args[1]), func(t *testing.T) {
			if tc.args[0] == "replay" {
				if _, err := os.Stat(tc.args[1]); err != nil {
					t.Skipf("the shared traces are not here (%v)", err)
				}
			}
			if what, ok := longDigests[filepath.Base(tc.args[1])]; ok {
				if testing.Short() {
					t.Skipf("%s: not in -short", what)
				}
				testenv.Long(t, what)
			}
			// one run prints the report and writes the decisions (and
			// charts): neither changes a byte of the JSON (the plain
			// `--format json` of every built-in is also held by its golden
			// in TestCompareBuiltinsGolden)
			dir := t.TempDir()
			path := filepath.Join(dir, "decisions.csv")
			args := append(tc.args[:len(tc.args):len(tc.args)], "--format", "json", "--decisions", path)
			if tc.charts != nil {
				args = append(args, "--charts", filepath.Join(dir, "charts"), "--chart-format", "svg")
			}
			status, out, errOut := run(t, args...)
			require.Equal(t, 0, status, errOut)
			// the version line (docs/commands.md), which those binaries
			// did not print, is the one line the report gained
			versionLine := "\n  \"ratesim_version\": \"dev\","
			require.Contains(t, out, versionLine)
			out = strings.Replace(out, versionLine, "", 1)
			for _, want := range tc.contains {
				require.Contains(t, out, want, "%v", tc.args)
			}
			require.Equal(t, tc.json, digest([]byte(out)), "%v: the report changed", tc.args)
			require.Equal(t, tc.csv, fileDigest(t, path), "%v: the decisions changed", tc.args)
			for name, want := range tc.charts {
				require.Equal(t, want, fileDigest(t, filepath.Join(dir, "charts", name)), "%v: %s changed", tc.args, name)
			}
		})
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}
