package gateway

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// parseImported parses an imported scenario with the scenario parser: an
// import is a scenario that loads as it is.
func parseImported(t testing.TB, out string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("import.yaml", []byte(out))
	require.NoError(t, err, out)
	return sc
}

// readWith reads the config file at path with read (ReadNginx, ReadKong,
// ...), failing t on any error.
func readWith[T any](t *testing.T, path string, read func(file string, data []byte) (T, error)) T {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	v, err := read(path, data)
	require.NoError(t, err)
	return v
}

// requireGatewayError checks that err says want and is an *Error (a
// reader's refusal, with its position).
func requireGatewayError(t *testing.T, err error, want string, msgAndArgs ...any) {
	t.Helper()
	require.EqualError(t, err, want, msgAndArgs...)
	var ge *Error
	require.True(t, errors.As(err, &ge))
}

// readOK reports whether a fuzzed read (of a config, or of its access
// logs) succeeded; a refusal must be an *Error (anything else fails t).
func readOK(t *testing.T, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("not an *Error: %v", err)
	}
	return false
}

// golden compares out with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), out)
}

// Each example config in examples/ imports (with the gateway guessed from
// its content, as import does without --from) to the scenario beside it,
// as docs/gateways.md and examples/README.md say, and that scenario loads
// as the same scenario as the File the import made.
func TestExamples(t *testing.T) {
	for _, tc := range []struct{ from, config, scenario string }{
		{"nginx", "nginx.conf", "nginx.yaml"},
		{"kong", "kong.deck.yaml", "kong.yaml"},
		{"envoy", "envoy/ratelimit-config.yaml", "envoy-ratelimit.yaml"},
		{"envoy-local", "envoy/local-ratelimit.yaml", "envoy-local.yaml"},
		{"traefik", "traefik.yml", "traefik.yaml"},
		{"haproxy", "haproxy.cfg", "haproxy.yaml"},
	} {
		t.Run(tc.from, func(t *testing.T) {
			data, err := os.ReadFile("../examples/" + tc.config)
			require.NoError(t, err)
			require.Equal(t, tc.from, Guess(tc.config, data))
			c, err := Read(tc.from, "examples/"+tc.config, data)
			require.NoError(t, err)
			im, err := c.Scenario(Options{})
			require.NoError(t, err)
			out, err := im.Text()
			require.NoError(t, err)
			want, err := os.ReadFile("../examples/" + tc.scenario)
			require.NoError(t, err)
			require.Equal(t, string(want), out)
			// the File is the scenario its text is
			im.File.From = "import.yaml"
			built, err := scenarios.Build(im.File)
			require.NoError(t, err)
			require.Equal(t, parseImported(t, out), built)
		})
	}
}

// text is the scenario of im as ratesim import prints it.
func text(im *Import, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return im.Text()
}
