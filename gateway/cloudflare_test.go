package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// TestImportCloudflare: a zone's http_ratelimit ruleset as the API returns
// it imports to the golden beside it (the disabled rule left out), and the
// scenario loads.
func TestImportCloudflare(t *testing.T) {
	path := "testdata/cloudflare-ratelimit.json"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "cloudflare", Guess(path, data))
	c := readWith(t, path, ReadCloudflare)
	out, err := text(c.Scenario(Options{}))
	require.NoError(t, err)
	golden(t, "cloudflare-ratelimit.golden.yaml", out)
	parseImported(t, out)
	require.NotContains(t, out, "old rule")
	keys, err := c.Keys(Options{})
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Equal(t, [2]string{KeyAddr, ""}, [2]string{keys[0].Kind, keys[0].Name})
	require.Equal(t, [2]string{KeyHeader, "x-api-key"}, [2]string{keys[1].Kind, keys[1].Name})
	out, err = text(c.Scenario(Options{Scope: "login by key"}))
	require.NoError(t, err)
	require.Contains(t, out, `- {name: cloudflare-rate-limit, label: "login by key", rate: 5, per: 10s}`)
	_, err = c.Scenario(Options{Scope: "x"})
	require.EqualError(t, err, `--scope "x": no rule of testdata/cloudflare-ratelimit.json has that description or id (its rules: "API per address", "login by key")`)

	// the ruleset alone, a rule without a description
	c, err = ReadCloudflare("r.json", []byte(`{"rules": [{"action": "block", "ratelimit": {"characteristics": ["cf.colo.id"], "period": 10, "requests_per_period": 1, "mitigation_timeout": 10}}]}`))
	require.NoError(t, err)
	out, err = text(c.Scenario(Options{}))
	require.NoError(t, err)
	require.Contains(t, out, "- {name: cloudflare-rate-limit, label: rule-1, rate: 1, per: 10s, mitigation-timeout: 10s}\n")
	require.Contains(t, out, "key one key for every request")
}

var invalidCloudflare = []struct{ src, want string }{
	{`{"result": {"phase": "http_request_firewall_custom", "rules": []}}`, `c.json:1:22: result.phase: "http_request_firewall_custom": want the http_ratelimit phase's ruleset (rate limiting rules)`},
	{`{"result": {"rules": []}}`, `c.json:1:22: result.rules: no enabled rate limiting rule`},
	{`{"rules": [{"action": "block"}]}`, `c.json:1:12: rules[0].ratelimit: missing: a rate limiting rule needs ratelimit {characteristics, period, requests_per_period}`},
	{"{\"rules\": [\n {\"ratelimit\": {\"characteristics\": [\"ip.src\"], \"period\": 10, \"requests_per_period\": 1}}]}", `c.json:2:36: rules[0].ratelimit.characteristics: no cf.colo.id: Cloudflare requires it among the characteristics`},
	{"{\"rules\": [\n {\"ratelimit\": {\"characteristics\": [\"cf.colo.id\", \"ip.dst\"], \"period\": 10, \"requests_per_period\": 1}}]}", `c.json:2:51: rules[0].ratelimit.characteristics[1]: "ip.dst": a characteristic not modelled`},
	{"{\"rules\": [\n {\"ratelimit\": {\"characteristics\": [\"cf.colo.id\"], \"period\": 10, \"score_per_period\": 100}}]}", `c.json:2:86: rules[0].ratelimit.score_per_period: complexity-based rate limiting (score_per_period) is not modelled`},
	{"{\"rules\": [\n {\"ratelimit\": {\"characteristics\": [\"cf.colo.id\"], \"period\": 0, \"requests_per_period\": 1}}]}", `c.json:2:62: rules[0].ratelimit.period: 0: want the seconds, a whole number from 1 to 2^40`},
	{"{\"rules\": [\n {\"ratelimit\": {\"characteristics\": [\"cf.colo.id\"], \"period\": 10, \"requests_per_period\": \"5\"}}]}", `c.json:2:89: rules[0].ratelimit.requests_per_period: found string "5", want an integer`},
	{`[]`, `c.json:1:1: found a list, want a ruleset`},
}

// TestReadCloudflareErrors: what cannot be read is an error at its
// file:line:col.
func TestReadCloudflareErrors(t *testing.T) {
	for _, c := range invalidCloudflare {
		_, err := ReadCloudflare("c.json", []byte(c.src))
		require.Error(t, err, c.src)
		require.True(t, strings.HasPrefix(err.Error(), c.want), "%s\ngot  %v\nwant %s", c.src, err, c.want)
		readOK(t, err)
	}
}

func FuzzReadCloudflare(f *testing.F) {
	data, err := os.ReadFile("testdata/cloudflare-ratelimit.json")
	require.NoError(f, err)
	f.Add(data, "")
	f.Add(data, "login by key")
	for _, c := range invalidCloudflare {
		f.Add([]byte(c.src), "")
	}
	f.Add([]byte(`{"rules": [{"description": "a", "ratelimit": {"characteristics": ["cf.colo.id", "http.request.headers[\"x\"]", "ip.src"], "period": 3600, "requests_per_period": 1099511627776, "mitigation_timeout": 86400}}, {"description": "a", "ratelimit": {"characteristics": ["cf.colo.id"], "period": 1, "requests_per_period": 1}}]}`), "a #2")
	f.Fuzz(func(t *testing.T, data []byte, scope string) {
		c, err := ReadCloudflare("f.json", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(c.Scenario(Options{Scope: scope}))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--scope") {
				t.Fatal(err)
			}
			return
		}
		if _, err := c.Keys(Options{Scope: scope}); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
