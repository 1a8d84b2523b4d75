package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportCloudVendors: an AWS usage plan and a Cloudflare rule import
// (the gateway guessed from the JSON) to scenarios that run, with the
// figures their rows decide; a bad file exits 2 naming file:line:col.
func TestImportCloudVendors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(`{"id": "p1", "name": "plan", "throttle": {"burstLimit": 10, "rateLimit": 5.0}, "quota": {"limit": 20, "offset": 5, "period": "DAY"}}`), 0o644))
	status, out, errOut := run(t, "import", plan)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "with the aws reader (--from aws)")
	scenario := filepath.Join(dir, "plan.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte(out), 0o644))
	// 20/s for 10s on one API key: the bucket admits 10 at once then
	// 5/s, and the initial day's quota of 20 - 5 stops it at 15
	status, out, errOut = run(t, "compare", scenario)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "| plan      |       15 |        0 |      185 |")
	// which level fired: the plan's bucket refuses 200 - 59, the quota
	// the 59 - 15 that the bucket lets through past 15
	require.Contains(t, out, "Which limit fired:\n  plan  plan (plan.json:1) 141 rejected; quota (plan.json:1) 44 rejected; account 0 rejected\n")

	rule := filepath.Join(dir, "rules.json")
	require.NoError(t, os.WriteFile(rule, []byte(`{"result": {"phase": "http_ratelimit", "rules": [
  {"description": "per ip", "action": "block", "expression": "true",
   "ratelimit": {"characteristics": ["cf.colo.id", "ip.src"], "period": 10, "requests_per_period": 5, "mitigation_timeout": 30}}]}}`), 0o644))
	status, out, errOut = run(t, "import", rule)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `- {name: cloudflare-rate-limit, label: "per ip", rate: 5, per: 10s, mitigation-timeout: 30s}`)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\"items\": [\n  {\"name\": \"p\", \"quota\": {\"limit\": 10, \"period\": \"YEAR\"}}]}"), 0o644))
	status, _, errOut = run(t, "import", "--from", "aws", bad)
	require.Equal(t, 2, status)
	require.Equal(t, bad+":2:50: items[0].quota.period: \"YEAR\": want DAY, WEEK or MONTH\n", errOut)
	status, _, errOut = run(t, "import", "--from", "cloudflare", bad)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, bad+":1:1: rules: no rules")
}
