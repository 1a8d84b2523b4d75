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

// TestReplayEnvoyListeners: one JSON access log of three listeners
// (../gateway/testdata/envoy-listeners.yaml), each line naming its
// listener by name ("listener") or by %DOWNSTREAM_LOCAL_ADDRESS%
// ("downstream_local_address"). Hand-computed, envoy 1.31's continuous
// refill: public (2 tokens, 2 per 1s) takes .0 (1 left) and .1 (1.2 - 1
// = 0.2 left), and rejects .4 (0.8); internal (1 token, 1 per 1s) takes
// .2 and rejects .3 (0.1); the admin listener has no limit; internal has
// no route for /other, and 10.0.0.9:7000 is no listener's: 2 unrouted.
func TestReplayEnvoyListeners(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.json")
	var lines []string
	for i, l := range []struct{ field, listener, path string }{
		{"listener", "public", "/a"},
		{"downstream_local_address", "10.0.0.5:8080", "/b"},
		{"downstream_local_address", "127.0.0.1:9090", "/jobs/1"},
		{"downstream_local_address", "127.0.0.1:9090", "/jobs/2"},
		{"listener", "public", "/c"},
		{"downstream_local_address", "127.0.0.1:9901", "/stats"},
		{"downstream_local_address", "127.0.0.1:9090", "/other"},
		{"downstream_local_address", "10.0.0.9:7000", "/x"},
	} {
		lines = append(lines, fmt.Sprintf(`{"time": "2024-01-01T00:00:00.%d00Z", %q: %q, "path": %q, "method": "GET"}`, i, l.field, l.listener, l.path))
	}
	require.NoError(t, os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	rep := jsonReport(t, "replay", log, "--gateway", "../gateway/testdata/envoy-listeners.yaml", "--from", "envoy-local")
	require.Len(t, rep.Results, 2)
	for i, want := range []struct {
		label                       string
		offered, accepted, rejected int64
	}{{"public", 3, 2, 1}, {"internal", 2, 1, 1}} {
		r := rep.Results[i]
		require.Equal(t, want.label, r.Label)
		require.Equal(t, []int64{want.offered, want.accepted, want.rejected}, []int64{r.Offered, r.Accepted, r.Rejected}, r.Label)
	}
	g := rep.Traces[0].Routing
	require.NotNil(t, g)
	require.Equal(t, int64(2), g.Unrouted)
	require.Equal(t, []sim.RouteCount{{Route: "public", Limited: true, Requests: 3}, {Route: "internal", Limited: true, Requests: 2}, {Route: "admin", Requests: 1}}, g.Routes)
}

// A JSON log whose lines name no listener cannot be routed among several:
// each line is malformed, saying which fields would name it.
func TestReplayEnvoyListenersNoField(t *testing.T) {
	log := filepath.Join(t.TempDir(), "access.json")
	require.NoError(t, os.WriteFile(log, []byte(`{"time": "2024-01-01T00:00:00.100Z", "path": "/a"}`+"\n"), 0o644))
	status, out, errOut := run(t, "replay", log, "--gateway", "../gateway/testdata/envoy-listeners.yaml", "--from", "envoy-local")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "access.json:1:1: missing field: no frontend (or listener) on this line (the gateway's routes need it: HAProxy's %f; in JSON lines, a field frontend, frontend_name, listener, listener_name, downstream_local_address)")
}

// --scope internal on a log of several listeners: the internal row still
// takes only the lines of its listener (127.0.0.1:9090), and public's and
// admin's are routes without a row. By hand, internal's bucket of 1 token
// a second: /jobs/1 passes, /jobs/2 100 ms later is rejected. public's
// /jobs/9, which internal's route /jobs/ would take, is public's: before,
// every line was read as internal's, and the row saw 3 and rejected 2. A
// log whose lines name no listener is still read as internal's, as stderr
// says.
func TestReplayEnvoyListenersScope(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.json")
	var lines []string
	for i, l := range []struct{ field, listener, path string }{
		{"listener", "public", "/jobs/9"},
		{"downstream_local_address", "127.0.0.1:9090", "/jobs/1"},
		{"downstream_local_address", "127.0.0.1:9090", "/jobs/2"},
		{"listener", "public", "/a"},
		{"downstream_local_address", "127.0.0.1:9901", "/stats"},
	} {
		lines = append(lines, fmt.Sprintf(`{"time": "2024-01-01T00:00:00.%d00Z", %q: %q, "path": %q, "method": "GET"}`, i, l.field, l.listener, l.path))
	}
	require.NoError(t, os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	status, out, errOut := run(t, "replay", log, "--gateway", "../gateway/testdata/envoy-listeners.yaml", "--from", "envoy-local", "--scope", "internal", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Equal(t, "internal", r.Label)
	require.Equal(t, []int64{2, 1, 1}, []int64{r.Offered, r.Accepted, r.Rejected})
	g := rep.Traces[0].Routing
	require.NotNil(t, g)
	require.Zero(t, g.Unrouted)
	require.Equal(t, []sim.RouteCount{{Route: "internal", Limited: true, Requests: 2}, {Route: "public", Requests: 2}, {Route: "admin", Requests: 1}}, g.Routes)

	bare := filepath.Join(dir, "bare.json")
	require.NoError(t, os.WriteFile(bare, []byte(`{"time": "2024-01-01T00:00:00.100Z", "path": "/jobs/1"}`+"\n"+`{"time": "2024-01-01T00:00:00.200Z", "path": "/jobs/2"}`+"\n"), 0o644))
	status, out, errOut = run(t, "replay", bare, "--gateway", "../gateway/testdata/envoy-listeners.yaml", "--from", "envoy-local", "--scope", "internal", "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "the trace's first line does not log each request's frontend (or listener): the listener internal, whose scopes --scope kept, takes every line")
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, []int64{2, 1, 1}, []int64{rep.Results[0].Offered, rep.Results[0].Accepted, rep.Results[0].Rejected})
}
