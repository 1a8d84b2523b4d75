package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeImported writes an import's scenario to a file of its own, for
// validate, compare or replay to read, and returns its path.
func writeImported(t *testing.T, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "imported.yaml")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path
}

func TestImportNginx(t *testing.T) {
	status, out, errOut := run(t, "import", "../examples/nginx.conf")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "ratesim: reading ../examples/nginx.conf with the nginx reader (--from nginx)\n", errOut)
	// the import loads
	path := writeImported(t, out)
	status, _, errOut = run(t, "validate", path)
	require.Equal(t, 0, status, errOut)
	status, _, errOut = run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
}

// The envoy configs are told apart from the file, and their imports load
// and run (those of envoy 1.31 and later: before, the rows refill with
// fill-interval).
func TestImportEnvoy(t *testing.T) {
	for _, tc := range []struct {
		config, from string
		args         []string
	}{
		{"../examples/envoy/ratelimit-config.yaml", "envoy", nil},
		{"../examples/envoy/ratelimit-config.yaml", "envoy", []string{"--scope", "remote_address + header_match=api/api_key"}},
		{"../examples/envoy/local-ratelimit.yaml", "envoy-local", nil},
		{"../examples/envoy/local-ratelimit.yaml", "envoy-local", []string{"--envoy-version", "1.31", "--scope", "public/shop/search plan=free"}},
	} {
		status, out, errOut := run(t, append([]string{"import", tc.config}, tc.args...)...)
		require.Equal(t, 0, status, errOut)
		require.Equal(t, "ratesim: reading "+tc.config+" with the "+tc.from+" reader (--from "+tc.from+")\n", errOut)
		path := writeImported(t, out)
		status, _, errOut = run(t, "validate", path)
		require.Equal(t, 0, status, errOut)
		status, _, errOut = run(t, "compare", path)
		require.Equal(t, 0, status, errOut)
	}
	status, out, errOut := run(t, "import", "../examples/envoy/local-ratelimit.yaml", "--envoy-version", "1.30")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "fill-interval: 1s, tokens-per-fill: 10}")
}

// Kong and Traefik: the guess is stated, and the imports load and run.
func TestImportKongTraefik(t *testing.T) {
	status, out, errOut := run(t, "import", "../examples/kong.deck.yaml")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "ratesim: reading ../examples/kong.deck.yaml with the kong reader (--from kong)\n", errOut)
	path := writeImported(t, out)
	status, _, errOut = run(t, "compare", path)
	require.Equal(t, 0, status, errOut)

	status, out, errOut = run(t, "import", "../examples/traefik.yml", "--scope", "login")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "ratesim: reading ../examples/traefik.yml with the traefik reader (--from traefik)\n", errOut)
	require.Contains(t, out, "{name: x-time-rate, label: login, rate: 6, per: 1m, burst: 3, max-delay: 500ms, idle-reset: 11s}")
	require.NotContains(t, out, "label: api")
	path = writeImported(t, out)
	status, _, errOut = run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
}

// An haproxy.cfg is told apart from an nginx.conf, and its import runs.
func TestImportHAProxy(t *testing.T) {
	status, out, errOut := run(t, "import", "../examples/haproxy.cfg")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "ratesim: reading ../examples/haproxy.cfg with the haproxy reader (--from haproxy)\n", errOut)
	path := writeImported(t, out)
	status, out, errOut = run(t, "compare", path, "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "haproxy,api,")
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	unknown := write("u.conf", "limit_req_zone $a zone=one:1m rate=1r/s;\nserver {\n  location / { limit_req zone=two; }\n}\n")
	plain := write("plain.txt", "hello\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", unknown, "--from", "nginx"}, unknown + ":3:16: limit_req: zone \"two\" is unknown (no limit_req_zone defines it)\n"},
		{[]string{"import", plain}, "ratesim: " + plain + ": cannot tell which gateway's config this is: name it with --from (one of nginx, kong, envoy, envoy-local, traefik, haproxy, apigee, azure, aws, cloudflare)\n"},
		{[]string{"import", plain, "--from", "bogus"}, "ratesim: --from \"bogus\": not a gateway ratesim reads (want one of nginx, kong, envoy, envoy-local, traefik, haproxy, apigee, azure, aws, cloudflare)\n"},
		{[]string{"import", "../examples/nginx.conf", "--from", "nginx", "--scope", "/nope"}, "ratesim: --scope \"/nope\": no scope of ../examples/nginx.conf has that name (its scopes: \"api.example.com /\", \"api.example.com /search\", \"api.example.com = /login\")\n"},
		{[]string{"import", "../examples/envoy/local-ratelimit.yaml", "--envoy-version", "latest"}, "ratesim: --envoy-version \"latest\": want an envoy version such as 1.30 or 1.31.2\n"},
		{[]string{"import", "../examples/nginx.conf", "--envoy-version", "1.30"}, "ratesim: reading ../examples/nginx.conf with the nginx reader (--from nginx)\nratesim: --envoy-version: only the envoy-local reader models versions (this is --from nginx)\n"},
		{[]string{"import", "../examples/envoy/ratelimit-broken.yaml"}, "ratesim: reading ../examples/envoy/ratelimit-broken.yaml with the envoy reader (--from envoy)\n../examples/envoy/ratelimit-broken.yaml:5:13: descriptors[0].rate_limit.unit: invalid rate limit unit \"fortnight\" (want one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR)\n"},
		{[]string{"import", "../examples/kong-broken.deck.yaml"}, "ratesim: reading ../examples/kong-broken.deck.yaml with the kong reader (--from kong)\n../examples/kong-broken.deck.yaml:9:17: services[0].plugins[0].config.hour: The limit for hour(50.0) cannot be lower than the limit for minute(100.0)\n"},
		{[]string{"import", write("t.toml", "[http.middlewares.m.rateLimit]\naverage = 5\nburts = 2\n")}, "ratesim: reading " + filepath.Join(dir, "t.toml") + " with the traefik reader (--from traefik)\n" + filepath.Join(dir, "t.toml") + ":3:1: http.middlewares.m.rateLimit.burts: unknown field (want average, period, burst, sourceCriterion, redis)\n"},
		{[]string{"import", "../examples/haproxy-broken.cfg", "--from", "haproxy"}, "../examples/haproxy-broken.cfg:4:5: stick-table: expire 10s is shorter than twice the http_req_rate period 10s: an entry can expire while its counter still counts, which ratesim does not model (want expire >= 20s)\n"},
		{[]string{"import", "../examples/haproxy.cfg", "--from", "haproxy", "--scope", "nope"}, "ratesim: --scope \"nope\": no scope of ../examples/haproxy.cfg has that name (its scopes: \"api\", \"partners\")\n"},
		{[]string{"import", filepath.Join(dir, "missing.conf")}, "ratesim: " + filepath.Join(dir, "missing.conf") + ": no such file, want a gateway's config file: an nginx.conf, a Kong declarative config, an envoy config, a Traefik dynamic config or an haproxy.cfg\n"},
	} {
		status, out, errOut := run(t, tc.args...)
		require.Equal(t, 2, status, tc.args)
		require.Empty(t, out)
		require.Equal(t, tc.want, errOut)
	}
}

// --split-limits: the rows beside each all-of row are written by every
// reader that writes all-of rows, and the imports validate and run.
func TestImportSplitLimits(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		split []string // labels of the split rows
	}{
		{[]string{"../examples/nginx.conf", "--scope", "/search"}, []string{`"api.example.com /search zone=perip"`, `"api.example.com /search zone=perip_minute"`}},
		{[]string{"../examples/kong.deck.yaml"}, []string{`"orders-api second"`, `"orders-api hour"`, `"search-api second"`, `"search-api minute"`}},
		{[]string{"../examples/envoy/ratelimit-config.yaml", "--scope", "remote_address + header_match=api/api_key"},
			[]string{`"remote_address + header_match=api/api_key (remote_address alone)"`, `"remote_address + header_match=api/api_key (header_match=api/api_key alone)"`}},
		{[]string{"../examples/envoy/local-ratelimit.yaml", "--scope", "public/shop/search plan=free"},
			[]string{`"public/shop/search plan=free (plan=free alone)"`, `"public/shop/search plan=free (default bucket alone)"`}},
	} {
		status, plain, errOut := run(t, append([]string{"import"}, tc.args...)...)
		require.Equal(t, 0, status, errOut)
		status, out, errOut := run(t, append([]string{"import", "--split-limits"}, tc.args...)...)
		require.Equal(t, 0, status, errOut)
		for _, label := range tc.split {
			require.Contains(t, out, "label: "+label, tc.args)
			require.NotContains(t, plain, label, tc.args)
		}
		path := writeImported(t, out)
		status, _, errOut = run(t, "validate", path)
		require.Equal(t, 0, status, errOut)
		status, _, errOut = run(t, "compare", path)
		require.Equal(t, 0, status, errOut)
	}
}
