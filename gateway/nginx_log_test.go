package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// TestNginxAccessLogs: access_log inherits as ngx_http_log_merge_loc_conf
// says: a level with any access_log (or off) keeps its own, one without
// takes its parent's, and with none anywhere nginx writes
// logs/access.log in combined.
func TestNginxAccessLogs(t *testing.T) {
	const conf = `http {
    log_format check escape=json '$msec $limit_req_status '
                                 '"$http_x_client"';
    limit_req_zone $http_x_client zone=z:1m rate=10r/s;
    limit_req zone=z;
    access_log /var/log/a.log check;
    server {
        server_name one;
        location /inherits { }
        location /own { access_log /var/log/b.log; access_log /var/log/c.log check buffer=32k; }
        location /off { access_log off; }
    }
}
server {
    server_name two;
}
`
	n, err := ReadNginx("n.conf", []byte(conf))
	require.NoError(t, err)
	check := n.Formats["check"]
	// the two strings concatenated without a separator, as nginx does
	require.Equal(t, &LogFormat{Name: "check", Text: `$msec $limit_req_status "$http_x_client"`, Escape: "json", Where: Pos{"n.conf", 2, 5}}, check)
	combined := n.Formats["combined"]
	require.Equal(t, traffic.CombinedTemplate, combined.Text)
	logs := func(scope string) []AccessLog {
		l, err := n.AccessLogs(Options{Scope: scope})
		require.NoError(t, err)
		return l
	}
	require.Equal(t, []AccessLog{{"/var/log/a.log", check, Pos{"n.conf", 6, 5}}}, logs("/inherits"))
	require.Equal(t, []AccessLog{{"/var/log/b.log", combined, Pos{"n.conf", 10, 25}}, {"/var/log/c.log", check, Pos{"n.conf", 10, 52}}}, logs("/own"))
	require.Empty(t, logs("/off"))
	st, err := n.RejectStatuses(Options{Scope: "/own"})
	require.NoError(t, err)
	require.Equal(t, []int{503}, st) // limit_req_status's default

	// no access_log anywhere: nginx's default log, combined
	n, err = ReadNginx("n.conf", []byte("limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;\nserver { limit_req zone=z; limit_req_status 429; }\n"))
	require.NoError(t, err)
	l, err := n.AccessLogs(Options{})
	require.NoError(t, err)
	require.Equal(t, []AccessLog{{Path: "logs/access.log", Format: n.Formats["combined"]}}, l)
	st, err = n.RejectStatuses(Options{})
	require.NoError(t, err)
	require.Equal(t, []int{429}, st)
}

func TestNginxLogErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"log_format combined '$msec';\n", `n.conf:1:1: log_format: duplicate log_format name "combined" (nginx predefines combined)`},
		{"log_format a '$msec';\nlog_format a '$msec';\n", `n.conf:2:1: log_format: duplicate log_format name "a" (also at n.conf:1:1)`},
		{"log_format a escape=xml '$msec';\n", `n.conf:1:1: log_format: unknown log format escaping "xml" (want escape=default, json or none)`},
		{"log_format a;\n", `n.conf:1:1: log_format: want log_format NAME [escape=default|json|none] STRING ... (found 1 arguments)`},
		{"limit_req_zone $a zone=z:1m rate=1r/s;\nserver { limit_req zone=z; access_log /x main; }\n", `n.conf:2:28: access_log: unknown log format "main" (no log_format defines it)`},
		{"limit_req_zone $a zone=z:1m rate=1r/s;\nserver { limit_req zone=z; access_log off now; }\n", `n.conf:2:28: access_log: invalid parameter "now" (access_log off takes none)`},
	} {
		_, err := ReadNginx("n.conf", []byte(tc.src))
		require.EqualError(t, err, tc.want)
	}
}
