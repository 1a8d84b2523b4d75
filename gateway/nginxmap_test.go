package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// readMaps reads an http block of maps (and one zone, so that the config
// has a limit) and returns the map that sets name.
func readMaps(t *testing.T, maps, name string) *NginxMap {
	t.Helper()
	conf := "http {\n" + maps + "\nlimit_req_zone $" + name + " zone=z:1m rate=1r/s;\nserver { location / { limit_req zone=z; } }\n}\n"
	n, err := ReadNginx("nginx.conf", []byte(conf))
	require.NoError(t, err)
	m := n.mapOf(name)
	require.NotNil(t, m)
	require.Same(t, m, n.Zones[0].Map)
	return m
}

// vars is a request's variables, as a log gives them.
func vars(kv ...string) func(string) string {
	return func(name string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1]
			}
		}
		return ""
	}
}

// The map of an API key, each value worked out by hand from
// ngx_http_map_module's documented order: exact strings first (ignoring
// case), then regular expressions in the order written (~* ignoring
// case), captures in the value, else the default, here another variable.
func TestNginxMapEval(t *testing.T) {
	m := readMaps(t, `map $http_x_api_key $limit_key {
    default   $binary_remote_addr;
    ""        "";
    key1      "gold";
    \default  "escaped";
    ~^tmp-(?<team>[a-z]+)-(\d+)$  "tmp:$team:$2";
    ~^tmp-    "tmp-other";
    ~*^ADMIN  "";
    ~^key     "regex-after-exact";
    volatile;
}`, "limit_key")
	for _, tc := range []struct{ key, want string }{
		{"", ""},                       // the empty string entry: not limited
		{"key1", "gold"},               // exact
		{"KEY1", "gold"},               // strings match ignoring case
		{"key10", "regex-after-exact"}, // not exact: the first regex that matches
		{"default", "escaped"},         // \default is the string, not the parameter
		{"tmp-ops-42", "tmp:ops:42"},   // named and numbered captures
		{"tmp-OPS-42", "tmp-other"},    // the first regex is case-sensitive
		{"admin-1", ""},                // ~* ignores case
		{"Admin-2", ""},                //
		{"other", "10.0.0.7"},          // the default, a variable of the request
		{"tmp-", "tmp-other"},          //
		{"xkey1", "10.0.0.7"},          // ^ anchors
	} {
		got := m.Eval(vars("http_x_api_key", tc.key, "binary_remote_addr", "10.0.0.7"))
		require.Equal(t, tc.want, got, "source %q", tc.key)
	}
}

// With hostnames: exact, then the longest prefix mask, then the longest
// suffix mask, then regexes; .example.com also matches example.com; a
// trailing dot of the source is dropped. Without a default the value is
// empty.
func TestNginxMapHostnames(t *testing.T) {
	m := readMaps(t, `map $host $tier {
    hostnames;
    api.example.com       exact;
    *.example.com         star;
    *.eu.example.com      star-eu;
    .example.org          dot-org;
    mail.*                mail;
    mail.eu.*             mail-eu;
    ~^m                   regex;
}`, "tier")
	for _, tc := range []struct{ host, want string }{
		{"api.example.com", "exact"},
		{"API.Example.COM.", "exact"},
		{"www.example.com", "star"},
		{"a.b.example.com", "star"},
		{"x.eu.example.com", "star-eu"}, // the longest prefix mask
		{"example.com", ""},             // *.example.com wants a label before
		{"example.org", "dot-org"},
		{"w.example.org", "dot-org"},
		{"mail.example.com", "star"}, // a prefix mask before a suffix mask
		{"mail.host.net", "mail"},
		{"mail.eu.host.net", "mail-eu"}, // the longest suffix mask
		{"mailer.net", "regex"},
		{"other.net", ""},
	} {
		require.Equal(t, tc.want, m.Eval(vars("host", tc.host)), "host %q", tc.host)
	}
	// without hostnames, a mask is a plain string
	plain := readMaps(t, "map $host $tier { *.example.com star; default none; }", "tier")
	require.Equal(t, "none", plain.Eval(vars("host", "www.example.com")))
	require.Equal(t, "star", plain.Eval(vars("host", "*.example.com")))
	// a source of text and variables; a value of text and a variable
	both := readMaps(t, `map "$request_method:$uri" $route_key { "GET:/a" read; ~^POST: "w-${http_x}"; }`, "route_key")
	require.Equal(t, "read", both.Eval(vars("request_method", "get", "uri", "/A")))
	require.Equal(t, "w-9", both.Eval(vars("request_method", "POST", "uri", "/b", "http_x", "9")))
	require.Equal(t, "", both.Eval(vars("request_method", "PUT", "uri", "/a")))
}

// A map's value may name another map's variable: nginx evaluates it in
// turn.
func TestNginxMapOfMap(t *testing.T) {
	conf := `http {
map $http_x_tier $tier { gold g; default "$remote_addr"; }
map $http_x_api_key $limit_key { "" $tier; default "k:$http_x_api_key"; }
limit_req_zone $limit_key zone=z:1m rate=1r/s;
server { location / { limit_req zone=z; } }
}`
	n, err := ReadNginx("nginx.conf", []byte(conf))
	require.NoError(t, err)
	d := &mapDeriver{m: n.mapOf("limit_key"), vars: []string{"http_x_api_key", "http_x_tier", "remote_addr"},
		at: map[string]int{"http_x_api_key": 0, "http_x_tier": 1, "remote_addr": 2}}
	require.Equal(t, "k:abc", d.Derive([]string{"abc", "gold", "1.2.3.4"}))
	require.Equal(t, "g", d.Derive([]string{"", "gold", "1.2.3.4"}))
	require.Equal(t, "1.2.3.4", d.Derive([]string{"", "", "1.2.3.4"}))
}

func TestNginxMapErrors(t *testing.T) {
	zone := "\nlimit_req_zone $k zone=z:1m rate=1r/s;\nserver { location / { limit_req zone=z; } }\n"
	for _, tc := range []struct{ name, src, want string }{
		{"include", "map $a $k {\n  include keys.map;\n}", "n.conf:2:3: include: include is not supported"},
		{"one argument", "map $a { }", "n.conf:1:1: map: want map SOURCE $VARIABLE"},
		{"no $", "map $a k { }", `n.conf:1:1: map: invalid variable name "k"`},
		{"three words", "map $a $k {\n  x y z;\n}", "n.conf:2:3: x: invalid number of the map parameters"},
		{"twice", "map $a $k {\n  abc 1;\n  ABC 2;\n}", `n.conf:3:3: ABC: conflicting parameter "ABC"`},
		{"two defaults", "map $a $k {\n  default 1;\n  default 2;\n}", "n.conf:3:3: default: duplicate default"},
		{"regex", "map $a $k {\n  ~(?=x) 1;\n}", "n.conf:2:3: ~(?=x): \"(?=x)\": a regular expression ratesim cannot read"},
		{"mapped twice", "map $a $k { }\nmap $b $k { }", "n.conf:2:1: map: the variable $k is mapped twice (also at n.conf:1:1)"},
		{"bad value", "map $a $k {\n  x \"${y\";\n}", "n.conf:2:3: x: \"${y\": the variable name has no closing bracket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNginx("n.conf", []byte(tc.src+zone))
			require.ErrorContains(t, err, tc.want)
			var ge *Error
			require.ErrorAs(t, err, &ge)
		})
	}
}
