package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Digests of what the engine printed before it was made faster (issue 6:
// traffic generated once and shared by the algorithms' runs, chunked peak
// windows, a queue of releases of its own, paged counters), so that the
// optimized engine is held to the same bytes: the same decisions, in the
// same order, and the same report.
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
var identicalDigests = []struct {
	args      []string // the command, without --format json
	json, csv string   // sha256 of stdout, of the decisions file
	charts    map[string]string
}{
	{args: []string{"compare", "double-burst"},
		json: "d746440a4da56e8eace4a8301ea26176b658253c979109abd9da975e604a8ec5",
		csv:  "bff0199a6bfc2188ba2664b0fe515d6f0da1b718a29a588530854a008d420d61"},
	{args: []string{"compare", "token-vs-leaky"},
		json: "7e6e06f1bffb7ee413be6e4c9597212d0904223da02b3af382f096cab563bcc4",
		csv:  "9470d8786a15e63c6b8dc51b2ae0596361632014b17dc712eb09d52344109b34"},
	{args: []string{"compare", "nginx-burst"},
		json: "8ca30795135fa7284249d8cd7c9696e3f4bdd73696e90e9616622a8927cab316",
		csv:  "3ede3ebba93974049b5274b672ac6fdd623ff541175ebc476d427e722aa6ebe7"},
	{args: []string{"compare", "sliding-window-accuracy"},
		json: "63db162d814fc324d25a6cc832760acd5b13de39fe97d625f7d76f7c7b4cec82",
		csv:  "3b77647c26e4d479a2ca3404838141842e5b5580ca6733cc1d12df8e48ec5b39"},
	{args: []string{"compare", "retry-storm"},
		json: "f83508a66a2695c76bbdcb6fcfb86a0bc0954d7ac873b5095b678d926767cc02",
		csv:  "816a2ce9b8a6af9ab7ae8b2393a9ea724f5a31312a489c3fb958f1b48858256a"},
	{args: []string{"compare", "retry-storm-jitter"},
		json: "eff6e94aaef39c93d72bae235614df5c229e5566496aff1b9498cd839b43def3",
		csv:  "33e9b04df7cdcc32ab487bdcf02ea97a7fe75bfd3e0efe75dd6443881a65d84b"},
	{args: []string{"compare", "api-gateway"},
		json: "db36bab0caaa70e31f09bf7bf20dc57e8b44b5e0cc39522993505b60fd18d52d",
		csv:  "11229a2da8864e9708c4ffe6a13ba920c669c4c6729e3805e2844db22b626c68",
		charts: map[string]string{
			"state.svg": "ec7bd773207b61ba94e822118d98ad0231fc52d25166f0913075e3a31f4616d4",
		}},
	{args: []string{"compare", "cron-aligned"},
		json: "4844a793e58e35619bfb8a6b93bc092879f75534d44a261b16f4b05d41d7f256",
		csv:  "3268829ab019ed58894442c75231536ff82e63d4256a4c57a63da053b0ba54cf"},
	{args: []string{"compare", "../examples/checkout-api.yaml"},
		json: "3b7cb6365a4b59ecc4f35b3fd8d8807d610b65a501b06aed0f7a471e5a7d5eac",
		csv:  "0ca0582b43b68d0caf3afd6336a549db9b5e6e5f3e3840f2467eb86e1eaa84c2",
		charts: map[string]string{
			"state.svg":    "8146a680988beebad8e3258ae5f5b0c1474d2b6dab52a37820a98b289b6337d9",
			"timeline.svg": "25b647ac402b661ef8b396ae3dc4df9ec46094c0cfe06e0012e9b3d8dc33c437",
		}},
	{args: []string{"compare", "testdata/identical/mixed.yaml"},
		json: "74c3ea94062b8f112ba09da2dd6efbf38f2ded3a8614692cb06fbb5ed893130a",
		csv:  "809a0420ff9c59289b0ae0d40b9e599a6153a845dd94a6070d57e1d172f057ff"},
	// a trace: keys interned while it is read, 1,753 of them
	{args: []string{"replay", "../../shared/traces/elastic_apache_logs.log", "--limit", "1/s", "--burst", "5"},
		json: "4525e2303db3796d87f272b16110bc641a93dbdbcd45ada0a0d8f335245e8886",
		csv:  "8ab8f777b846d0303d0a675ba2b719569ebc5f852f0ab4c2a7be4e19b48cc585",
		charts: map[string]string{
			"state.svg": "a909c1818a7403f0faf6a0afa889400454564f80ee892f0ea01e930774e3fa5e",
		}},
}

func TestEngineOutputUnchanged(t *testing.T) {
	for _, tc := range identicalDigests {
		t.Run(filepath.Base(tc.args[1]), func(t *testing.T) {
			if tc.args[0] == "replay" {
				if _, err := os.Stat(tc.args[1]); err != nil {
					t.Skipf("the shared traces are not here (%v)", err)
				}
			}
			if testing.Short() && len(tc.args) == 2 && tc.args[1] == "testdata/identical/mixed.yaml" {
				t.Skip("1.6 million decisions: not in -short")
			}
			args := append(tc.args[:len(tc.args):len(tc.args)], "--format", "json")
			status, out, errOut := run(t, args...)
			require.Equal(t, 0, status, errOut)
			require.Equal(t, tc.json, digest([]byte(out)), "%v: the report changed", tc.args)

			// the decisions (and charts) of a second run: csv, as the JSON
			// of a long trace's series takes seconds to print
			dir := t.TempDir()
			path := filepath.Join(dir, "decisions.csv")
			args = append(args[:len(args)-1], "csv", "--decisions", path)
			if tc.charts != nil {
				args = append(args, "--charts", filepath.Join(dir, "charts"), "--chart-format", "svg")
			}
			status, _, errOut = run(t, args...)
			require.Equal(t, 0, status, errOut)
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
