package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportAzureInOrder: two APIM limits in <inbound> import as one
// in-order all-of whose outputs name the limit that refused. The
// placeholder traffic is one client, 4 calls per 10s (every 2.5s, 12 in
// 30s): the per-address limit (2 per 10s, sliding) admits 0s, 2.5s,
// refuses 5s, 7.5s, admits 10s, 12.5s (the calls at 0s, 2.5s have left
// its window), and so on: 6 refused, all by it; the subscription's 3 per
// 10s never holds more than 2 and refuses none.
func TestImportAzureInOrder(t *testing.T) {
	t.Parallel()
	status, out, errOut := run(t, "import", "--from", "azure", filepath.Join("..", "gateway", "testdata", "azure-inbound.xml"))
	require.Equal(t, 0, status, errOut)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "azure.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte(out), 0o644))
	csv := filepath.Join(dir, "decisions.csv")
	status, out, errOut = run(t, "compare", scenario, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "Which limit fired:\n  inbound  rate-limit-by-key (azure-inbound.xml:3) 6 rejected; rate-limit (azure-inbound.xml:5) 0 rejected\n")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.Contains(t, string(data), "all-of,inbound,5000000000,client,1,1,reject,0,5000000000,rate-limit-by-key (azure-inbound.xml:3),client,subscription\n")
	status, out, errOut = run(t, "compare", scenario, "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `"limit": "rate-limit-by-key (azure-inbound.xml:3)",
          "rejected": 6,`)
}
