package gateway

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/scenarios"
)

// testdata/kong.deck.yaml, read by hand with Kong's precedence
// (kong/runloop/plugins_iterator.lua: consumer+route+service >
// consumer+route > consumer+service > route+service > consumer > route >
// service > global). The places are the routes in file order (those
// nested in services, then the top-level health) and the service reports,
// which has no route. For anyone: orders-list has its service's plugin
// (line 8) over the global one; orders-create its own route's (line 25);
// catalog-search, health and reports the global one (line 52: reports'
// own plugin is enabled: false), and catalog-search also the
// rate-limiting-advanced of line 57 (another plugin: Kong runs both).
// alice's consumer plugin (line 45) outranks route, service and global,
// so every place gets an alice scope; bob has no plugin and no scope.
func TestReadKong(t *testing.T) {
	k := readWith(t, "testdata/kong.deck.yaml", ReadKong)
	want := []struct {
		name       string
		pluginLine int
	}{
		{"orders-list", 8},
		{"orders-list (consumer alice)", 45},
		{"orders-create", 25},
		{"orders-create (consumer alice)", 45},
		{"catalog-search", 52},
		{"catalog-search (rate-limiting-advanced)", 57},
		{"catalog-search (consumer alice)", 45},
		{"health", 52},
		{"health (consumer alice)", 45},
		{"reports", 52},
		{"reports (consumer alice)", 45},
	}
	var got []string
	for _, s := range k.Scopes {
		got = append(got, s.Name())
	}
	require.Len(t, got, len(want), got)
	for i, w := range want {
		require.Equal(t, w.name, got[i])
		require.Equal(t, w.pluginLine, k.Scopes[i].Plugin.Where.Line, w.name)
	}
	// the service plugin: second 5 (line 10), hour 1000 (line 11), redis,
	// limit_by consumer; its redis record read and not modelled
	p := k.Scopes[0].Plugin
	require.Equal(t, []KongWindow{{"second", 5, "1s", Pos{"testdata/kong.deck.yaml", 10, 19}}, {"hour", 1000, "1h", Pos{"testdata/kong.deck.yaml", 11, 17}}}, p.Windows)
	require.Equal(t, "redis", p.Policy)
	require.True(t, p.CountRejected)
	require.Equal(t, []string{"redis"}, p.Ignored)
	// alice's: cluster, fault_tolerant false
	p = k.Scopes[1].Plugin
	require.Equal(t, "cluster", p.Policy)
	require.False(t, p.FaultTolerant)
	require.False(t, p.CountRejected)
}

// Kong's precedence, one plugin scoped each way, for a request of consumer
// c on route r of service s: the most specific wins; a plugin scoped to
// another entity does not apply.
func TestKongPrecedence(t *testing.T) {
	all := []*KongPlugin{
		{Name: "rate-limiting"},
		{Name: "rate-limiting", Service: "s"},
		{Name: "rate-limiting", Route: "r"},
		{Name: "rate-limiting", Consumer: "c"},
		{Name: "rate-limiting", Route: "r", Service: "s"},
		{Name: "rate-limiting", Consumer: "c", Service: "s"},
		{Name: "rate-limiting", Consumer: "c", Route: "r"},
		{Name: "rate-limiting", Consumer: "c", Route: "r", Service: "s"},
	}
	// removing the winner each time gives the order, most specific first
	for want := 7; want >= 0; want-- {
		r := &kongReader{plugins: all[:want+1]}
		require.Same(t, all[want], r.pick("rate-limiting", "c", "r", "s"), "with plugins 0..%d", want)
	}
	r := &kongReader{plugins: all}
	require.Same(t, all[4], r.pick("rate-limiting", "", "r", "s"), "anyone: route+service")
	require.Same(t, all[0], r.pick("rate-limiting", "other", "q", "t"), "elsewhere: global")
	require.Same(t, all[3], r.pick("rate-limiting", "c", "q", "t"), "c elsewhere: its consumer plugin")
}

// The rows of each policy, read back by the scenario parser.
func TestKongScenarioRows(t *testing.T) {
	k := readWith(t, "testdata/kong.deck.yaml", ReadKong)
	out, err := text(k.Scenario(Options{}))
	require.NoError(t, err)
	golden(t, "kong.scenario.yaml", out)
	sc := parseImported(t, out)
	require.Equal(t, KongDefaultNodes, sc.Cluster.Nodes)
	require.Len(t, sc.Algorithms, len(k.Scopes))
	byLabel := map[string]int{}
	for i, a := range sc.Algorithms {
		byLabel[a.Label] = i
	}
	row := func(label string) scenarios.Algorithm { return sc.Algorithms[byLabel[label]] }

	// redis, two windows: every hit counts in every window (usage() INCRs
	// each), so every-hit with count-rejected members, in the store
	a := row("orders-list")
	require.Equal(t, "all-of", a.Name)
	require.Equal(t, algorithms.EveryHit, a.Params.Commit)
	require.Equal(t, cluster.Central, a.Coord.Mode)
	require.Len(t, a.Params.Members, 2)
	for i, w := range []struct {
		rate int64
		per  time.Duration
	}{{5, time.Second}, {1000, time.Hour}} {
		m := a.Params.Members[i]
		require.Equal(t, "fixed-window", m.Name)
		require.Equal(t, w.rate, m.Params.Rate)
		require.Equal(t, w.per, m.Params.Per)
		require.True(t, m.Params.CountRejected)
	}
	// cluster, one window: the database read, then incremented: racy
	// with INCR; fault_tolerant false: a store failure denies
	a = row("orders-list (consumer alice)")
	require.Equal(t, "fixed-window", a.Name)
	require.Equal(t, int64(1000), a.Params.Rate)
	require.Equal(t, time.Minute, a.Params.Per)
	require.Equal(t, cluster.Racy, a.Coord.Mode)
	require.Equal(t, cluster.WriteIncr, a.Coord.Write)
	require.Equal(t, cluster.Deny, a.Coord.OnStoreError)
	require.False(t, a.Params.CountRejected)
	// local, one window: each node alone, only admitted requests count;
	// by the header X-API-Key where the request's key is the consumer
	// (the first plugin's): an all-of of the one window by that attribute
	// (the placeholder traffic's first, in name order)
	a = row("orders-create")
	require.Equal(t, "all-of", a.Name)
	require.Equal(t, cluster.Local, a.Coord.Mode)
	require.Len(t, a.Params.Members, 1)
	require.Equal(t, int64(10), a.Params.Members[0].Params.Rate)
	require.False(t, a.Params.Members[0].Params.CountRejected)
	require.Equal(t, []string{"http_x_api_key", "remote_addr"}, sc.Traffic.Attributes())
	require.Equal(t, 1, a.Params.Members[0].By)
	// local, two windows: all-or-nothing (every window incremented only
	// when the request passes them all)
	a = row("health")
	require.Equal(t, algorithms.AllOrNothing, a.Params.Commit)
	require.Equal(t, cluster.Local, a.Coord.Mode)
	require.Equal(t, int64(800), a.Params.Members[1].Params.Rate)
	require.Equal(t, 2, a.Params.Members[1].By, "by the client address")
	// rate-limiting-advanced, sliding windows in redis at once, with the
	// penalty (rejected hits count)
	a = row("catalog-search (rate-limiting-advanced)")
	require.Equal(t, algorithms.EveryHit, a.Params.Commit)
	require.Equal(t, cluster.Central, a.Coord.Mode)
	require.Equal(t, "sliding-window", a.Params.Members[0].Name)
	require.Equal(t, int64(200), a.Params.Members[1].Params.Rate)
	require.Equal(t, time.Minute, a.Params.Members[1].Params.Per)
	require.True(t, a.Params.Members[1].Params.CountRejected)

	// the month window is the calendar month (written per: 1mo)
	require.Contains(t, out, "      # kong.deck.yaml:55: month: 800 (the calendar month, UTC)\n      - {name: fixed-window, by: remote_addr, rate: 800, per: 1mo}\n")
}

// --split-limits adds, after each all-of row, one row per window with
// exactly that window's fields and the all-of row's coordination fields
// (kong_scenario.go, writeRow); the plain rows and the all-of rows are
// those of the golden, unchanged and in their places.
func TestKongSplitLimits(t *testing.T) {
	k := readWith(t, "testdata/kong.deck.yaml", ReadKong)
	plain, err := text(k.Scenario(Options{}))
	require.NoError(t, err)
	golden(t, "kong.scenario.yaml", plain) // without the flag: the golden
	out, err := text(k.Scenario(Options{SplitLimits: true}))
	require.NoError(t, err)
	sc := parseImported(t, out)
	var labels []string
	for _, a := range sc.Algorithms {
		labels = append(labels, a.Label)
	}
	// each all-of row (orders-list, catalog-search, its
	// rate-limiting-advanced row, health, reports) is followed by its
	// windows, named as Kong's config names them: second and hour,
	// minute and month; window_size 1 and 60 for the advanced plugin
	require.Equal(t, []string{
		"orders-list", "orders-list second", "orders-list hour",
		"orders-list (consumer alice)", "orders-create", "orders-create (consumer alice)",
		"catalog-search", "catalog-search minute", "catalog-search month",
		"catalog-search (rate-limiting-advanced)", "catalog-search (rate-limiting-advanced) 1s", "catalog-search (rate-limiting-advanced) 60s",
		"catalog-search (consumer alice)",
		"health", "health minute", "health month", "health (consumer alice)",
		"reports", "reports minute", "reports month", "reports (consumer alice)",
	}, labels)
	byLabel := map[string]scenarios.Algorithm{}
	for _, a := range sc.Algorithms {
		byLabel[a.Label] = a
	}
	for _, c := range []struct {
		all     string
		windows []string
	}{
		{"orders-list", []string{"orders-list second", "orders-list hour"}},
		{"catalog-search", []string{"catalog-search minute", "catalog-search month"}},
		{"catalog-search (rate-limiting-advanced)", []string{"catalog-search (rate-limiting-advanced) 1s", "catalog-search (rate-limiting-advanced) 60s"}},
	} {
		all := byLabel[c.all]
		require.Equal(t, "all-of", all.Name)
		for i, label := range c.windows {
			m, a := all.Params.Members[i], byLabel[label]
			if m.By != algorithms.ByKey {
				// by another key than the request's: an all-of of
				// the one window
				require.Equal(t, "all-of", a.Name, label)
				require.Len(t, a.Params.Members, 1, label)
				require.Equal(t, m.By, a.Params.Members[0].By, label)
				a.Name, a.Params = a.Params.Members[0].Name, a.Params.Members[0].Params
			}
			require.Equal(t, m.Name, a.Name, label)
			require.Equal(t, m.Params.Rate, a.Params.Rate, label)
			require.Equal(t, m.Params.Per, a.Params.Per, label)
			require.Equal(t, m.Params.CountRejected, a.Params.CountRejected, label)
			require.Equal(t, all.Coord, a.Coord, label)
		}
	}
	// by hand: redis's second window counts every hit (count-rejected)
	// in the store (central); the local month is the calendar month
	a := byLabel["orders-list second"]
	require.Equal(t, "fixed-window", a.Name)
	require.Equal(t, int64(5), a.Params.Rate)
	require.Equal(t, time.Second, a.Params.Per)
	require.True(t, a.Params.CountRejected)
	require.Equal(t, cluster.Central, a.Coord.Mode)
	require.Contains(t, out, "  # kong.deck.yaml:55: month: 800 (the calendar month, UTC)\n  - name: all-of\n    label: \"catalog-search month\"\n    commit: all-or-nothing\n    coordination: local\n    limits:\n      - {name: fixed-window, by: remote_addr, rate: 800, per: 1mo}\n")
	// the rows of one window, and every all-of row, are the golden's
	for _, line := range strings.SplitAfter(plain, "\n") {
		require.Contains(t, out, line)
	}
}

// A plugin of several windows with sync_rate is central with a NOTE; its
// split rows keep central and say what one window would be.
func TestKongSplitLimitsSync(t *testing.T) {
	src := "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {second: 2, hour: 50, policy: redis, sync_rate: 1, redis: {host: r}}\n"
	k, err := ReadKong("k.yaml", []byte(src))
	require.NoError(t, err)
	out, err := text(k.Scenario(Options{SplitLimits: true}))
	require.NoError(t, err)
	require.Contains(t, out, "  # the NOTE above holds for these rows too (a plugin of one window would be coordination sync)\n"+
		"  # k.yaml:4: second: 2\n  - {name: fixed-window, label: \"global second\", rate: 2, per: 1s, count-rejected: true, coordination: central}\n"+
		"  # k.yaml:4: hour: 50\n  - {name: fixed-window, label: \"global hour\", rate: 50, per: 1h, count-rejected: true, coordination: central}\n")
	require.Len(t, parseImported(t, out).Algorithms, 3)
}

// Kong admits while the count is below a limit that is not whole: 2.5
// admits 3 a window (handler.lua: remaining = limit - usage, rejected
// when <= 0: usage 0, 1, 2 pass). sync_rate with redis and one window is
// a sync row every sync_rate.
func TestKongFractionAndSync(t *testing.T) {
	src := "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {second: 2.5, policy: redis, sync_rate: 0.5, redis: {host: r}}\n"
	k, err := ReadKong("k.yaml", []byte(src))
	require.NoError(t, err)
	out, err := text(k.Scenario(Options{}))
	require.NoError(t, err)
	require.Contains(t, out, "# k.yaml:4: second: 2.5 (Kong admits while the count is below 2.5: 3 a window)\n")
	require.Contains(t, out, "{name: fixed-window, label: global, rate: 3, per: 1s, coordination: sync, sync: 500ms}\n")
	sc := parseImported(t, out)
	require.Equal(t, cluster.Sync, sc.Algorithms[0].Coord.Mode)
	require.Equal(t, 500*time.Millisecond, sc.Algorithms[0].Coord.Sync)
}

func TestKongScope(t *testing.T) {
	k := readWith(t, "testdata/kong.deck.yaml", ReadKong)
	out, err := text(k.Scenario(Options{Scope: "orders-create"}))
	require.NoError(t, err)
	require.Len(t, parseImported(t, out).Algorithms, 1, "the scope of that name")
	out, err = text(k.Scenario(Options{Scope: "orders"}))
	require.NoError(t, err)
	require.Len(t, parseImported(t, out).Algorithms, 4, "no scope of that name: the service's routes, alice's too")
	out, err = text(k.Scenario(Options{Scope: "health (consumer alice)"}))
	require.NoError(t, err)
	require.Len(t, parseImported(t, out).Algorithms, 1)
	_, err = text(k.Scenario(Options{Scope: "nope"}))
	require.ErrorContains(t, err, `--scope "nope": no scope, route or service of testdata/kong.deck.yaml has that name (its scopes: "orders-list", `)

	keys, err := k.Keys(Options{})
	require.NoError(t, err)
	var got []string
	for _, key := range keys {
		got = append(got, key.Kind+" "+key.Name)
	}
	require.Equal(t, []string{"other consumer", "header x-api-key", "addr "}, got)
}

var invalidKong = []struct{ name, src, want string }{
	{"unknown field", "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config:\n      minute: 5\n      minutes: 10\n",
		`k.yaml:6:7: plugins[0].config.minutes: unknown field (want second, minute, hour, day, month, year, limit_by, header_name, path, policy, fault_tolerant, redis, hide_client_headers, error_code, error_message, sync_rate, redis_host, redis_port, redis_password, redis_username, redis_ssl, redis_ssl_verify, redis_server_name, redis_timeout, redis_database)`},
	{"order", "plugins:\n  - name: rate-limiting\n    config: {second: 10, minute: 100, hour: 50}\n",
		`k.yaml:3:45: plugins[0].config.hour: The limit for hour(50.0) cannot be lower than the limit for minute(100.0)`},
	{"no window", "plugins:\n  - name: rate-limiting\n    config: {policy: local}\n",
		`k.yaml:3:13: plugins[0].config: at least one of these fields must be non-empty: 'config.second', 'config.minute', 'config.hour', 'config.day', 'config.month', 'config.year'`},
	{"zero", "plugins:\n  - name: rate-limiting\n    config: {minute: 0}\n",
		`k.yaml:3:22: plugins[0].config.minute: value must be greater than 0`},
	{"not a number", "plugins:\n  - name: rate-limiting\n    config: {minute: lots}\n",
		`k.yaml:3:22: plugins[0].config.minute: found string "lots", want a number`},
	{"policy", "plugins:\n  - name: rate-limiting\n    config: {minute: 5, policy: memcached}\n",
		`k.yaml:3:33: plugins[0].config.policy: "memcached": expected one of: local, cluster, redis`},
	{"limit_by", "plugins:\n  - name: rate-limiting\n    config: {minute: 5, limit_by: consumer-group}\n",
		`k.yaml:3:35: plugins[0].config.limit_by: "consumer-group": expected one of: consumer, credential, ip, service, header, path`},
	{"header missing", "plugins:\n  - name: rate-limiting\n    config: {minute: 5, limit_by: header}\n",
		`k.yaml:3:13: plugins[0].config.header_name: required field missing (limit_by is header)`},
	{"sync_rate local", "plugins:\n  - name: rate-limiting\n    config: {minute: 5, sync_rate: 1}\n",
		`k.yaml:3:36: plugins[0].config.sync_rate: sync_rate can only be used with the redis policy`},
	{"sync_rate small", "plugins:\n  - name: rate-limiting\n    config: {minute: 5, policy: redis, sync_rate: 0.01}\n",
		`k.yaml:3:51: plugins[0].config.sync_rate: sync_rate must be greater than 0.02, or -1 to disable`},
	{"unknown service", "plugins:\n  - name: rate-limiting\n    service: orders\n    config: {minute: 5}\n",
		`k.yaml:2:5: rate-limiting: service "orders" is not defined in this file`},
	{"two on one scope", "services:\n  - name: s\n    plugins:\n      - {name: rate-limiting, config: {minute: 5}}\nplugins:\n  - {name: rate-limiting, service: s, config: {minute: 6}}\n",
		`k.yaml:6:5: rate-limiting: a second rate-limiting plugin on service s (also at 4:9): Kong allows one per scope`},
	{"consumer group", "plugins:\n  - {name: rate-limiting, consumer_group: gold, config: {minute: 5}}\n",
		`k.yaml:2:43: plugins[0].consumer_group: a plugin scoped to a consumer group is not modelled: scope it to the consumers, routes or services instead`},
	{"advanced lengths", "plugins:\n  - name: rate-limiting-advanced\n    config: {limit: [5, 10], window_size: [1]}\n",
		`k.yaml:3:43: plugins[0].config.window_size: 1 window sizes for 2 limits (want one window size per limit)`},
	{"advanced unknown", "plugins:\n  - name: rate-limiting-advanced\n    config: {limit: [5], window_size: [1], windows: fixed}\n",
		`k.yaml:3:44: plugins[0].config.windows: unknown field (want limit, window_size, window_type, sync_rate, strategy, identifier, header_name, path, namespace, dictionary_name, lock_dictionary_name, hide_client_headers, retry_after_jitter_max, error_code, error_message, redis, enforce_consumer_groups, consumer_groups, disable_penalty, compound_identifier, throttling)`},
	{"advanced sync_rate", "plugins:\n  - name: rate-limiting-advanced\n    config: {limit: [5], window_size: [1], strategy: redis}\n",
		`k.yaml:3:13: plugins[0].config: sync_rate is required with strategy redis`},
	{"no limits", "_format_version: \"3.0\"\nservices:\n  - name: s\n    plugins: [{name: cors}]\n",
		`k.yaml: no rate limits at all: the config has no rate-limiting or rate-limiting-advanced plugin that is enabled`},
	{"disabled", "plugins:\n  - {name: rate-limiting, enabled: false, config: {minute: 5}}\n",
		`k.yaml: no rate limits at all: the config has no rate-limiting or rate-limiting-advanced plugin that is enabled`},
	{"syntax", "plugins:\n  - name: [\n",
		`k.yaml:2:11: YAML syntax error: sequence end token ']' not found`},
	{"not a mapping", "- 1\n", `k.yaml:1:1: found a list, want a mapping (a decK file: _format_version, services, routes, consumers, plugins)`},
	{"duplicate key", "plugins:\n  - name: rate-limiting\n    config: {minute: 5, minute: 6}\n",
		`k.yaml:3:25: plugins[0].config.minute: duplicate key (also at 3:14)`},
}

func TestReadKongErrors(t *testing.T) {
	for _, tc := range invalidKong {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadKong("k.yaml", []byte(tc.src))
			requireGatewayError(t, err, tc.want)
		})
	}
}

// JSON is YAML: the same config written as JSON reads alike.
func TestReadKongJSON(t *testing.T) {
	src := `{"_format_version": "3.0", "services": [{"name": "s", "routes": [{"name": "r"}], "plugins": [{"name": "rate-limiting", "config": {"second": 2, "minute": 10, "policy": "local", "limit_by": "ip"}}]}]}`
	k, err := ReadKong("k.json", []byte(src))
	require.NoError(t, err)
	require.Len(t, k.Scopes, 1)
	require.Equal(t, "r", k.Scopes[0].Name())
	require.Len(t, k.Scopes[0].Plugin.Windows, 2)
	_, err = ReadKong("k.json", []byte(`{"plugins": [{"name": "rate-limiting", "config": {"second": 2, "hours": 1}}]}`))
	require.ErrorContains(t, err, "k.json:1:64: plugins[0].config.hours: unknown field")
}

// FuzzReadKong: any input reads as limits whose scenario loads (pending
// fields aside), or as an *Error; never a panic.
func FuzzReadKong(f *testing.F) {
	for _, p := range []string{"testdata/kong.deck.yaml", "../examples/kong.deck.yaml"} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, tc := range invalidKong {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte("plugins:\n  - {name: rate-limiting-advanced, config: {limit: [1.5, 7], window_size: [30, 86400], window_type: fixed, strategy: cluster, sync_rate: 2, identifier: header, header_name: X}}\n"))
	f.Add([]byte("plugins:\n  - {name: rate-limiting, config: {year: 9e300, second: 1e-300}}\n"))
	f.Add([]byte("a: &x {name: rate-limiting, config: {minute: 1}}\nplugins: [*x, *x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ReadKong("f.yaml", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(k.Scenario(Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "# Imported from") {
			t.Fatalf("no scenario:\n%s", out)
		}
		if _, err := text(k.Scenario(Options{SplitLimits: true})); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Keys(Options{}); err != nil {
			t.Fatal(err)
		}
	})
}

// A plugin of one window with sync_rate is sync; counting by another key
// than the request's it is an all-of row of that window, which has no
// sync mode: central, with a NOTE that says why.
func TestKongSyncByOtherKey(t *testing.T) {
	src := "_format_version: \"3.0\"\nroutes:\n  - name: r\n    plugins:\n" +
		"      - name: rate-limiting\n        config: {second: 5, limit_by: consumer, policy: local}\n" +
		"      - name: rate-limiting-advanced\n        config: {limit: [3], window_size: [1], identifier: ip, strategy: redis, sync_rate: 1}\n"
	k, err := ReadKong("k.yaml", []byte(src))
	require.NoError(t, err)
	out, err := text(k.Scenario(Options{}))
	require.NoError(t, err)
	require.Contains(t, out, "  # NOTE: sync_rate 1 (counts synchronised every sync_rate) is not modelled for a limit by another key than the request's: the row counts every hit in the store at once\n"+
		"  # counts by remote_addr, not by the request's key (by: remote_addr)\n"+
		"  - name: all-of\n    label: \"r (rate-limiting-advanced)\"\n    commit: every-hit\n    coordination: central\n")
	sc := parseImported(t, out)
	require.Len(t, sc.Algorithms, 2)
	require.Equal(t, cluster.Central, sc.Algorithms[1].Coord.Mode)
	require.Equal(t, 1, sc.Algorithms[1].Params.Members[0].By)

	// alone, the same plugin is sync: its key is the request's
	k, err = ReadKong("k.yaml", []byte(strings.Replace(src, "identifier: ip", "identifier: consumer", 1)))
	require.NoError(t, err)
	out, err = text(k.Scenario(Options{}))
	require.NoError(t, err)
	require.Contains(t, out, "coordination: sync, sync: 1s")
}
