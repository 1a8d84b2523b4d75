package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kongTwoKeys is a Kong route with two limits of different keys, both in
// redis: rate-limiting, 2 a second per consumer, and
// rate-limiting-advanced, 3 a second per client address in a fixed
// window.
const kongTwoKeys = `_format_version: "3.0"
services:
  - name: shop
    url: http://shop.internal:8080
    routes:
      - name: orders
        paths: [/orders]
        plugins:
          - name: rate-limiting
            config: {second: 2, limit_by: consumer, policy: redis, redis: {host: redis}}
          - name: rate-limiting-advanced
            config: {limit: [3], window_size: [1], window_type: fixed, identifier: ip, strategy: redis, sync_rate: 0, redis: {host: redis}}
consumers:
  - username: alice
  - username: bob
`

// A Kong route whose two plugins count by different keys (consumer, ip)
// with policy redis imports as two rows on the cluster, each counting by
// its own key: the consumer is the request's key, the address an
// attribute (an all-of row of the one window, by: remote_addr). Replayed
// from a JSON lines trace that logs both, on Kong's 3 placeholder nodes
// with redis 1 ms away (each INCR runs 0.5 ms after its request, every hit
// counted, rejected ones too). By hand, alice from 10.0.0.1 at 0, 100, 200
// and 300 ms, bob from 10.0.0.1 at 400 ms and from 10.0.0.2 at 500 ms:
//   - per consumer: alice 1, 2, then 3 and 4 over 2 (rejected until the
//     second ends, 799.5 and 699.5 ms); bob 1, 2: admitted.
//   - per address: 10.0.0.1 1, 2, 3, then alice's 4th and bob's first
//     (5) over 3: rejected (699.5, 599.5 ms), the decisions CSV naming
//     the limit and the address; 10.0.0.2 1: admitted.
func TestReplayGatewayKongTwoKeysRedis(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "kong.yaml"), filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(kongTwoKeys), 0o644))

	status, out, errOut := run(t, "import", conf)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "  - {name: fixed-window, label: orders, rate: 2, per: 1s, count-rejected: true, coordination: central}\n")
	require.Contains(t, out, `  # counts by remote_addr, not by the request's key (by: remote_addr)
  - name: all-of
    label: "orders (rate-limiting-advanced)"
    commit: every-hit
    coordination: central
    limits:
      # kong.yaml:12: limit 3 per window_size 1
      - {name: fixed-window, by: remote_addr, rate: 3, per: 1s, count-rejected: true}
`)
	// the import runs as it is (its placeholder traffic gives the
	// attribute)
	imported := filepath.Join(dir, "imported.yaml")
	require.NoError(t, os.WriteFile(imported, []byte(out), 0o644))
	status, _, errOut = run(t, "compare", imported)
	require.Equal(t, 0, status, errOut)

	var lines []string
	for _, l := range []struct{ ts, consumer, addr string }{
		{"0.0", "alice", "10.0.0.1"}, {"0.1", "alice", "10.0.0.1"}, {"0.2", "alice", "10.0.0.1"},
		{"0.3", "alice", "10.0.0.1"}, {"0.4", "bob", "10.0.0.1"}, {"0.5", "bob", "10.0.0.2"},
	} {
		lines = append(lines, `{"ts": 170000000`+l.ts+`, "consumer": "`+l.consumer+`", "remote_addr": "`+l.addr+`", "path": "/orders"}`)
	}
	require.NoError(t, os.WriteFile(trace, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	csv := filepath.Join(dir, "d.csv")
	status, out, errOut = run(t, "replay", trace, "--gateway", conf, "--trace-format", "jsonl", "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "Which limit fired:\n  orders (rate-limiting-advanced)  limits[0] 2 rejected\n")
	require.Contains(t, out, "Busiest key of each limit:\n  orders (rate-limiting-advanced)  limits[0]: \"10.0.0.1\" 3 in 1s (1.0x)\n")
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(got)), "\n")
	// Kong routes the trace: each decision ends with its route
	require.Equal(t, "algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,node,decided_ns,limit,key_1,route", rows[0])
	verdicts := map[string][]string{}
	for _, line := range rows[1:] {
		f := strings.Split(line, ",")
		verdicts[f[1]] = append(verdicts[f[1]], strings.Join([]string{f[3], f[6], f[8], f[11], f[12]}, " "))
		require.Equal(t, "orders", f[13], line)
	}
	require.Equal(t, map[string][]string{
		"orders": {
			"alice accept   ", "alice accept   ",
			"alice reject 799500000  ", "alice reject 699500000  ",
			"bob accept   ", "bob accept   ",
		},
		"orders (rate-limiting-advanced)": {
			"alice accept   10.0.0.1", "alice accept   10.0.0.1", "alice accept   10.0.0.1",
			"alice reject 699500000 limits[0] 10.0.0.1", "bob reject 599500000 limits[0] 10.0.0.1",
			"bob accept   10.0.0.2",
		},
	}, verdicts)

	// a CSV trace without the address: exit 2, naming the plugin's line
	// and the column to log
	noAddr := filepath.Join(dir, "trace.csv")
	require.NoError(t, os.WriteFile(noAddr, []byte("ts,consumer,path\n1700000000.0,alice,/orders\n"), 0o644))
	status, _, errOut = run(t, "replay", noAddr, "--gateway", conf, "--trace-format", "csv")
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "attribute remote_addr (the limits of "+conf+" by client address ("+conf+":11:13)): field \"remote_addr\": no such column (columns: ts, consumer, path)")
}

// The same route with policy cluster (the database's counts read, then an
// admitted request incremented: racy, write incr), the plugins the other
// way round: rate-limiting, 2 a second per client address, then
// rate-limiting-advanced, 3 a second per consumer (fixed window,
// disable_penalty: only admitted requests count). The address is now the
// request's key (the first plugin's), the consumer an attribute. Requests
// 100 ms apart, each GET 0.5 ms after it and its INCR 1.5 ms after it, so
// no read races another's write. By hand, alice from 10.0.0.1 at 0 and
// 200 ms and from 10.0.0.2 at 300 and 400 ms, bob from 10.0.0.1 at 100
// ms and from 10.0.0.3 at 500 ms:
//   - per address: 10.0.0.1 1, 2, then alice's at 200 ms over 2
//     (rejected until the second ends, 799.5 ms); 10.0.0.2 1, 2; 10.0.0.3
//     1.
//   - per consumer: alice 1 (0 ms), 2 (200 ms: this row admits it), 3,
//     then 400 ms over 3 (599.5 ms); bob 1, 2.
func TestReplayGatewayKongTwoKeysCluster(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "kong.yaml"), filepath.Join(dir, "trace.jsonl")
	text := strings.Replace(kongTwoKeys, "{second: 2, limit_by: consumer, policy: redis, redis: {host: redis}}",
		"{second: 2, limit_by: ip, policy: cluster}", 1)
	text = strings.Replace(text, "identifier: ip, strategy: redis, sync_rate: 0, redis: {host: redis}}",
		"identifier: consumer, strategy: cluster, sync_rate: 0, disable_penalty: true}", 1)
	require.NoError(t, os.WriteFile(conf, []byte(text), 0o644))

	status, out, errOut := run(t, "import", conf)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "  - {name: fixed-window, label: orders, rate: 2, per: 1s, coordination: racy, write: incr}\n")
	require.Contains(t, out, `  # counts by consumer, not by the request's key (by: consumer)
  - name: all-of
    label: "orders (rate-limiting-advanced)"
    commit: all-or-nothing
    coordination: racy
    write: incr
    limits:
      # kong.yaml:12: limit 3 per window_size 1
      - {name: fixed-window, by: consumer, rate: 3, per: 1s}
`)

	var lines []string
	for _, l := range []struct{ ts, consumer, addr string }{
		{"0.0", "alice", "10.0.0.1"}, {"0.1", "bob", "10.0.0.1"}, {"0.2", "alice", "10.0.0.1"},
		{"0.3", "alice", "10.0.0.2"}, {"0.4", "alice", "10.0.0.2"}, {"0.5", "bob", "10.0.0.3"},
	} {
		lines = append(lines, `{"ts": 170000000`+l.ts+`, "consumer": "`+l.consumer+`", "remote_addr": "`+l.addr+`", "path": "/orders"}`)
	}
	require.NoError(t, os.WriteFile(trace, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	csv := filepath.Join(dir, "d.csv")
	status, _, errOut = run(t, "replay", trace, "--gateway", conf, "--trace-format", "jsonl", "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(got)), "\n")
	verdicts := map[string][]string{}
	for _, line := range rows[1:] {
		f := strings.Split(line, ",")
		verdicts[f[1]] = append(verdicts[f[1]], strings.Join([]string{f[3], f[6], f[8], f[11], f[12]}, " "))
	}
	require.Equal(t, map[string][]string{
		"orders": {
			"10.0.0.1 accept   ", "10.0.0.1 accept   ", "10.0.0.1 reject 799500000  ",
			"10.0.0.2 accept   ", "10.0.0.2 accept   ", "10.0.0.3 accept   ",
		},
		"orders (rate-limiting-advanced)": {
			"10.0.0.1 accept   alice", "10.0.0.1 accept   bob", "10.0.0.1 accept   alice",
			"10.0.0.2 accept   alice", "10.0.0.2 reject 599500000 limits[0] alice", "10.0.0.3 accept   bob",
		},
	}, verdicts)
}

// A Kong plugin with limit_by path counts the requests to its path under
// the path, and any other request by its client address (get_identifier
// in kong/plugins/rate-limiting/handler.lua). Policy redis, 1 a second,
// one store (central): by hand, /orders/checkout from 10.0.0.1 passes, and
// from 10.0.0.2 (its query dropped) is the path's second: rejected;
// /orders/list from 10.0.0.1 passes, then is rejected (the address's
// second); from 10.0.0.2 passes. Counted by the request's path, as
// before, the second would pass (another path) and the last be rejected.
func TestReplayGatewayKongPath(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "kong.yaml"), filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(`_format_version: "3.0"
services:
  - name: shop
    url: http://shop.internal:8080
    routes:
      - name: orders
        paths: [/orders]
        plugins:
          - name: rate-limiting
            config: {second: 1, limit_by: path, path: /orders/checkout, policy: redis, redis: {host: redis}}
`), 0o644))
	require.NoError(t, os.WriteFile(trace, []byte(`{"ts": 1700000000.0, "ip": "10.0.0.1", "path": "/orders/checkout"}
{"ts": 1700000000.1, "ip": "10.0.0.2", "path": "/orders/checkout?x=1"}
{"ts": 1700000000.2, "ip": "10.0.0.1", "path": "/orders/list"}
{"ts": 1700000000.3, "ip": "10.0.0.1", "path": "/orders/list"}
{"ts": 1700000000.4, "ip": "10.0.0.2", "path": "/orders/list"}
`), 0o644))
	csv := filepath.Join(dir, "d.csv")
	status, _, errOut := run(t, "replay", trace, "--gateway", conf, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		rows = append(rows, f[6]+" "+f[12]) // verdict, the limit's key
	}
	require.Equal(t, []string{"accept /orders/checkout", "reject /orders/checkout", "accept 10.0.0.1", "reject 10.0.0.1", "accept 10.0.0.2"}, rows)

	// a combined log: exit 2, naming the plugin's line
	log := filepath.Join(dir, "access.log")
	require.NoError(t, os.WriteFile(log, []byte("1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /orders HTTP/1.1\" 200 1\n"), 0o644))
	status, _, errOut = run(t, "replay", log, "--gateway", conf)
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "the limits of "+conf+" count by the path /orders/checkout for a request to it, else by the client address ("+conf+":9:13), which replay derives from each request's path and address in a JSON lines trace or an nginx log_format (--log-format), not a common trace")
}
