package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An all-of row on a cluster names the limit that fired, as on one
// gateway: in the table's "Which limit fired" section and in the
// decisions' limit column, after the cluster's columns. Kong's windows of
// 2 a second and 3 a minute, policy local on 2 nodes, 10 a second for 3s:
// each node admits 2 in the first second and its second window refuses
// its next 3 (6 in all, 400 to 900 ms); each admits 1 more at 1 s and
// 1.1 s (its minute 3 of 3), and the minute refuses the other 18.
func TestClusterAllOfFired(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kong.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: kong
seed: 1
duration: 3s
limit: {rate: 2, per: 1s, burst: 2}
cluster: {nodes: 2}
algorithms:
  - name: all-of
    label: kong
    coordination: local
    limits:
      - {name: fixed-window, label: second, rate: 2, per: 1s}
      - {name: fixed-window, label: minute, rate: 3, per: 1m}
traffic:
  - {type: steady, key: k, rate: 10/s}
`), 0o644))
	dec := filepath.Join(dir, "dec.csv")
	status, out, errOut := run(t, "compare", path, "--decisions", dec)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "Which limit fired:\n  kong  second 6 rejected; minute 18 rejected\n")
	data, err := os.ReadFile(dec)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, "algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,node,decided_ns,limit", lines[0])
	require.Equal(t, "all-of,kong,400000000,k,1,1,reject,0,600000000,0,400000000,second", lines[5])
	require.Equal(t, "all-of,kong,1000000000,k,1,1,accept,0,,0,1000000000,", lines[11])
	require.Equal(t, "all-of,kong,1400000000,k,1,1,reject,0,58600000000,0,1400000000,minute", lines[15])
}
