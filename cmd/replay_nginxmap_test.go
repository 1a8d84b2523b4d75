package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const mapConf = `http {
    log_format check '$msec $remote_addr "$http_x_api_key" $limit_req_status';
    access_log /var/log/nginx/check.log check;
    map $http_x_api_key $limit_key {
        default      $binary_remote_addr;
        ""           "";
        key1         gold;
        ~^tmp-(.+)$  tmp-$1;
    }
    limit_req_zone $limit_key zone=perkey:1m rate=1r/s;
    server { location / { limit_req zone=perkey; } }
}
`

// One zone keyed by a map of the API key, rate 1r/s, burst 0: a key's
// second request within 1s of its last accounted one is rejected. By
// hand, from the map (ngx_http_map_module: exact strings ignoring case,
// then regexes, else the default, the address): .000 key1 is gold,
// passed; .100 KEY1 is gold too, rejected; .200 no key: "" is not
// limited; .300 "other" is 1.1.1.1's address, passed; .400 "again" the
// same address, rejected; .500 tmp-a, passed; .600 tmp-a from another
// address, rejected; 1.000 gold 1s after its last, passed. The log agrees.
const mapLog = `1700000000.000 1.1.1.1 "key1" PASSED
1700000000.100 2.2.2.2 "KEY1" REJECTED
1700000000.200 1.1.1.1 "-" -
1700000000.300 1.1.1.1 "other" PASSED
1700000000.400 1.1.1.1 "again" REJECTED
1700000000.500 3.3.3.3 "tmp-a" PASSED
1700000000.600 4.4.4.4 "tmp-a" REJECTED
1700000001.000 2.2.2.2 "key1" PASSED
`

func TestReplayGatewayMap(t *testing.T) {
	conf, log := gatewayFiles(t, mapConf, mapLog)
	csv := filepath.Join(t.TempDir(), "d.csv")
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status", "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "100% of 7")
	// the line without an API key is counted: the zone did not look at it
	require.Contains(t, out, "  lines without a value (a limit by it did not look at them): limit_key 1\n")
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.Equal(t, `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,limit,key_1
all-of,/,1700000000000000000,global,1,1,accept,0,,,gold
all-of,/,1700000000100000000,global,1,1,reject,0,900000000,zone=perkey (nginx.conf:11),gold
all-of,/,1700000000200000000,global,1,1,accept,0,,,
all-of,/,1700000000300000000,global,1,1,accept,0,,,1.1.1.1
all-of,/,1700000000400000000,global,1,1,reject,0,900000000,zone=perkey (nginx.conf:11),1.1.1.1
all-of,/,1700000000500000000,global,1,1,accept,0,,,tmp-a
all-of,/,1700000000600000000,global,1,1,reject,0,900000000,zone=perkey (nginx.conf:11),tmp-a
all-of,/,1700000001000000000,global,1,1,accept,0,,,gold
`, string(got))

	// import says what the row counts by
	status, out, errOut = run(t, "import", conf)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "counts by $limit_key, the map of $http_x_api_key at line 4: a request whose value is empty is not limited here (by: limit_key)\n")
}

// A log that lacks a variable the map reads: exit 2, naming the zone, the
// map and the variable to log.
func TestReplayGatewayMapNotLogged(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{`'$msec $remote_addr $limit_req_status'`, "does not log $http_x_api_key, which the map reads: add $http_x_api_key to that log_format (or log $limit_key itself)"},
		{`'$msec "$http_x_api_key" $limit_req_status'`, "does not log $binary_remote_addr, which the map reads: add $remote_addr to that log_format (or log $limit_key itself)"},
	} {
		conf, log := gatewayFiles(t, strings.Replace(mapConf, `'$msec $remote_addr "$http_x_api_key" $limit_req_status'`, tc.format, 1), mapLog)
		status, _, errOut := run(t, "replay", log, "--gateway", conf)
		require.Equal(t, 2, status, errOut)
		require.Contains(t, errOut, "the limits of "+conf+" count by $limit_key ("+conf+":10:5), the map of $http_x_api_key ("+conf+":4:5), and log_format check ("+conf+":2:5) "+tc.want)
	}
	// a log of the map's own value needs nothing else
	conf, log := gatewayFiles(t, strings.Replace(mapConf, `$remote_addr "$http_x_api_key"`, `"$limit_key"`, 1),
		strings.NewReplacer(`1.1.1.1 "key1"`, `"gold"`, `2.2.2.2 "KEY1"`, `"gold"`, `1.1.1.1 "-"`, `"-"`,
			`1.1.1.1 "other"`, `"1.1.1.1"`, `1.1.1.1 "again"`, `"1.1.1.1"`, `3.3.3.3 "tmp-a"`, `"tmp-a"`,
			`4.4.4.4 "tmp-a"`, `"tmp-a"`, `2.2.2.2 "key1"`, `"gold"`).Replace(mapLog))
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "100% of 7")
}

// A zone keyed by a map and named by two locations cannot be one row (its
// limit counts by an attribute, an all-of member): replay refuses, naming
// the zone, its locations and the way out; --scope replays one location.
func TestReplayGatewayMapSharedZone(t *testing.T) {
	conf, log := gatewayFiles(t, strings.Replace(sharedZoneConf, "limit_req_zone $http_x_client zone=z",
		"map $http_x_client $k { default $http_x_client; }\n    limit_req_zone $k zone=z", 1), sharedZoneLog)
	status, _, errOut := run(t, "replay", log, "--gateway", conf)
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "zone=z (nginx.conf:5) is used by /a/ (burst=5), /b/ (burst=0): nginx keeps one state per key in a zone for every location that names it, which ratesim makes one row of, but /a/ counts by another key than the request's (an all-of row of one limit, which takes one location's requests)")
	status, _, errOut = run(t, "replay", log, "--gateway", conf, "--scope", "/b/")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "--scope /b/: zone=z (nginx.conf:5) is also named by /a/ (burst=5)")
}
