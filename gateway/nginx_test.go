package gateway

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden scenarios in testdata")

type wantLimit struct {
	zone         string
	burst, delay int64
	nodelay      bool
	line         int
}

// testdata/nginx.conf, read by hand: http has limit_req zone=perip
// burst=20 nodelay and status 429; "/" has no limit_req of its own and
// inherits it; "/search" has two of its own, which replace http's;
// "= /login" one, dry run; the second server has none, no location, and its
// own status 503.
func TestReadNginx(t *testing.T) {
	n := readWith(t, "testdata/nginx.conf", ReadNginx)
	require.Len(t, n.Zones, 3)
	login := n.Zones[2]
	require.Equal(t, NginxZone{Name: "login", Key: "$binary_remote_addr", Size: "10m", Rate: 1, PerS: 60,
		Where: Pos{"testdata/nginx.conf", 17, 5}}, *login)
	want := []struct {
		name   string
		status int
		dry    bool
		limits []wantLimit
	}{
		{"api.example.com /", 429, false, []wantLimit{{"perip", 20, 0, true, 20}}},
		{"api.example.com /search", 429, false, []wantLimit{{"perip", 5, 0, false, 31}, {"perserver", 50, 10, false, 32}}},
		{"api.example.com = /login", 429, true, []wantLimit{{"login", 3, 0, true, 36}}},
		{"internal", 503, false, []wantLimit{{"perip", 20, 0, true, 20}}},
	}
	require.Len(t, n.Scopes, len(want))
	for i, w := range want {
		s := n.Scopes[i]
		require.Equal(t, w.name, s.Name())
		require.Equal(t, w.status, s.Status, w.name)
		require.Equal(t, w.dry, s.DryRun, w.name)
		require.Len(t, s.Limits, len(w.limits), w.name)
		for j, wl := range w.limits {
			l := s.Limits[j]
			require.Equal(t, wl, wantLimit{l.Zone.Name, l.Burst, l.Delay, l.Nodelay, l.Where.Line}, w.name)
		}
	}
}

// A conf.d snippet (no http block): the server's limit_req reaches
// /cart, whose nested /cart/checkout has its own (burst 0), and /static,
// whose status is its own; 503 where none is set.
func TestReadNginxSnippet(t *testing.T) {
	n := readWith(t, "testdata/conf.d-snippet.conf", ReadNginx)
	var got []string
	for _, s := range n.Scopes {
		got = append(got, s.Name()+" "+s.Limits[0].Text+" "+string(rune('0'+s.Status/100)))
	}
	require.Equal(t, []string{
		"shop.example.org /cart > /cart/checkout limit_req zone=api 5",
		"shop.example.org /cart limit_req zone=api burst=10 5",
		"shop.example.org /static limit_req zone=api burst=10 4",
	}, got)
}

// The imported scenarios are golden files, and they load.
func TestNginxScenario(t *testing.T) {
	for _, name := range []string{"nginx", "conf.d-snippet"} {
		n := readWith(t, "testdata/"+name+".conf", ReadNginx)
		out, err := text(n.Scenario(Options{}))
		require.NoError(t, err)
		golden := "testdata/" + name + ".yaml"
		if *update {
			require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		require.Equal(t, string(want), out)
		sc, err := scenarios.Parse(golden, []byte(out))
		require.NoError(t, err, out)
		require.Len(t, sc.Algorithms, len(n.Scopes))
	}
}

func TestNginxScenarioRows(t *testing.T) {
	n := readWith(t, "testdata/nginx.conf", ReadNginx)
	out, err := text(n.Scenario(Options{Scope: "/search"}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("s.yaml", []byte(out))
	require.NoError(t, err)
	require.Len(t, sc.Algorithms, 1)
	a := sc.Algorithms[0]
	require.Equal(t, "all-of", a.Name)
	require.Equal(t, "api.example.com /search", a.Label)
	require.Equal(t, algorithms.AllOrNothing, a.Params.Commit)
	require.Len(t, a.Params.Members, 2)
	m := a.Params.Members[1].Params
	require.Equal(t, int64(100), m.Rate)
	require.Equal(t, int64(50), m.NginxBurst)
	require.True(t, m.NginxBurstSet)
	require.Equal(t, int64(10), m.NginxDelay)

	out, err = text(n.Scenario(Options{Scope: "api.example.com = /login"}))
	require.NoError(t, err)
	require.Contains(t, out, "nginx keeps 16 milli-requests/s: one request every 1m2.5s")
	require.Contains(t, out, "{name: nginx, label: \"api.example.com = /login\", rate: 1, per: 1m, burst: 3, nodelay: true}")

	_, err = text(n.Scenario(Options{Scope: "/nope"}))
	require.EqualError(t, err, `--scope "/nope": no scope of testdata/nginx.conf has that name (its scopes: "api.example.com /", "api.example.com /search", "api.example.com = /login", "internal")`)
}

// --split-limits: /search's all-of row stays first, then each of its two
// limit_req alone, labelled by scope and zone, with the member's own
// fields; a location with one limit_req gets no extra row. perserver
// counts every request together ($server_name in one server): alone it is
// an all-of of that one limit, by: global.
func TestNginxSplitLimits(t *testing.T) {
	n := readWith(t, "testdata/nginx.conf", ReadNginx)
	out, err := text(n.Scenario(Options{SplitLimits: true}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("s.yaml", []byte(out))
	require.NoError(t, err, out)
	var labels []string
	for _, a := range sc.Algorithms {
		labels = append(labels, a.Label)
	}
	require.Equal(t, []string{"api.example.com /", "api.example.com /search",
		"api.example.com /search zone=perip", "api.example.com /search zone=perserver",
		"api.example.com = /login", "internal"}, labels)
	all := sc.Algorithms[1].Params.Members
	require.Equal(t, "nginx", sc.Algorithms[2].Name)
	require.Equal(t, "all-of", sc.Algorithms[3].Name)
	require.Len(t, sc.Algorithms[3].Params.Members, 1)
	require.Equal(t, algorithms.ByAll, sc.Algorithms[3].Params.Members[0].By)
	for i, a := range []algorithms.Member{{Name: sc.Algorithms[2].Name, Params: sc.Algorithms[2].Params}, sc.Algorithms[3].Params.Members[0]} {
		require.Equal(t, "nginx", a.Name)
		require.Equal(t, all[i].Params.Rate, a.Params.Rate)
		require.Equal(t, all[i].Params.Per, a.Params.Per)
		require.Equal(t, all[i].Params.NginxBurst, a.Params.NginxBurst)
		require.Equal(t, all[i].Params.Nodelay, a.Params.Nodelay)
		require.Equal(t, all[i].Params.NginxDelay, a.Params.NginxDelay)
	}
}

var invalidNginx = []struct {
	name, src, want string
}{
	{"rate unit", "limit_req_zone $binary_remote_addr zone=one:10m rate=10r/x;\n",
		`n.conf:1:1: limit_req_zone: invalid rate "rate=10r/x" (want rate=Nr/s or rate=Nr/m, N a whole number >= 1)`},
	{"rate zero", "http {\n  limit_req_zone $a zone=one:10m rate=0r/s;\n}\n",
		`n.conf:2:3: limit_req_zone: invalid rate "rate=0r/s" (want rate=Nr/s or rate=Nr/m, N a whole number >= 1)`},
	{"unknown zone", "http {\n  server {\n    location / {\n      limit_req zone=two burst=5;\n    }\n  }\n}\n",
		`n.conf:4:7: limit_req: zone "two" is unknown (no limit_req_zone defines it)`},
	{"unknown parameter", "limit_req_zone $a zone=one:10m rate=1r/s;\nserver { limit_req zone=one brust=5; }\n",
		`n.conf:2:10: limit_req: invalid parameter "brust=5" (want zone=NAME, burst=N, nodelay or delay=N)`},
	{"bad burst", "limit_req_zone $a zone=one:10m rate=1r/s;\nserver { limit_req zone=one burst=0; }\n",
		`n.conf:2:10: limit_req: invalid burst value "burst=0" (want burst=N, N >= 1)`},
	{"duplicate limit", "limit_req_zone $a zone=one:10m rate=1r/s;\nserver {\n  limit_req zone=one;\n  limit_req zone=one burst=2;\n}\n",
		`n.conf:4:3: limit_req: duplicate limit "one" (also at 3:3)`},
	{"zone twice", "limit_req_zone $a zone=one:10m rate=1r/s;\nlimit_req_zone $b zone=one:10m rate=2r/s;\n",
		`n.conf:2:1: limit_req_zone: zone "one" is defined twice (also at n.conf:1:1)`},
	{"no limits", "http {\n  server { listen 80; }\n}\n",
		`n.conf: no limits at all: the config has no limit_req that applies to any server or location`},
	{"include", "http {\n  include /etc/nginx/conf.d/*.conf;\n}\n",
		`n.conf:2:3: include: include is not supported: paste the included file's content in its place, or import that file`},
	{"unclosed block", "http {\n  server {\n}\n",
		`n.conf: unexpected end of file, expecting "}"`},
	{"unclosed quote", "server_name \"abc;\n",
		`n.conf:1:13: unclosed " quote`},
	{"stray brace", "}\n", `n.conf:1:1: unexpected "}"`},
	{"no semicolon", "limit_req zone=one", `n.conf:1:1: limit_req: unexpected end of file, expecting ";" or "{"`},
	{"bad status", "limit_req_zone $a zone=one:10m rate=1r/s;\nserver { limit_req zone=one; limit_req_status 200; }\n",
		`n.conf:2:30: limit_req_status: "200": value must be between 400 and 599`},
	{"bad size", "limit_req_zone $a zone=one:lots rate=1r/s;\n",
		`n.conf:1:1: limit_req_zone: invalid zone size "zone=one:lots" (want a size like 10m, 64k or 1048576)`},
}

func TestReadNginxErrors(t *testing.T) {
	for _, tc := range invalidNginx {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNginx("n.conf", []byte(tc.src))
			requireGatewayError(t, err, tc.want)
		})
	}
}

// FuzzReadNginx: any input gives limits that make a loadable scenario, or
// an *Error; never a panic.
func FuzzReadNginx(f *testing.F) {
	for _, p := range []string{"testdata/nginx.conf", "testdata/conf.d-snippet.conf"} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, tc := range invalidNginx {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte("limit_req_zone $a zone=a:1m rate=7r/m;\nserver { location /x { limit_req zone=a burst=1 delay=1; limit_req zone=b; } }\nlimit_req_zone $b zone=b:1m rate=99999;\n"))
	f.Add([]byte("limit_req_zone \"$a\nb\" zone=a:1m rate=7r/m;\nserver { server_name \"x\ny\"; location \"/\n#\" { limit_req zone=a; } }\n"))
	f.Add([]byte("log_format c escape=json '$msec ' \"$http_x\";\nlimit_req_zone $http_x zone=a:1m rate=1r/s;\naccess_log a.log c;\nserver { access_log off; location / { access_log b.log; limit_req zone=a; } }\n"))
	f.Add([]byte("map $http_x $k {\n hostnames; volatile; default $remote_addr; \"\" \"\"; *.a.b x; .c d; m.* $1; ~*^(?<n>t)-(.)$ \"$n:$2:${3}\"; \\default e;\n}\nlimit_req_zone $k zone=a:1m rate=1r/s;\nserver { location / { limit_req zone=a; } }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ReadNginx("f.conf", data)
		if !readOK(t, err) {
			return
		}
		for _, m := range n.Maps {
			// any request's value, without a panic or a loop
			m.Eval(func(string) string { return "T-1.a.b." })
		}
		out, err := text(n.Scenario(Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.AccessLogs(Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil && !strings.Contains(err.Error(), "want at most") {
			t.Fatalf("imported scenario does not load: %v\n%s", err, out)
		}
	})
}

// Each zone counts by its own key: the first variable key ($http_x_client)
// is the request's; $server_name and a text without variables count every
// request of the server together (by: global); $uri is an attribute that
// the placeholder traffic gives, so that the import runs as it is.
func TestNginxZoneKeys(t *testing.T) {
	conf := `limit_req_zone $http_x_client zone=perclient:1m rate=4r/s;
limit_req_zone $server_name zone=persrv:1m rate=30r/s;
limit_req_zone $uri zone=peruri:1m rate=10r/s;
limit_req_zone all zone=fixed:1m rate=100r/s;
server {
    server_name api;
    location / {
        limit_req zone=perclient burst=4 nodelay;
        limit_req zone=persrv burst=20 nodelay;
    }
    location /u { limit_req zone=peruri; }
    location /f { limit_req zone=fixed; }
}
`
	n, err := ReadNginx("n.conf", []byte(conf))
	require.NoError(t, err)
	out, err := text(n.Scenario(Options{}))
	require.NoError(t, err)
	for _, want := range []string{
		"{name: nginx, rate: 4, per: 1s, burst: 4, nodelay: true}\n",
		"$server_name is one value in this server: every request counts together (by: global)\n      - {name: nginx, by: global, rate: 30, per: 1s, burst: 20, nodelay: true}\n",
		"counts by $uri, not by the request's key (by: uri)\n      - {name: nginx, by: uri, rate: 10, per: 1s, burst: 0}\n",
		"all holds no variable: every request counts together (by: global)\n      - {name: nginx, by: global, rate: 100, per: 1s, burst: 0}\n",
		"    attributes: {uri: uri}\n",
	} {
		require.Contains(t, out, want)
	}
	sc := parseImported(t, out)
	require.Equal(t, algorithms.ByKey, sc.Algorithms[0].Params.Members[0].By)
	require.Equal(t, algorithms.ByAll, sc.Algorithms[0].Params.Members[1].By)
	require.Equal(t, 1, sc.Algorithms[1].Params.Members[0].By)
	keys, err := n.Keys(Options{})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyHeader, Name: "x-client", Where: Pos{"n.conf", 1, 1}}, {Kind: KeyOther, Name: "$uri", Where: Pos{"n.conf", 3, 1}}}, keys)
	keys, err = n.Keys(Options{Scope: "/f"})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyGlobal, Where: Pos{"n.conf", 4, 1}}}, keys)
}
