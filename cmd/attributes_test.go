package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// twoZones is nginx's two zones in one server, on synthetic traffic: a
// per-address limit ($binary_remote_addr: the request's key) beside a
// global one ($server_name in one server block: every request), and the
// same per-address limit beside a per-server one (an attribute the sources
// give). Addresses a and b are served by api, c by web.
const twoZones = `name: two-zones
limit: {rate: 2, per: 1s}
traffic:
  - {type: times, at: [0ms, 100ms, 200ms], key: addr-a, attributes: {server: api}}
  - {type: times, at: [300ms, 400ms], key: addr-b, attributes: {server: api}}
  - {type: times, at: [500ms, 1100ms], key: addr-c, attributes: {server: web}}
algorithms:
  - name: all-of
    label: addr+global
    limits:
      - {name: fixed-window, rate: 2, per: 1s}
      - {name: fixed-window, rate: 3, per: 1s, by: global}
  - name: all-of
    label: addr+server
    limits:
      - {name: fixed-window, rate: 2, per: 1s}
      - {name: fixed-window, rate: 3, per: 1s, by: server}
  - {name: fixed-window, label: addr-only, rate: 2, per: 1s}
`

// TestAllOfByAttributes: each limit of an all-of row counts by its own
// attribute, on fixed windows [0, 1s) and [1s, 2s), all-or-nothing (a
// rejected request charges no limit).
func TestAllOfByAttributes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "two-zones.yaml")
	require.NoError(t, os.WriteFile(path, []byte(twoZones), 0o644))
	decisions := filepath.Join(dir, "d.csv")
	status, _, errOut := run(t, "compare", path, "--decisions", decisions)
	require.Equal(t, 0, status, errOut)
	data, err := os.ReadFile(decisions)
	require.NoError(t, err)
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		f := strings.Split(line, ",")
		got[f[1]] = append(got[f[1]], f[3]+" "+f[6]+" "+f[8])
	}
	require.Equal(t, []string{
		"addr-a accept ",          // a 1, global 1
		"addr-a accept ",          // a 2, global 2
		"addr-a reject 800000000", // a full until 1s; global not charged
		"addr-b accept ",          // b 1, global 3
		"addr-b reject 600000000", // global full until 1s; b not charged
		"addr-c reject 500000000", // global full, though c has sent nothing
		"addr-c accept ",          // new windows: c 1, global 1
	}, got["addr+global"])
	require.Equal(t, []string{
		"addr-a accept ",          // a 1, api 1
		"addr-a accept ",          // a 2, api 2
		"addr-a reject 800000000", // a full; api not charged
		"addr-b accept ",          // b 1, api 3
		"addr-b reject 600000000", // api full until 1s
		"addr-c accept ",          // c 1, web 1: another server's count
		"addr-c accept ",          // new windows
	}, got["addr+server"])
	require.Equal(t, []string{
		"addr-a accept ", "addr-a accept ", "addr-a reject 800000000", // a's third
		"addr-b accept ", "addr-b accept ", "addr-c accept ", "addr-c accept ",
	}, got["addr-only"])
}

// TestAllOfByErrors: a limit's by names the key, global or an attribute a
// source gives.
func TestAllOfByErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, edit, want string }{
		{"unknown attribute", "by: server}", `two-zones.yaml:17:52: algorithms[1].limits[1].by: "sever": no source gives this attribute (want key, global or server); did you mean "server"?`},
		{"reserved name", "attributes: {server: web}}", `two-zones.yaml:6:79: traffic[2].attributes.key: "key": reserved`},
		{"not a string", "attributes: {server: web}}", `two-zones.yaml:6:85: traffic[2].attributes.port: found integer 80, want a string (quote it: "80")`},
	} {
		text := twoZones
		switch c.name {
		case "unknown attribute":
			text = strings.Replace(text, c.edit, "by: sever}", 1)
		case "reserved name":
			text = strings.Replace(text, c.edit, "attributes: {server: web, key: x}}", 1)
		case "not a string":
			text = strings.Replace(text, c.edit, "attributes: {server: web, port: 80}}", 1)
		}
		path := filepath.Join(dir, "two-zones.yaml")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		status, _, errOut := run(t, "validate", path)
		require.Equal(t, 2, status, c.name)
		require.Contains(t, errOut, c.want, c.name)
	}
}

// TestAllOfByAttributesOnCluster: the two-zone rows on 2 nodes, the first
// with its limits in a store 2 ms away (central), the second read and
// incremented there (racy, write: incr). Each limit counts under its own
// key in the store; the requests are 100 ms apart, longer than a round
// trip, so the verdicts are the single limiter's (TestAllOfByAttributes),
// each decided 2 ms after its request, its wait counted from the store's
// instant 1 ms after it; the CSV names the limit that fired and each
// limit's key.
func TestAllOfByAttributesOnCluster(t *testing.T) {
	dir := t.TempDir()
	text := strings.Replace(twoZones, "traffic:", "cluster: {nodes: 2, store: {rtt: 2ms}}\ntraffic:", 1)
	text = strings.Replace(text, "label: addr+global\n", "label: addr+global\n    coordination: central\n", 1)
	text = strings.Replace(text, "label: addr+server\n", "label: addr+server\n    coordination: racy\n    write: incr\n", 1)
	text = strings.Replace(text, "  - {name: fixed-window, label: addr-only, rate: 2, per: 1s}\n", "", 1)
	path := filepath.Join(dir, "cluster.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	decisions := filepath.Join(dir, "d.csv")
	status, out, errOut := run(t, "compare", path, "--decisions", decisions)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `addr+server  limits[0]: "addr-a" 2 in 1s (1.0x); limits[1]: "api" 3 in 1s (1.0x)`)
	data, err := os.ReadFile(decisions)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, "algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,node,decided_ns,limit,key_1,key_2", lines[0])
	got := map[string][]string{}
	for _, line := range lines[1:] {
		f := strings.Split(line, ",")
		got[f[1]] = append(got[f[1]], strings.Join(append([]string{f[6], f[8], f[9]}, f[11:]...), " "))
	}
	require.Equal(t, []string{
		"accept  0  addr-a global",
		"accept  1  addr-a global",
		"reject 799000000 0 limits[0] addr-a global", // a full
		"accept  1  addr-b global",
		"reject 599000000 0 limits[1] addr-b global", // global full
		"reject 499000000 1 limits[1] addr-c global",
		"accept  0  addr-c global",
	}, got["addr+global"])
	require.Equal(t, []string{
		"accept  0  addr-a api",
		"accept  1  addr-a api",
		"reject 799000000 0 limits[0] addr-a api",
		"accept  1  addr-b api",
		"reject 599000000 0 limits[1] addr-b api", // api full
		"accept  1  addr-c web",                   // web's own count
		"accept  0  addr-c web",
	}, got["addr+server"])
}
