package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// One walker, two sets of rules. readYAML (Kong, Traefik) refuses what is
// not plain data wherever it is; readYAMLAsRead (envoy, envoy-local)
// reports it only where the reader reads, since a bootstrap holds much
// the readers never look at. The messages are those each reader gave
// before the two walkers were one.
func TestTreeRules(t *testing.T) {
	boot := "static_resources:\n  clusters: [{name: c, x: 1, x: !!str 2}]\n  listeners:\n    - name: l\n      filter_chains: [{filters: [{name: envoy.filters.network.http_connection_manager, typed_config: {http_filters: [{name: envoy.filters.http.local_ratelimit, typed_config: {stat_prefix: s, token_bucket: {max_tokens: 1, fill_interval: 1s}, filter_enabled: {default_value: {numerator: 100}}}}]}}]}]\n"
	// clusters are not read: their duplicate key and tag do not matter
	_, err := ReadEnvoyLocal("f.yaml", []byte(boot))
	require.NoError(t, err)
	// Kong's reader refuses them up front, at the second x
	_, err = readYAML("f.yaml", []byte(boot))
	require.EqualError(t, err, "f.yaml:2:30: static_resources.clusters[0].x: duplicate key (also at 2:24)")

	for _, tc := range []struct {
		name, src, envoy, kong string
	}{
		// a null document: at 1:1 as read, at the null for Kong
		{"null document", "\n\n~\n",
			"f.yaml:1:1: found null, want a mapping with domain and descriptors",
			"f.yaml:3:1: found null, want a mapping (a decK file: _format_version, services, routes, consumers, plugins)"},
		// a key that is not a name: refused as read, its text for Kong
		{"integer key", "domain: d\n1: x\n",
			"f.yaml:2:1: found integer 1 as a key, want a field name", ""},
		{"tag", "domain: !!str d\n",
			"f.yaml:1:9: domain: YAML tags are not supported: remove the tag",
			"f.yaml:1:9: domain: YAML tags are not supported: remove the tag"},
		{"merge key", "domain: d\n<<: {descriptors: []}\n",
			"f.yaml:2:1: YAML merge keys (<<) are not supported: write the fields out",
			"f.yaml:2:1: YAML merge keys (<<) are not supported: write the fields out"},
		// aliases: refused as read, resolved for Kong (whose file has no
		// limit then)
		{"alias", "domain: &d x\ndescriptors: *d\n",
			"f.yaml:2:14: descriptors: YAML aliases (*name) are not supported: write the value out",
			"f.yaml: no rate limits at all: the config has no rate-limiting or rate-limiting-advanced plugin that is enabled"},
		{"empty", "# nothing\n",
			"f.yaml:1:1: the file is empty or only comments",
			"f.yaml: the file is empty or only comments"},
	} {
		_, err := ReadEnvoy("f.yaml", []byte(tc.src))
		require.EqualError(t, err, tc.envoy, tc.name)
		_, err = ReadKong("f.yaml", []byte(tc.src))
		if tc.kong == "" {
			require.ErrorContains(t, err, "no rate limits at all", tc.name)
		} else {
			require.EqualError(t, err, tc.kong, tc.name)
		}
	}

	// as read, a null list item stands at its list
	_, err = ReadEnvoy("f.yaml", []byte("domain: d\ndescriptors: [{key: a}, ~]\n"))
	require.EqualError(t, err, `f.yaml:2:14: descriptors[1]: found null, want a descriptor (a mapping with key, value, rate_limit, descriptors)`)
	// a block scalar is a scalar, not the quoted string protobuf's JSON
	// mapping wants
	_, err = ReadEnvoyLocal("f.yaml", []byte("stat_prefix: s\ntoken_bucket:\n  max_tokens: 1\n  fill_interval: |\n    1s\n"))
	require.EqualError(t, err, `f.yaml:4:18: token_bucket.fill_interval: found a scalar, want a duration in seconds such as "1s" or "0.5s" (protobuf's JSON form)`)
}

// A UTF-8 byte order mark is not part of the first key, in every YAML
// reader (as in scenario files): before, Kong's and Traefik's readers read
// a key "\ufeffplugins" and found no limits.
func TestTreeByteOrderMark(t *testing.T) {
	k, err := ReadKong("k.yaml", []byte("\ufeffplugins:\n  - {name: rate-limiting, config: {minute: 5}}\n"))
	require.NoError(t, err)
	require.Len(t, k.Scopes, 1)
	tr, err := ReadTraefik("t.yml", []byte("\ufeffhttp:\n  middlewares:\n    m: {rateLimit: {average: 5}}\n"))
	require.NoError(t, err)
	require.Len(t, tr.Scopes, 1)
	e, err := ReadEnvoy("e.yaml", []byte("\ufeffdomain: d\ndescriptors:\n  - {key: a, rate_limit: {unit: second, requests_per_unit: 1}}\n"))
	require.NoError(t, err)
	require.Equal(t, "d", e.Domain)
}
