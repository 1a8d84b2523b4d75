package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/sim"
)

// apimReplayFiles writes three APIM scopes into a temporary folder, each
// running the one above first (<base /> before its limit): the global
// scope's 3 per 10s by the address, the product's rate-limit 4 per 10s,
// the API's 2 per 10s by X-Client. It returns the folder and the files,
// outermost first.
func apimReplayFiles(t *testing.T) (string, []string) {
	dir := t.TempDir()
	files := map[string]string{
		"global.xml": "<policies>\n    <inbound>\n" +
			"        <rate-limit-by-key calls=\"3\" renewal-period=\"10\" counter-key=\"@(context.Request.IpAddress)\" />\n" +
			"    </inbound>\n</policies>\n",
		"product.xml": "<policies>\n    <inbound>\n        <base />\n" +
			"        <rate-limit calls=\"4\" renewal-period=\"10\" />\n" +
			"    </inbound>\n</policies>\n",
		"api.xml": "<policies>\n    <inbound>\n        <base />\n" +
			"        <rate-limit-by-key calls=\"2\" renewal-period=\"10\" counter-key=\"@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;))\" />\n" +
			"    </inbound>\n</policies>\n",
	}
	var paths []string
	for _, name := range []string{"global.xml", "product.xml", "api.xml"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(files[name]), 0o644))
		paths = append(paths, p)
	}
	return dir, paths
}

// apimLog is a CSV log of 8 requests: time, the caller's address, the
// subscription and the X-Client header.
const apimLog = `ts,remote_addr,subscription,http_x_client
1700000000.000,10.0.0.1,s1,A
1700000000.100,10.0.0.1,s1,A
1700000000.200,10.0.0.2,s1,A
1700000000.300,10.0.0.1,s1,B
1700000000.400,10.0.0.1,s2,C
1700000000.500,10.0.0.3,s1,D
1700000000.600,10.0.0.4,s2,E
1700000010.150,10.0.0.2,s1,A
`

// TestReplayAzureScopes: a log replayed through three APIM scopes, each
// limit counting by its own key read from the log: the global scope's 3
// per 10s by remote_addr (the request's key), the product's rate-limit 4
// per 10s by subscription, the API's 2 per 10s by http_x_client, in that
// order, each counting what it admits (a call leaves its window 10s
// later). By hand:
//
//	.0 A 10.0.0.1 s1  ip1 1, s1 1, A 1: accept
//	.1 A 10.0.0.1 s1  ip1 2, s1 2, A 2: accept
//	.2 A 10.0.0.2 s1  ip2 1, s1 3, A is at 2: the API's limit refuses
//	.3 B 10.0.0.1 s1  ip1 3, s1 4, B 1: accept
//	.4 C 10.0.0.1 s2  ip1 is at 3: the global limit refuses
//	.5 D 10.0.0.3 s1  ip3 1, s1 is at 4: the product's refuses
//	.6 E 10.0.0.4 s2  ip4 1, s2 1, E 1: accept
//	10.15 A 10.0.0.2 s1  ip2 2 (.2 is in its window), s1 3 (.0 and .1
//	                     have left), A 1 (both left): accept
func TestReplayAzureScopes(t *testing.T) {
	t.Parallel()
	dir, files := apimReplayFiles(t)
	trace := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(trace, []byte(apimLog), 0o644))
	csv := filepath.Join(dir, "d.csv")
	args := []string{"replay", trace, "--trace-format", "csv", "--decisions", csv, "--format", "json"}
	for _, f := range files {
		args = append(args, "--gateway", f)
	}
	status, out, errOut := run(t, args...)
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	require.Equal(t, []sim.LimitFired{
		{Limit: "global rate-limit-by-key (global.xml:3)", Rejected: 1},
		{Limit: "product rate-limit (product.xml:4)", Rejected: 1},
		{Limit: "api rate-limit-by-key (api.xml:4)", Rejected: 1},
	}, rep.Results[0].Fired)
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		rows = append(rows, strings.Join(append([]string{f[6], f[9]}, f[10:]...), " "))
	}
	require.Equal(t, []string{
		"accept  10.0.0.1 s1 A",
		"accept  10.0.0.1 s1 A",
		"reject api rate-limit-by-key (api.xml:4) 10.0.0.2 s1 A",
		"accept  10.0.0.1 s1 B",
		"reject global rate-limit-by-key (global.xml:3) 10.0.0.1 s2 C",
		"reject product rate-limit (product.xml:4) 10.0.0.3 s1 D",
		"accept  10.0.0.4 s2 E",
		"accept  10.0.0.2 s1 A",
	}, rows)
}

// A log lacking the field of a limit's key is exit 2, naming the policy's
// file:line:col and the field: an attribute's, or the request's key.
func TestReplayAzureMissingField(t *testing.T) {
	t.Parallel()
	dir, files := apimReplayFiles(t)
	for _, c := range []struct {
		drop int // the column of apimLog left out
		want string
	}{
		{2, `: attribute subscription (the limits of ` + strings.Join(files, ", ") + ` by the subscription (` + files[1] + `:4:9)): field "subscription": no such column (columns: ts, remote_addr, http_x_client)`},
		{3, `: attribute http_x_client (the limits of ` + strings.Join(files, ", ") + ` by the header x-client (` + files[2] + `:4:9)): field "http_x_client": no such column (columns: ts, remote_addr, subscription)`},
		{1, `: key (the limits of ` + strings.Join(files, ", ") + ` by client address (` + files[0] + `:3:9)): key-field "remote_addr": no such column (columns: ts, subscription, http_x_client)`},
	} {
		var lines []string
		for _, line := range strings.Split(strings.TrimSpace(apimLog), "\n") {
			f := strings.Split(line, ",")
			lines = append(lines, strings.Join(append(f[:c.drop:c.drop], f[c.drop+1:]...), ","))
		}
		trace := filepath.Join(dir, "log.csv")
		require.NoError(t, os.WriteFile(trace, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		args := []string{"replay", trace, "--trace-format", "csv"}
		for _, f := range files {
			args = append(args, "--gateway", f)
		}
		status, _, errOut := run(t, args...)
		require.Equal(t, 2, status, errOut)
		require.Equal(t, "ratesim: "+trace+c.want+"\n", errOut)
	}
}

// Limits in rows apart (the operation's in a <choose> branch) each count
// by their own key too. The same log, each row alone, by hand: the
// global row (by address, 3 per 10s) refuses 10.0.0.1's fourth (.4); the
// product's (s1, 4) s1's fifth (.5); the API's (X-Client, 2) A's third
// (.2); the operation's (the constant "posts", 1 per 10s) every request
// but the first and the one at 10.15s (the first has left its window).
func TestReplayAzureRows(t *testing.T) {
	t.Parallel()
	dir, files := apimReplayFiles(t)
	op := filepath.Join(dir, "operation.xml")
	require.NoError(t, os.WriteFile(op, []byte("<policies>\n    <inbound>\n        <base />\n        <choose>\n            <when condition=\"@(true)\">\n"+
		"                <rate-limit-by-key calls=\"1\" renewal-period=\"10\" counter-key=\"posts\" />\n"+
		"            </when>\n        </choose>\n    </inbound>\n</policies>\n"), 0o644))
	trace := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(trace, []byte(apimLog), 0o644))
	csv := filepath.Join(dir, "d.csv")
	args := []string{"replay", trace, "--trace-format", "csv", "--decisions", csv}
	for _, f := range append(files, op) {
		args = append(args, "--gateway", f)
	}
	status, _, errOut := run(t, args...)
	require.Equal(t, 0, status, errOut)
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	verdicts := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		verdicts[f[1]] += f[6][:1]
	}
	require.Equal(t, map[string]string{
		"global-rate-limit-by-key-3":    "aaaaraaa",
		"product-rate-limit-4":          "aaaaaraa",
		"api-rate-limit-by-key-4":       "aaraaaaa",
		"operation-rate-limit-by-key-6": "arrrrrra",
	}, verdicts)
}

// TestReplayAzureFormatFromLines: without --trace-format, a CSV or JSON
// lines trace is recognised from its first lines, whatever its name says,
// and its limits' keys read from its fields, as with the flag: the same
// log as TestReplayAzureScopes, in CSV and in JSON lines, in files named
// without an extension, gets the same verdicts by hand (accept, accept, the API's refusal,
// accept, the global one's, the product's, accept, accept).
func TestReplayAzureFormatFromLines(t *testing.T) {
	t.Parallel()
	dir, files := apimReplayFiles(t)
	var jsonl strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(apimLog), "\n")[1:] {
		f := strings.Split(line, ",")
		fmt.Fprintf(&jsonl, "{\"ts\": %s, \"remote_addr\": %q, \"subscription\": %q, \"http_x_client\": %q}\n", f[0], f[1], f[2], f[3])
	}
	for name, data := range map[string]string{"requests-csv": apimLog, "requests-json": jsonl.String()} {
		trace := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(trace, []byte(data), 0o644))
		decisions := filepath.Join(dir, name+".decisions.csv")
		args := []string{"replay", trace, "--decisions", decisions}
		for _, f := range files {
			args = append(args, "--gateway", f)
		}
		status, _, errOut := run(t, args...)
		require.Equal(t, 0, status, errOut)
		got, err := os.ReadFile(decisions)
		require.NoError(t, err)
		var verdicts []string
		for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
			verdicts = append(verdicts, strings.Split(line, ",")[6])
		}
		require.Equal(t, []string{"accept", "accept", "reject", "accept", "reject", "reject", "accept", "accept"}, verdicts, name)
	}
}

// TestReplayAzureNoValue: a JSON line without a limit's field is a request
// without that value (JSON's null), which the limit does not count; the
// summary counts such lines. A field no line has is most often one named
// otherwise in the log: the run warns, naming the trace and the field.
// The log: 3 requests of one address, with the product's subscription on
// the first only, or on none.
func TestReplayAzureNoValue(t *testing.T) {
	t.Parallel()
	dir, files := apimReplayFiles(t)
	for _, c := range []struct {
		first, warn string
	}{
		{`, "subscription": "s1"`, ""},
		{``, "ratesim: warning: " + filepath.Join(dir, "log.jsonl") + ": no line used has a value for subscription: a limit by it counted none of its 3 requests (is the field named otherwise in the log?)\n"},
	} {
		trace := filepath.Join(dir, "log.jsonl")
		require.NoError(t, os.WriteFile(trace, []byte(
			`{"ts": 1700000000.0, "remote_addr": "10.0.0.1", "http_x_client": "A"`+c.first+"}\n"+
				`{"ts": 1700000000.1, "remote_addr": "10.0.0.1", "http_x_client": "B"}`+"\n"+
				`{"ts": 1700000000.2, "remote_addr": "10.0.0.1", "http_x_client": "C"}`+"\n"), 0o644))
		args := []string{"replay", trace}
		for _, f := range files {
			args = append(args, "--gateway", f)
		}
		status, out, errOut := run(t, args...)
		require.Equal(t, 0, status, errOut)
		require.Equal(t, c.warn, errOut)
		nov := 2 // the lines after the first
		if c.first == "" {
			nov = 3
		}
		require.Contains(t, out, fmt.Sprintf("  lines without a value (a limit by it did not look at them): subscription %d\n", nov))
	}
}

// TestReplayAzureHeaderDefault: GetValueOrDefault("X-Client", "anonymous")
// counts every request without the header under "anonymous", as one
// client. 2 per 10s by X-Client, and 5 requests 100ms apart: A, none, A,
// none, none. By hand: A 1, anonymous 1, A 2, anonymous 2, then the third
// without the header is anonymous's third: refused.
func TestReplayAzureHeaderDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	api := filepath.Join(dir, "api.xml")
	require.NoError(t, os.WriteFile(api, []byte("<policies>\n    <inbound>\n"+
		"        <rate-limit-by-key calls=\"2\" renewal-period=\"10\" counter-key=\"@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;,&quot;anonymous&quot;))\" />\n"+
		"    </inbound>\n</policies>\n"), 0o644))
	trace := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(trace, []byte("ts,remote_addr,http_x_client\n"+
		"1700000000.000,10.0.0.1,A\n1700000000.100,10.0.0.2,\n1700000000.200,10.0.0.1,A\n"+
		"1700000000.300,10.0.0.3,\n1700000000.400,10.0.0.4,\n"), 0o644))
	decisions := filepath.Join(dir, "d.csv")
	status, out, errOut := run(t, "replay", trace, "--gateway", api, "--decisions", decisions)
	require.Equal(t, 0, status, errOut)
	require.NotContains(t, out, "lines without a value")
	got, err := os.ReadFile(decisions)
	require.NoError(t, err)
	var verdicts []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		verdicts = append(verdicts, f[6]+" "+f[len(f)-1])
	}
	require.Equal(t, []string{"accept A", "accept anonymous", "accept A", "accept anonymous", "reject anonymous"}, verdicts)
}
