package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A row kept in the cluster's store whose algorithm cannot run there (the
// vendors' rows, an all-of holding aws-usage-plan) is refused when the
// file is read, where it is written, not when the run builds the store.
func TestStoreRowsAtReadTime(t *testing.T) {
	head := "name: c\nduration: 2s\nlimit: 10/s\ncluster: {nodes: 2}\ntraffic: [{type: steady, key: a, rate: 5/s}]\nalgorithms:\n"
	for _, c := range []struct{ src, want string }{
		{"  - name: all-of\n    limits:\n      - {name: token-bucket, rate: 8, per: 1s}\n      - {name: aws-usage-plan, rate: 30, per: 24h}\n",
			`c.yaml:10:16: algorithms[0].limits[1].name: "aws-usage-plan": an all-of row with coordination: central keeps its limits in the store, where aws-usage-plan cannot run (it has no rule over a state held apart): use coordination: local, or a limit that can`},
		{"  - {name: all-of, coordination: racy, limits: [{name: aws-usage-plan, per: 24h}]}\n",
			`c.yaml:7:56: algorithms[0].limits[0].name: "aws-usage-plan": an all-of row with coordination: racy keeps its limits in the store`},
		{"  - cloudflare-rate-limit\n",
			`c.yaml:7:5: algorithms[0].coordination: missing: the default on a cluster is central, which cloudflare-rate-limit does not take (want local, split or sync)`},
		{"  - {name: aws-usage-plan, rate: 30, per: 24h}\n",
			`c.yaml:7:5: algorithms[0].coordination: missing: the default on a cluster is central, which aws-usage-plan does not take (want local or split)`},
		{"  - {name: aws-usage-plan, rate: 30, per: 24h, coordination: racy}\n",
			`c.yaml:7:62: algorithms[0].coordination: "racy": not a mode of aws-usage-plan, which cannot run in the store (want local or split)`},
	} {
		_, err := Parse("c.yaml", []byte(head+c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
	for _, ok := range []string{
		"  - {name: all-of, coordination: local, limits: [{name: aws-usage-plan, per: 24h}]}\n",
		"  - {name: cloudflare-rate-limit, coordination: local}\n",
		"  - {name: aws-usage-plan, rate: 30, per: 24h, coordination: split}\n",
		"  - {name: all-of, limits: [token-bucket, fixed-window]}\n",
	} {
		_, err := Parse("c.yaml", []byte(head+ok))
		require.NoError(t, err, ok)
	}
}
