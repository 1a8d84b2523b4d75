package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// TestReadReplay: the field of the log that holds each request's key is
// the log_format's variable for it (nginx's predefined combined one when
// the config names none); a log read as combined holds the address as ip;
// a header a combined log does not carry is an error that says how to log
// it.
func TestReadReplay(t *testing.T) {
	read := func(conf string, fields map[string]string) (*Replay, error) {
		cfg, err := ReadNginx("nginx.conf", []byte(conf))
		require.NoError(t, err)
		return ReadReplay(cfg, ReplayOptions{From: "nginx", File: "nginx.conf", Trace: "check.log", Fields: fields})
	}
	const byHeader = `http {
    log_format check '$msec $limit_req_status $http_x_client $status';
    access_log /var/log/nginx/check.log check;
    limit_req_zone $http_x_client zone=one:1m rate=1r/s;
    limit_req_status 503;
    server { location / { limit_req zone=one burst=1 nodelay; } }
}
`
	g, err := read(byHeader, nil)
	require.NoError(t, err)
	require.Equal(t, "http_x_client", g.KeyField)
	require.Equal(t, "$msec $limit_req_status $http_x_client $status", g.LogFormat)
	require.Equal(t, "nginx", g.TraceFormat)
	require.Equal(t, []int{503}, g.Rejects)
	require.Nil(t, g.Doc.Traffic)
	require.NotEmpty(t, g.Doc.Algorithms)
	src := scenarios.Source{Type: scenarios.TextOf("replay")}
	g.Source(&src)
	require.Equal(t, scenarios.Source{Type: scenarios.TextOf("replay"), KeyField: scenarios.TextOf("http_x_client"),
		LogFormat: scenarios.TextOf("$msec $limit_req_status $http_x_client $status")}, src)

	g, err = read(byHeader, map[string]string{"key-field": "x"})
	require.NoError(t, err)
	require.Empty(t, g.KeyField, "the user's")

	const byAddr = `http {
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;
    server { location / { limit_req zone=one; } }
}
`
	g, err = read(byAddr, nil)
	require.NoError(t, err)
	require.Equal(t, "remote_addr", g.KeyField)
	require.Equal(t, "log_format combined (nginx's predefined format)", g.FormatName)
	g, err = read(byAddr, map[string]string{"format": "combined"})
	require.NoError(t, err)
	require.Equal(t, "ip", g.KeyField)

	_, err = read(byHeader, map[string]string{"format": "combined"})
	require.ErrorContains(t, err, "which a combined or common log does not carry: log it (nginx: $http_x_client in a log_format)")
}

// TestCheckRejects: 429 is a rejection in any log; a config adds the
// statuses its limits reject with, once each.
func TestCheckRejects(t *testing.T) {
	require.Equal(t, []int{429}, CheckRejects(nil))
	require.Equal(t, []int{429, 503}, CheckRejects(&Replay{Rejects: []int{503, 429, 503}}))
}
