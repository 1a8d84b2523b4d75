package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAWSLevelsCompare: the API Gateway levels of docs/algorithms.md
// (account and stage throttles by global, the usage plan's throttle and
// quota by api-key). Two keys of 5/s for 10s: the plan's throttle of 4/s
// each fits under the stage's 8/s, and each key stops at its initial day's
// quota, 30 - 10 = 20: 40 accepted, 60 rejected.
func TestAWSLevelsCompare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aws.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: aws-levels
duration: 10s
limit: 10/s
traffic:
  - {type: steady, key: a, rate: 5/s, attributes: {api-key: key-a}}
  - {type: steady, key: b, rate: 5/s, attributes: {api-key: key-b}}
algorithms:
  - name: all-of
    label: api-gateway
    limits:
      - {name: token-bucket, by: global, rate: 10000, per: 1s, burst: 5000}
      - {name: token-bucket, by: global, rate: 8, per: 1s, burst: 8}
      - {name: token-bucket, by: api-key, rate: 4, per: 1s, burst: 4}
      - {name: aws-usage-plan, by: api-key, rate: 30, per: 24h, quota-offset: 10}
`), 0o644))
	status, out, errOut := run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "| api-gateway |       40 |        0 |       60 |")
}

// TestCloudflareCompare: a Cloudflare rule of 5 per 10s with a 30s
// mitigation timeout, against the same rule throttling (no timeout), for
// one key at 1/s over 1m. Throttling admits 25 (5 in the first window, then
// as the weighted count allows); the timeout admits 5, blocks 30s from the
// 6th request (5s), then 5 more from 35s, and blocks again at 40s: 10.
func TestCloudflareCompare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cf.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: cf
duration: 60s
limit: 5/10s
traffic: [{type: steady, key: a, rate: 1/s}]
algorithms:
  - {name: cloudflare-rate-limit, mitigation-timeout: 30s}
  - {name: cloudflare-rate-limit, label: throttle}
`), 0o644))
	status, out, errOut := run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "| cloudflare-rate-limit |       10 |        0 |       50 |")
	require.Contains(t, out, "| throttle              |       25 |        0 |       35 |")
}
