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

// TestImportAzureScopes: the four scopes of examples/apim, outermost
// first, import as one in-order all-of whose outputs name the scope that
// refused. The placeholder traffic is one client, 8 calls per 10s (every
// 1.25s, 24 in 30s), each limit a sliding window of 10s counting what it
// admits (a call leaves it 10s later). By hand, in APIM's order:
//   - the API's 4 (by X-Client) admits 0, 1.25, 2.5, 3.75 and refuses
//     5..8.75, and the same from 10s and 20s: 12 refused;
//   - the global 5 (by address) never holds more than those 4: none;
//   - the product's 3 (rate-limit) refuses 3.75, 13.75, 23.75 (at 10s the
//     call at 0 has left): 3;
//   - the operation's 2 (the constant "checkout") refuses 2.5, 12.5, 22.5:
//     3. 6 admitted.
func TestImportAzureScopes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "examples", "apim")
	var args []string
	for _, sc := range []string{"global", "product", "api", "operation"} {
		args = append(args, filepath.Join(dir, sc+".xml"))
	}
	status, out, errOut := run(t, append([]string{"import", "--from", "azure"}, args...)...)
	require.Equal(t, 0, status, errOut)
	tmp := t.TempDir()
	scenario := filepath.Join(tmp, "apim.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte(out), 0o644))
	csv := filepath.Join(tmp, "decisions.csv")
	status, out, errOut = run(t, "compare", scenario, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "| inbound   |        6 |        0 |       18 |")
	require.Contains(t, out, "Which limit fired:\n  inbound  api rate-limit-by-key (api.xml:3) 12 rejected; global rate-limit-by-key (global.xml:3) 0 rejected; "+
		"product rate-limit (product.xml:4) 3 rejected; operation rate-limit-by-key (operation.xml:4) 3 rejected\n")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	// each limit's key: the API's X-Client (an attribute: it has a default),
	// the request's (the address), the subscription, one for all
	require.Contains(t, string(data), "all-of,inbound,2500000000,client,1,1,reject,0,7500000000,operation rate-limit-by-key (operation.xml:4),http_x_client,client,subscription,global\n"+
		"all-of,inbound,3750000000,client,1,1,reject,0,6250000000,product rate-limit (product.xml:4),http_x_client,client,subscription,global\n"+
		"all-of,inbound,5000000000,client,1,1,reject,0,5000000000,api rate-limit-by-key (api.xml:3),http_x_client,client,subscription,global\n")
	status, out, errOut = run(t, "compare", scenario, "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `"limit": "product rate-limit (product.xml:4)",
          "rejected": 3,`)

	// SCOPE=FILE names a scope: the API and the operation alone, without
	// --from (guessed from the files), drop the product's and global's
	status, out, errOut = run(t, "import", "api="+args[2], args[3])
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "      - {name: azure-rate-limit, label: \"api rate-limit-by-key (api.xml:3)\", by: http_x_client, rate: 4, per: 10s}\n")
	require.Contains(t, out, "      - {name: azure-rate-limit, label: \"operation rate-limit-by-key (operation.xml:4)\", by: global, rate: 2, per: 10s}\n")
	require.NotContains(t, out, "product.xml")
}

// Bad scope files and arguments are exit 2, naming file:line:col or the
// argument.
func TestImportAzureScopesErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	global := filepath.Join(dir, "global.xml")
	require.NoError(t, os.WriteFile(global, []byte("<policies>\n  <inbound>\n    <rate-limit calls=\"5\" renewal-period=\"10\" />\n  </inbound>\n</policies>\n"), 0o644))
	api := filepath.Join("..", "examples", "apim", "api.xml")
	nginx := filepath.Join("..", "examples", "nginx.conf")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{global, api}, global + ":3:5: rate-limit: not allowed in the global scope: APIM takes rate-limit at the product, API and operation scopes (rate-limit-by-key at every scope)\n"},
		{[]string{"operation=" + api, "api=" + api}, "ratesim: api=" + api + ": the api scope after the operation scope: give the policy files outermost first (global, product, api, operation), each scope once\n"},
		{[]string{nginx, api}, "ratesim: " + nginx + ": several config files are read as the policy scopes of Azure API Management only, and this is not an APIM policy document (<policies>): it reads as --from nginx\n"},
		{[]string{"--from", "nginx", nginx, api}, "ratesim: " + nginx + " " + api + ": several policy files (or SCOPE=FILE) are Azure API Management's scopes: only --from azure reads them, not --from nginx\n"},
	} {
		status, _, errOut := run(t, append([]string{"import"}, c.args...)...)
		require.Equal(t, 2, status, c.args)
		require.Equal(t, c.want, errOut, c.args)
	}
}
