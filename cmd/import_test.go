package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestImportNginx(t *testing.T) {
	status, out, errOut := run(t, "import", "../examples/nginx.conf")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "ratesim: reading ../examples/nginx.conf with the nginx reader (--from nginx)\n", errOut)
	// the import loads
	path := filepath.Join(t.TempDir(), "imported.yaml")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	status, _, errOut = run(t, "validate", path)
	require.Equal(t, 0, status, errOut)
	status, _, errOut = run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
}

// An haproxy.cfg is told apart from an nginx.conf, and its import runs.
func TestImportHAProxy(t *testing.T) {
	status, out, errOut := run(t, "import", "../examples/haproxy.cfg")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "ratesim: reading ../examples/haproxy.cfg with the haproxy reader (--from haproxy)\n", errOut)
	path := filepath.Join(t.TempDir(), "imported.yaml")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
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
		{[]string{"import", plain}, "ratesim: " + plain + ": cannot tell which gateway's config this is: name it with --from (one of nginx, haproxy)\n"},
		{[]string{"import", plain, "--from", "bogus"}, "ratesim: --from \"bogus\": not a gateway ratesim reads (want one of nginx, haproxy)\n"},
		{[]string{"import", "../examples/nginx.conf", "--from", "nginx", "--scope", "/nope"}, "ratesim: --scope \"/nope\": no scope of ../examples/nginx.conf has that name (its scopes: \"api.example.com /\", \"api.example.com /search\", \"api.example.com = /login\")\n"},
		{[]string{"import", "../examples/haproxy-broken.cfg", "--from", "haproxy"}, "../examples/haproxy-broken.cfg:4:5: stick-table: expire 10s is shorter than twice the http_req_rate period 10s: an entry can expire while its counter still counts, which ratesim does not model (want expire >= 20s)\n"},
		{[]string{"import", "../examples/haproxy.cfg", "--from", "haproxy", "--scope", "nope"}, "ratesim: --scope \"nope\": no scope of ../examples/haproxy.cfg has that name (its scopes: \"api\", \"partners\")\n"},
		{[]string{"import", filepath.Join(dir, "missing.conf")}, "ratesim: open " + filepath.Join(dir, "missing.conf") + ": no such file or directory\n"},
	} {
		status, out, errOut := run(t, tc.args...)
		require.Equal(t, 2, status, tc.args)
		require.Empty(t, out)
		require.Equal(t, tc.want, errOut)
	}
}
