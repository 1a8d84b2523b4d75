package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/gatewaytest"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/sim"
)

// startNginx runs a real nginx with the config at conf (its listen
// 127.0.0.1:8080 on a free loopback port instead) in a temporary prefix,
// and returns the process, the prefix and the base URL.
func startNginx(t *testing.T, conf string) (*gatewaytest.Process, string, string) {
	bin := gatewaytest.Binary(t, "nginx", "nginx-light", "/usr/sbin/nginx")
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "temp"), 0o755))
	data, err := os.ReadFile(conf)
	require.NoError(t, err)
	port := gatewaytest.Port(t)
	path := filepath.Join(dir, "nginx.conf")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "127.0.0.1:8080", fmt.Sprintf("127.0.0.1:%d", port))), 0o644))
	errLog := filepath.Join(dir, "error.log")
	p := gatewaytest.Start(t, fmt.Sprintf("127.0.0.1:%d", port), syscall.SIGQUIT, []string{bin,
		"-p", dir + "/", "-c", path, "-e", errLog,
		"-g", "daemon off; master_process off; pid " + filepath.Join(dir, "nginx.pid") + ";"}, errLog)
	return p, dir, fmt.Sprintf("http://127.0.0.1:%d", port)
}

// checkOf replays log through conf's scope and returns the check of its
// one row.
func checkOf(t *testing.T, log, conf, scope string) *sim.CheckResult {
	t.Helper()
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--scope", scope,
		"--check-field", "limit_req_status", "--check-first", "100000", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	return rep.Results[0].Check
}

// TestNginxOracle holds the nginx rows of an import against a real nginx
// (docs/gateways.md): nginx (nginx-light) runs examples/nginx-check.conf,
// several clients send it seeded bursts for a few seconds, and the log of
// each location, replayed with --gateway through that config, must agree
// with nginx's $limit_req_status on at least 99% of the requests. Every
// disagreement must be one that moving a request by one millisecond
// explains: nginx decides on its monotonic clock in whole ms
// (ngx_current_msec) but logs the wall clock ($msec, and $request_time
// from it), the two ms ticks fall at different instants, so the time
// between two requests can read one ms more or less in the log than it
// was for the limit (explainShift). RATESIM_ORACLE_SEED,
// RATESIM_ORACLE_DURATION and RATESIM_ORACLE_KEEP (a folder to copy the
// logs to) are for experiments.
//
// The test runs nginx up to twice: 3 runs in 51 failed while it was
// written, one on a disagreement that the moves then tried did not cover
// (they do now) and two whose logs were not kept. A run that fails is
// logged with its reason, and a second run, with another seed, must pass:
// so a cause that is not a one-ms boundary still fails the test when it
// comes back, and a rare one is seen in the log.
func TestNginxOracle(t *testing.T) {
	testenv.Long(t, "the nginx oracle, a live nginx under seconds of load")
	oracleTwice(t, nginxOracleRun)
}

// oracleTwice runs an oracle test's run with the load's seed and, when it
// fails, once more with the next seed, logging the first failure: a
// failure that comes back fails the test.
func oracleTwice(t *testing.T, run func(t *testing.T, seed uint64) error) {
	t.Helper()
	first := run(t, seedEnv())
	if first == nil {
		return
	}
	t.Logf("a run failed, running again: %v", first)
	if err := run(t, seedEnv()+1); err != nil {
		t.Fatalf("two runs failed:\nfirst: %v\nsecond: %v", first, err)
	}
	t.Logf("the second run passed; the first failed: %v", first)
}

// nginxOracleRun is one run of TestNginxOracle with the load's seed; it
// returns what fails the agreement or its explanation.
func nginxOracleRun(t *testing.T, seed uint64) error {
	p, dir, base := startNginx(t, "../examples/nginx-check.conf")
	// six heavy clients send bursts of up to 8 requests, well over the
	// limits; twelve light ones one or two requests at a time, mostly
	// under them, as most clients of an API are
	paths := []string{"/nodelay", "/delay", "/two"}
	heavy := gatewaytest.Load{Base: base, Paths: paths, Header: "X-Client", Clients: 6, Seed: seed,
		Duration: durEnv(), MaxBurst: 8, MaxPause: 30 * time.Millisecond, MaxRequests: 2000}
	light := gatewaytest.Load{Base: base, Paths: paths, Header: "X-Client", FirstClient: 6, Clients: 12, Seed: seed,
		Duration: durEnv(), MaxBurst: 2, MaxPause: 150 * time.Millisecond, MaxRequests: 2000}
	res := sendLoad(t, p, heavy, light)
	require.Greater(t, res.ByStatus[429], 0, "the load must hit the limits")
	conf := filepath.Join(dir, "nginx.conf")
	for _, scope := range []string{"/nodelay", "/delay", "/two"} {
		log := filepath.Join(dir, strings.TrimPrefix(scope, "/")+".log")
		keepLog(log)
		c := checkOf(t, log, conf, scope)
		t.Logf("%s: %d of %d agree (%.4f)", scope, c.Agree, c.Compared, c.Ratio)
		require.Greater(t, c.Compared, int64(100), scope)
		if c.Agree*100 < c.Compared*99 {
			return fmt.Errorf("%s: %d of %d agree, want 99%%: %v", scope, c.Agree, c.Compared, c.First)
		}
		if err := explainShift(t, log, conf, scope, c); err != nil {
			return err
		}
	}
	return nil
}

// oracleLine is a line of the check log_format: $msec $limit_req_status
// $http_x_client $request_time ...
type oracleLine struct {
	fields []string
	ms     int64 // $msec in ms
	rt     int64 // $request_time in ms
}

func (l *oracleLine) start() int64 { return l.ms - l.rt }

func (l *oracleLine) String() string {
	return fmt.Sprintf("%d.%03d %s", l.ms/1000, l.ms%1000, strings.Join(l.fields[1:], " "))
}

func readOracleLog(t *testing.T, path string) []*oracleLine {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []*oracleLine
	for _, s := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(s)
		l := &oracleLine{fields: f}
		var a, b int64
		_, err := fmt.Sscanf(f[0], "%d.%03d", &a, &b)
		require.NoError(t, err, s)
		l.ms = a*1000 + b
		_, err = fmt.Sscanf(f[3], "%d.%03d", &a, &b)
		require.NoError(t, err, s)
		l.rt = a*1000 + b
		out = append(out, l)
	}
	return out
}

func writeOracleLog(t *testing.T, path string, lines []*oracleLine) {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String() + "\n")
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// explainShift checks that every disagreement of c goes away when the
// requests of its key that nginx decided in one millisecond are read one
// ms later or earlier, as happens when nginx's monotonic ms tick falls
// inside that wall-clock ms (nginx times each request on ngx_current_msec
// but logs ngx_timeofday's ms): the requests of a wall-clock ms whose
// sub-millisecond phase is past the monotonic tick are one ms later to
// the limit than the log says, those before it are not. So a move is a
// run of the same key's requests that share one logged start ms: those
// from some request on moved +1 ms, or those up to some request moved -1
// ms (the tick may fall before or after the disagreeing one: nginx may
// reject a request and pass a later one of the same logged ms), or the
// whole ms either way; or the key's requests
// of an earlier ms within the second before (the excess nginx keeps
// depends on when the key was last drained, which may be several requests
// back), latest first.
// explainShift takes the first disagreement, finds a move that makes
// ratesim agree on it (and with it on any later disagreements that
// followed from it), keeps the moved log, and goes on until none is
// left; it returns the first disagreement that no move explains.
func explainShift(t *testing.T, log, conf, scope string, c *sim.CheckResult) error {
	t.Helper()
	lines := readOracleLog(t, log)
	moved := filepath.Join(t.TempDir(), "moved.log")
	for round := 0; c.Agree < c.Compared; round++ {
		if round >= 50 {
			return fmt.Errorf("%s: too many disagreements to explain", scope)
		}
		d := c.First[0]
		at := -1
		for i, l := range lines {
			if l.fields[2] == d.Key && l.start()*int64(time.Millisecond) == d.TimeNs && l.fields[1] == d.Gateway {
				at = i
				break
			}
		}
		if at < 0 {
			return fmt.Errorf("%s: no line for %+v", scope, d)
		}
		// the runs to move: this request's ms, and the ms of the key's
		// request before it
		sameMs := func(start int64) []int {
			var g []int
			for i, l := range lines {
				if l.fields[2] == d.Key && l.start() == start {
					g = append(g, i)
				}
			}
			return g
		}
		type move struct {
			lines []int
			shift int64
		}
		var moves []move
		// in its own ms: the monotonic tick may fall anywhere in the run,
		// so every prefix moved -1 ms and every suffix +1 ms, those next to
		// the disagreeing request first
		g := sameMs(lines[at].start())
		k := slices.Index(g, at)
		moves = append(moves, move{g[k:], 1}, move{g[:k+1], -1})
		for j := 1; j < len(g); j++ {
			if j != k+1 {
				moves = append(moves, move{g[:j], -1})
			}
			if j != k {
				moves = append(moves, move{g[j:], 1})
			}
		}
		moves = append(moves, move{g, 1}, move{g, -1})
		// the key's earlier ms within the second before, latest first: the
		// excess nginx keeps depends on the ms of the request that last
		// found the key drained, which may be several requests back
		var earlier []int64
		for _, l := range lines {
			st := l.start()
			if l.fields[2] == d.Key && st < lines[at].start() && st >= lines[at].start()-1000 && !slices.Contains(earlier, st) {
				earlier = append(earlier, st)
			}
		}
		slices.Sort(earlier)
		slices.Reverse(earlier)
		for n, st := range earlier {
			g := sameMs(st)
			if n == 0 {
				moves = append(moves, move{g[len(g)-1:], 1}, move{g[:1], -1})
			}
			moves = append(moves, move{g, 1}, move{g, -1})
		}
		before := c.Compared - c.Agree
		fixed := false
		for _, m := range moves {
			for _, i := range m.lines {
				lines[i].ms += m.shift
			}
			writeOracleLog(t, moved, lines)
			nc := checkOf(t, moved, conf, scope)
			if nc.Compared-nc.Agree < before && !slicesContainsDis(nc.First, d, m.shift) {
				var which []string
				for _, i := range m.lines {
					which = append(which, fmt.Sprint(i+1))
				}
				t.Logf("%s: %s %q: nginx %s, ratesim %s; agrees with line(s) %s moved by %+d ms (%d disagreements left)",
					scope, time.Unix(0, d.TimeNs).UTC().Format("15:04:05.000"), d.Key, d.Gateway, d.Ratesim,
					strings.Join(which, ", "), m.shift, nc.Compared-nc.Agree)
				c, fixed = nc, true
				break
			}
			for _, i := range m.lines {
				lines[i].ms -= m.shift
			}
		}
		if !fixed {
			var ctx []string
			for i := max(at-60, 0); i <= at; i++ {
				if lines[i].fields[2] == d.Key {
					ctx = append(ctx, fmt.Sprintf("line %d: start %d: %s", i+1, lines[i].start()%100000, lines[i]))
				}
			}
			return fmt.Errorf("%s: %+v is not a one-ms boundary: no move of it or of its key's request before by one ms makes ratesim agree; its key's lines before:\n%s",
				scope, d, strings.Join(ctx, "\n"))
		}
	}
	return nil
}

// slicesContainsDis reports whether ds still holds d (moved by shift ms
// or not).
func slicesContainsDis(ds []sim.CheckDisagreement, d sim.CheckDisagreement, shift int64) bool {
	for _, e := range ds {
		if e.Key == d.Key && e.Gateway == d.Gateway && (e.TimeNs == d.TimeNs || e.TimeNs == d.TimeNs+shift*int64(time.Millisecond)) {
			return true
		}
	}
	return false
}

// seedEnv is the load's seed: RATESIM_ORACLE_SEED, default 17. The
// load's timing is the machine's, so runs differ whatever the seed; a
// seed only varies the bursts and paths.
func seedEnv() uint64 {
	var s uint64 = 17
	_, _ = fmt.Sscan(os.Getenv("RATESIM_ORACLE_SEED"), &s)
	return s
}

// durEnv is how long the load runs: RATESIM_ORACLE_DURATION (a Go
// duration), default 3s.
func durEnv() time.Duration {
	d, err := time.ParseDuration(os.Getenv("RATESIM_ORACLE_DURATION"))
	if err != nil || d <= 0 {
		return 3 * time.Second
	}
	return d
}

// TestNginxOracleLog checks a log kept from TestNginxOracle (with
// RATESIM_ORACLE_KEEP) again: RATESIM_ORACLE_LOG names it and
// RATESIM_ORACLE_SCOPE its location. Without them it skips: it is for
// looking into a disagreement, not a test of its own.
func TestNginxOracleLog(t *testing.T) {
	log, scope := os.Getenv("RATESIM_ORACLE_LOG"), os.Getenv("RATESIM_ORACLE_SCOPE")
	if log == "" || scope == "" {
		t.Skip("set RATESIM_ORACLE_LOG and RATESIM_ORACLE_SCOPE to check a kept log")
	}
	c := checkOf(t, log, "../examples/nginx-check.conf", scope)
	t.Logf("%s: %d of %d agree (%.4f)", scope, c.Agree, c.Compared, c.Ratio)
	require.NoError(t, explainShift(t, log, "../examples/nginx-check.conf", scope, c))
}

// TestNginxTwoZonesOracle holds an all-of row whose limits count by
// different keys against a real nginx: examples/nginx-two-zones.conf
// limits each client (X-Client) and the whole server ($server_name, by:
// global in the import); 19 clients send it bursts for nine seconds, a
// little over the server's 30 r/s, and the log, replayed with --gateway, must
// agree with nginx's $limit_req_status on at least 99% of the requests.
// Both zones must have rejected, and the decisions' limit column must
// count each zone's rejections as nginx's error log names them.
func TestNginxTwoZonesOracle(t *testing.T) {
	testenv.Long(t, "the nginx oracle, a live nginx under seconds of load")
	oracleTwice(t, func(t *testing.T, seed uint64) error {
		p, dir, base := startNginx(t, "../examples/nginx-two-zones.conf")
		heavy := gatewaytest.Load{Base: base, Paths: []string{"/"}, Header: "X-Client", Clients: 3, Seed: seed,
			Duration: 3 * durEnv(), MaxBurst: 8, MaxPause: 1500 * time.Millisecond, MaxRequests: 2000}
		light := gatewaytest.Load{Base: base, Paths: []string{"/"}, Header: "X-Client", FirstClient: 3, Clients: 16, Seed: seed,
			Duration: 3 * durEnv(), MaxBurst: 2, MaxPause: 3 * time.Second, MaxRequests: 2000}
		sendLoad(t, p, heavy, light)
		log := filepath.Join(dir, "two-zones.log")
		keepLog(log)
		c := checkOf(t, log, filepath.Join(dir, "nginx.conf"), "/")
		t.Logf("%d of %d agree (%.4f)", c.Agree, c.Compared, c.Ratio)
		require.Greater(t, c.Compared, int64(200))
		if c.Agree*100 < c.Compared*99 {
			return fmt.Errorf("%d of %d agree, want 99%%: %v", c.Agree, c.Compared, c.First)
		}
		// which zone rejected: the decisions' limit column against the
		// zones nginx's error log names, each within the disagreements
		// (one request decided otherwise moves at most one count) and 1%
		csv := filepath.Join(t.TempDir(), "d.csv")
		status, _, errOut := run(t, "replay", log, "--gateway", filepath.Join(dir, "nginx.conf"), "--decisions", csv)
		require.Equal(t, 0, status, errOut)
		ours := map[string]int64{}
		data, err := os.ReadFile(csv)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		limitCol := slices.Index(strings.Split(lines[0], ","), "limit")
		require.Positive(t, limitCol, lines[0])
		for _, line := range lines[1:] {
			f := strings.Split(line, ",")
			if f[6] == "reject" {
				ours[f[limitCol]]++
			}
		}
		if err := sameZoneRejections(t, dir, ours, c, map[string]int{"perclient": 29, "persrv": 30}); err != nil {
			return err
		}
		return nil
	})
}

// TestNginxRoutesOracle holds replay --gateway's routing against a real
// nginx: examples/nginx-routes.conf has two locations with limits of their
// own (= /checkout, /api/), a regex location and a prefix without limits,
// and every request goes to one log. Clients send bursts to paths of each
// kind and to a path no location takes; the mixed log, replayed through
// the config without --scope, must feed each row exactly the requests of
// its location (as nginx picked it: /api/x.css goes to the regex, not to
// /api/), and each row must agree with nginx's $limit_req_status on at
// least 99% of them.
func TestNginxRoutesOracle(t *testing.T) {
	testenv.Long(t, "the nginx oracle, a live nginx under seconds of load")
	oracleTwice(t, func(t *testing.T, seed uint64) error {
		p, dir, base := startNginx(t, "../examples/nginx-routes.conf")
		paths := []string{"/checkout", "/api/items", "/api/x.css", "/static/a.js", "/nothing", "/checkout/x"}
		heavy := gatewaytest.Load{Base: base, Paths: paths, Header: "X-Client", Clients: 6, Seed: seed,
			Duration: durEnv(), MaxBurst: 8, MaxPause: 30 * time.Millisecond, MaxRequests: 2000}
		light := gatewaytest.Load{Base: base, Paths: paths, Header: "X-Client", FirstClient: 6, Clients: 12, Seed: seed,
			Duration: durEnv(), MaxBurst: 2, MaxPause: 150 * time.Millisecond, MaxRequests: 2000}
		res := sendLoad(t, p, heavy, light)
		require.Greater(t, res.ByStatus[429], 0, "the load must hit the limits")
		log := filepath.Join(dir, "routes.log")
		keepLog(log)
		// the requests of each location, told by their paths
		want := map[string]int64{}
		limited := map[string]int64{}
		for _, l := range readOracleLog(t, log) {
			path := l.fields[5] // "GET PATH HTTP/1.1" is three fields
			switch path {
			case "/checkout":
				want["shop = /checkout"]++
			case "/api/items":
				want["shop /api/"]++
			case "/api/x.css":
				want["shop ~ \\.css$"]++
			case "/static/a.js":
				want["shop /static/"]++
			default:
				want[""]++
			}
			if l.fields[1] != "-" {
				limited[path]++
			}
		}
		require.Equal(t, map[string]int64{"/checkout": want["shop = /checkout"], "/api/items": want["shop /api/"]}, limited,
			"nginx's limits looked at the requests of /checkout and /api/ only")
		status, out, errOut := run(t, "replay", log, "--gateway", filepath.Join(dir, "nginx.conf"),
			"--check-field", "limit_req_status", "--check-first", "100000", "--format", "json")
		require.Equal(t, 0, status, errOut)
		var rep sim.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Results, 2)
		for _, r := range rep.Results {
			require.Equal(t, want[r.Label], r.Offered, r.Label)
			c := r.Check
			t.Logf("%s: %d requests, %d of %d agree (%.4f)", r.Label, r.Offered, c.Agree, c.Compared, c.Ratio)
			require.Greater(t, c.Compared, int64(50), r.Label)
			if c.Agree*100 < c.Compared*99 {
				return fmt.Errorf("%s: %d of %d agree, want 99%%: %v", r.Label, c.Agree, c.Compared, c.First)
			}
		}
		g := rep.Traces[0].Routing
		require.NotNil(t, g)
		require.Equal(t, want[""], g.Unrouted)
		got := map[string]int64{}
		for _, rc := range g.Routes {
			got[rc.Route] = rc.Requests
		}
		require.Equal(t, want["shop ~ \\.css$"], got["shop ~ \\.css$"])
		require.Equal(t, want["shop /static/"], got["shop /static/"])
		return nil
	})
}

// TestNginxSharedZoneOracle runs examples/nginx-shared-zone.conf: one
// zone named by /api/ (burst=6) and = /checkout (burst=0), mixed in one
// log by the same clients. replay --gateway makes one row of both, which
// keeps the zone's state per client and checks each request with its
// location's burst; it must agree with limit_req_status on 99% of them.
func TestNginxSharedZoneOracle(t *testing.T) {
	testenv.Long(t, "the nginx oracle, a live nginx under seconds of load")
	oracleTwice(t, func(t *testing.T, seed uint64) error {
		p, dir, base := startNginx(t, "../examples/nginx-shared-zone.conf")
		paths := []string{"/api/items", "/checkout", "/api/users", "/static/a.js"}
		heavy := gatewaytest.Load{Base: base, Paths: paths, Header: "X-Client", Clients: 6, Seed: seed,
			Duration: durEnv(), MaxBurst: 6, MaxPause: 60 * time.Millisecond, MaxRequests: 2000}
		light := gatewaytest.Load{Base: base, Paths: paths, Header: "X-Client", FirstClient: 6, Clients: 12, Seed: seed,
			Duration: durEnv(), MaxBurst: 2, MaxPause: 250 * time.Millisecond, MaxRequests: 2000}
		res := sendLoad(t, p, heavy, light)
		require.Greater(t, res.ByStatus[429], 0, "the load must hit the limits")
		log := filepath.Join(dir, "shared.log")
		keepLog(log)
		var limited int64
		for _, l := range readOracleLog(t, log) {
			if l.fields[1] != "-" {
				limited++
			}
		}
		status, out, errOut := run(t, "replay", log, "--gateway", filepath.Join(dir, "nginx.conf"),
			"--check-field", "limit_req_status", "--check-first", "100000", "--format", "json")
		require.Equal(t, 0, status, errOut)
		require.Contains(t, errOut, "one row, shop /api/ + shop = /checkout, takes their requests")
		var rep sim.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Results, 1)
		r := rep.Results[0]
		require.Equal(t, "shop /api/ + shop = /checkout", r.Label)
		require.Equal(t, limited, r.Offered, "the row takes the requests of both locations")
		c := r.Check
		t.Logf("%s: %d requests, %d of %d agree (%.4f)", r.Label, r.Offered, c.Agree, c.Compared, c.Ratio)
		require.Greater(t, c.Compared, int64(50))
		if c.Agree*100 < c.Compared*99 {
			return fmt.Errorf("%s: %d of %d agree, want 99%%: %v", r.Label, c.Agree, c.Compared, c.First)
		}
		return nil
	})
}

// TestNginxTwoKeysOracle is TestNginxTwoZonesOracle with both zones on
// variables (examples/nginx-two-keys.conf): per client (X-Client) and
// per tenant (X-Tenant, three tenants over the clients). replay --gateway
// takes the client as each request's key and the tenant from its own
// variable of the log; each row must agree with limit_req_status on 99%
// of the requests, and each zone's rejections with nginx's error log.
func TestNginxTwoKeysOracle(t *testing.T) {
	testenv.Long(t, "the nginx oracle, a live nginx under seconds of load")
	oracleTwice(t, func(t *testing.T, seed uint64) error {
		p, dir, base := startNginx(t, "../examples/nginx-two-keys.conf")
		heavy := gatewaytest.Load{Base: base, Paths: []string{"/"}, Header: "X-Client", Clients: 3, Seed: seed,
			Duration: 3 * durEnv(), MaxBurst: 8, MaxPause: 1500 * time.Millisecond, MaxRequests: 2000, Tenant: "X-Tenant", Tenants: 3}
		light := gatewaytest.Load{Base: base, Paths: []string{"/"}, Header: "X-Client", FirstClient: 3, Clients: 16, Seed: seed,
			Duration: 3 * durEnv(), MaxBurst: 2, MaxPause: 3 * time.Second, MaxRequests: 2000, Tenant: "X-Tenant", Tenants: 3}
		sendLoad(t, p, heavy, light)
		log := filepath.Join(dir, "two-keys.log")
		c := checkOf(t, log, filepath.Join(dir, "nginx.conf"), "/")
		t.Logf("%d of %d agree (%.4f)", c.Agree, c.Compared, c.Ratio)
		require.Greater(t, c.Compared, int64(200))
		if c.Agree*100 < c.Compared*99 {
			return fmt.Errorf("%d of %d agree, want 99%%: %v", c.Agree, c.Compared, c.First)
		}
		csv := filepath.Join(t.TempDir(), "d.csv")
		status, _, errOut := run(t, "replay", log, "--gateway", filepath.Join(dir, "nginx.conf"), "--decisions", csv)
		require.Equal(t, 0, status, errOut)
		data, err := os.ReadFile(csv)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Equal(t, "limit,key_1,key_2", lines[0][strings.Index(lines[0], "limit"):], lines[0])
		ours := map[string]int64{}
		for _, line := range lines[1:] {
			f := strings.Split(line, ",")
			// each zone's key: the client, and its tenant from the log
			require.True(t, strings.HasPrefix(f[len(f)-2], "client-") && strings.HasPrefix(f[len(f)-1], "tenant-"), line)
			if f[6] == "reject" {
				ours[f[len(f)-3]]++
			}
		}
		if err := sameZoneRejections(t, dir, ours, c, map[string]int{"perclient": 29, "pertenant": 30}); err != nil {
			return err
		}
		return nil
	})
}

// sameZoneRejections holds ratesim's rejections by zone (ours, by the
// decisions CSV's limit column) against the "limiting requests ... by zone"
// lines of nginx's error log in dir, each zone (by its limit_req line of
// nginx.conf) within the requests c found in disagreement plus 1%: one
// request decided otherwise moves at most one count. Each zone must have
// rejected some.
func sameZoneRejections(t *testing.T, dir string, ours map[string]int64, c *sim.CheckResult, zones map[string]int) error {
	t.Helper()
	theirs := map[string]int64{}
	data, err := os.ReadFile(filepath.Join(dir, "error.log"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if _, zone, ok := strings.Cut(line, `limiting requests, excess: `); ok && strings.Contains(line, "[error]") {
			if _, zone, ok = strings.Cut(zone, `by zone "`); ok {
				zone, _, _ = strings.Cut(zone, `"`)
				theirs[zone]++
			}
		}
	}
	t.Logf("rejected by zone: ratesim %v, nginx's error log %v", ours, theirs)
	slack := c.Compared - c.Agree + c.Compared/100
	for zone, line := range zones {
		got := ours[fmt.Sprintf("zone=%s (nginx.conf:%d)", zone, line)]
		if d := got - theirs[zone]; d > slack || -d > slack {
			return fmt.Errorf("zone %s rejected %d requests, nginx's error log says %d", zone, got, theirs[zone])
		}
		require.Greater(t, theirs[zone], int64(0), "zone %s must reject", zone)
	}
	return nil
}

// sendLoad runs the heavy and the light clients together against nginx p,
// then stops it (its logs complete), and returns the heavy clients' result.
func sendLoad(t *testing.T, p *gatewaytest.Process, heavy, light gatewaytest.Load) gatewaytest.Result {
	t.Helper()
	var lightRes gatewaytest.Result
	done := make(chan struct{})
	go func() { lightRes = light.Run(t); close(done) }()
	res := heavy.Run(t)
	<-done
	p.Shutdown(t)
	t.Logf("sent %d requests from heavy clients (%v), %d from light ones (%v)", res.Sent, res.ByStatus, lightRes.Sent, lightRes.ByStatus)
	return res
}

// keepLog copies an oracle's log into RATESIM_ORACLE_KEEP, when set, to
// replay it again (RATESIM_ORACLE_LOG).
func keepLog(log string) {
	if keep := os.Getenv("RATESIM_ORACLE_KEEP"); keep != "" {
		data, _ := os.ReadFile(log)
		_ = os.WriteFile(filepath.Join(keep, filepath.Base(log)), data, 0o644)
	}
}

// TestNginxMapKeyOracle is TestNginxTwoKeysOracle with the per-client zone
// keyed by a map of the client's header (examples/nginx-map-key.conf):
// two clients share a key, six have one each, two count by their address
// and nine are not limited by that zone (an empty key). replay --gateway
// evaluates the map on each line's variables; the row must agree with
// limit_req_status on 99% of the requests, and each zone's rejections
// with nginx's error log.
func TestNginxMapKeyOracle(t *testing.T) {
	testenv.Long(t, "the nginx oracle, a live nginx under seconds of load")
	oracleTwice(t, func(t *testing.T, seed uint64) error {
		p, dir, base := startNginx(t, "../examples/nginx-map-key.conf")
		heavy := gatewaytest.Load{Base: base, Paths: []string{"/"}, Header: "X-Client", Clients: 3, Seed: seed,
			Duration: 3 * durEnv(), MaxBurst: 8, MaxPause: 1500 * time.Millisecond, MaxRequests: 2000, Tenant: "X-Tenant", Tenants: 3}
		light := gatewaytest.Load{Base: base, Paths: []string{"/"}, Header: "X-Client", FirstClient: 3, Clients: 16, Seed: seed,
			Duration: 3 * durEnv(), MaxBurst: 3, MaxPause: 2 * time.Second, MaxRequests: 2000, Tenant: "X-Tenant", Tenants: 3}
		sendLoad(t, p, heavy, light)
		log := filepath.Join(dir, "map-key.log")
		keepLog(log)
		conf := filepath.Join(dir, "nginx.conf")
		c := checkOf(t, log, conf, "/")
		t.Logf("%d of %d agree (%.4f)", c.Agree, c.Compared, c.Ratio)
		require.Greater(t, c.Compared, int64(200))
		if c.Agree*100 < c.Compared*99 {
			return fmt.Errorf("%d of %d agree, want 99%%: %v", c.Agree, c.Compared, c.First)
		}
		csv := filepath.Join(t.TempDir(), "d.csv")
		status, out, errOut := run(t, "replay", log, "--gateway", conf, "--decisions", csv)
		require.Equal(t, 0, status, errOut)
		// clients 10 to 18 have no key in the per-client zone
		require.Contains(t, out, "lines without a value (a limit by it did not look at them): client_key ")
		data, err := os.ReadFile(csv)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Equal(t, "limit,key_1,key_2", lines[0][strings.Index(lines[0], "limit"):], lines[0])
		ours := map[string]int64{}
		keys := map[string]bool{}
		for _, line := range lines[1:] {
			f := strings.Split(line, ",")
			keys[f[len(f)-2]] = true
			require.True(t, strings.HasPrefix(f[len(f)-1], "tenant-"), line)
			if f[6] == "reject" {
				ours[f[len(f)-3]]++
			}
		}
		for _, k := range []string{"gold", "c2", "c5", "127.0.0.1", ""} {
			require.True(t, keys[k], "the map's value %q", k)
		}
		for k := range keys {
			require.Contains(t, []string{"gold", "c2", "c3", "c4", "c5", "c6", "c7", "127.0.0.1", ""}, k)
		}
		return sameZoneRejections(t, dir, ours, c, map[string]int{"perclient": 40, "pertenant": 41})
	})
}
