package coord

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/clustertest"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// req is one request of keyedPlan: its instant, its key (a client) and
// its server attribute ("" for none).
type req struct {
	at          time.Duration
	key, server string
}

// keyedPlan is one times source per request, each giving its server as
// an attribute (the sources of a request without one give none).
func keyedPlan(reqs ...req) traffic.Plan {
	var p traffic.Plan
	for _, r := range reqs {
		p.Sources = append(p.Sources, &traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: r.key}, Cost: 1},
			At: []time.Duration{r.at}})
		var attrs map[string]string
		if r.server != "" {
			attrs = map[string]string{"server": r.server}
		}
		p.Attrs = append(p.Attrs, attrs)
	}
	return p
}

// clientServer is an all-of row of two fixed windows per 1s, rate
// perClient by the request's key (the client) and perServer by the
// server attribute (by: server, attribute 0 of keyedPlan), with commit
// commit, on n nodes in coordination co, store rtt rtt.
func clientServer(commit algorithms.Commit, co cluster.Coordination, n int, rtt time.Duration, perClient, perServer int64, reqs ...req) sim.Config {
	pol := algorithms.Policy{Rate: perClient, Per: time.Second, Burst: perClient}
	cfg := clusterConfig("all-of", pol, co, n, rtt)
	cfg.Traffic = keyedPlan(reqs...)
	member := func(rate int64, by int, label string) algorithms.Member {
		return algorithms.Member{Name: "fixed-window", By: by, Label: label,
			Params: algorithms.Params{Policy: algorithms.Policy{Rate: rate, Per: time.Second, Burst: rate}}}
	}
	p := &cfg.Algorithms[0].Params
	p.Commit = commit
	p.Members = []algorithms.Member{member(perClient, algorithms.ByKey, "client"), member(perServer, 1, "server")}
	return cfg
}

// memberKeys are the keys each limit counted the decisions under.
func memberKeys(got []sim.Decision) []string {
	var keys []string
	for _, d := range got {
		keys = append(keys, fmt.Sprint(d.MemberKeys.Append(nil)))
	}
	return keys
}

// apiTraffic: clients a and b on server api, c on web.
var apiTraffic = []req{
	{0, "a", "api"}, {10 * ms, "b", "api"}, {20 * ms, "a", "api"},
	{30 * ms, "b", "api"}, {40 * ms, "c", "web"}, {50 * ms, "a", "api"},
}

// Central, all-or-nothing, 2 per client and 3 per server a second, rtt 2
// ms, 2 nodes round-robin: each script runs 1 ms after its request, each
// limit under its own key. 1 ms: a 1, api 1; 11 ms: b 1, api 2; 21 ms: a
// 2, api 3; 31 ms: b would be 2, but api is full (3 of 3): rejected by
// the server's limit until 1 s (969 ms), nothing charged; 41 ms: c 1 and
// web 1, another server's count; 51 ms: a is full (2 of 2) and api too:
// the client's limit, first in order, fired (949 ms either way). Counted
// by the request's key alone, the server's limit would have admitted b at
// 31 ms (b's own count of 1).
func TestClusterAllOfKeysCentral(t *testing.T) {
	t.Parallel()
	cfg := clientServer(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Central}, 2, 2*ms, 2, 3, apiTraffic...)
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{10 * ms, 12 * ms, 1, acc, 0},
		{20 * ms, 22 * ms, 0, acc, 0},
		{30 * ms, 32 * ms, 1, rej, 969 * ms},
		{40 * ms, 42 * ms, 0, acc, 0},
		{50 * ms, 52 * ms, 1, rej, 949 * ms},
	}, got)
	requireFired(t, []int{0, 0, 0, 2, 0, 1}, got)
	require.Equal(t, []string{"[a api]", "[b api]", "[a api]", "[b api]", "[c web]", "[a api]"}, memberKeys(got))
	require.Equal(t, []sim.LimitFired{{Limit: "client", Rejected: 1}, {Limit: "server", Rejected: 1}}, res.Fired)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted, "the store decides as the single limiter")
	// each limit's busiest key: a's 2 of 2, api's 3 of 3
	require.Len(t, res.LimitPeaks, 2)
	require.Equal(t, []string{"client a 2", "server api 3"}, []string{
		fmt.Sprintf("%s %s %d", res.LimitPeaks[0].Limit, res.LimitPeaks[0].Key, res.LimitPeaks[0].Count),
		fmt.Sprintf("%s %s %d", res.LimitPeaks[1].Limit, res.LimitPeaks[1].Key, res.LimitPeaks[1].Count)})

	// with jitter, the store's scripts take the queued path: a jitter of
	// 1 ns draws 0 every trip, so every instant stays as above
	cfg.Cluster.Store.Jitter = 1
	_, queued := runCluster(t, cfg)
	require.Equal(t, got, queued)
}

// Local, all-or-nothing, 2 per client and 2 per server a second on 2
// nodes round-robin: each node counts alone, each limit under its own key.
// Node 0 takes a at 0 and 20 ms (a 2, api 2) and c at 40 ms (web 1);
// node 1 takes b at 10 and 30 ms (b 2, api 2), then a at 50 ms: a is 1 on
// node 1, but node 1's api is full: rejected by the server's limit until
// 1 s (950 ms). The single limiter admits a and b, rejects a at 20 ms and
// b at 30 ms on api, admits c and rejects a at 50 ms on api: 3 admitted,
// where the nodes admit 5.
func TestClusterAllOfKeysLocal(t *testing.T) {
	t.Parallel()
	cfg := clientServer(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Local}, 2, ms, 2, 2, apiTraffic...)
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 0, 0, acc, 0},
		{10 * ms, 10 * ms, 1, acc, 0},
		{20 * ms, 20 * ms, 0, acc, 0},
		{30 * ms, 30 * ms, 1, acc, 0},
		{40 * ms, 40 * ms, 0, acc, 0},
		{50 * ms, 50 * ms, 1, rej, 950 * ms},
	}, got)
	requireFired(t, []int{0, 0, 0, 0, 0, 2}, got)
	require.Equal(t, int64(5), res.Cluster.Admitted)
	require.Equal(t, int64(3), res.Cluster.ReferenceAdmitted)
	// the nodes' quick path (no observer) counts the same
	rep, err := simRun(cfg)
	require.NoError(t, err)
	require.Equal(t, res.Fired, rep.Results[0].Fired)
	require.Equal(t, res.Cluster.Admitted, rep.Results[0].Cluster.Admitted)
}

// Racy with write: incr (Kong's cluster policy), all-or-nothing, 2 per
// client and 2 per server a second, rtt 10 ms, 2 nodes: requests a, b, a
// on api at 0, 3 and 6 ms, b at 20 ms. The GETs run at 5, 8 and 11 ms and
// read fresh counts (the first INCR lands at 15 ms): all 3 admitted,
// decided at 10, 13 and 16 ms. Their INCRs land at 15, 18 and 21 ms, each
// limit under its own key: a 2, b 1, api 3. The fourth GET (25 ms) finds
// b at 1 of 2 but api over (3): rejected by the server's limit until 1 s
// (975 ms). The single limiter admits 2: extra +1.
func TestClusterAllOfKeysRacyIncr(t *testing.T) {
	t.Parallel()
	reqs := []req{{0, "a", "api"}, {3 * ms, "b", "api"}, {6 * ms, "a", "api"}, {20 * ms, "b", "api"}}
	res, got := runCluster(t, clientServer(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Racy, Write: cluster.WriteIncr}, 2, 10*ms, 2, 2, reqs...))
	requireDecisions(t, []decisionRow{
		{0, 10 * ms, 0, acc, 0},
		{3 * ms, 13 * ms, 1, acc, 0},
		{6 * ms, 16 * ms, 0, acc, 0},
		{20 * ms, 30 * ms, 1, rej, 975 * ms},
	}, got)
	requireFired(t, []int{0, 0, 0, 2}, got)
	require.Equal(t, int64(4+3), res.Cluster.StoreOps, "4 GETs, 3 INCRs")
	require.Equal(t, int64(1), res.Cluster.ExtraAdmitted)
}

// Racy with write: set, the same row and rtt, requests a, b, a on api at
// 0, 3 and 6 ms, b on api at 20 ms and c on api at 32 ms. The first three
// GETs read fresh counts: admitted. Each SET writes the whole state its
// node decided on, each limit under its own key: at 15 ms a 1 and api 1,
// at 18 ms b 1 and api 1 (the first api count lost), at 21 ms a 1 and api
// 1 (a's first count lost too). The fourth GET (25 ms) finds b 1 and api
// 1: admitted, and its SET lands at 35 ms: b 2, api 2. The fifth GET (37
// ms) finds c fresh but api 2 of 2: rejected by the server's limit until
// 1 s (963 ms). 4 admitted, where the single limiter admits 2.
func TestClusterAllOfKeysRacySet(t *testing.T) {
	t.Parallel()
	reqs := []req{{0, "a", "api"}, {3 * ms, "b", "api"}, {6 * ms, "a", "api"}, {20 * ms, "b", "api"}, {32 * ms, "c", "api"}}
	res, got := runCluster(t, clientServer(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Racy}, 2, 10*ms, 2, 2, reqs...))
	requireDecisions(t, []decisionRow{
		{0, 10 * ms, 0, acc, 0},
		{3 * ms, 13 * ms, 1, acc, 0},
		{6 * ms, 16 * ms, 0, acc, 0},
		{20 * ms, 30 * ms, 1, acc, 0},
		{32 * ms, 42 * ms, 0, rej, 963 * ms},
	}, got)
	requireFired(t, []int{0, 0, 0, 0, 2}, got)
	require.Equal(t, int64(4), res.Cluster.Admitted)
	require.Equal(t, int64(2), res.Cluster.ReferenceAdmitted)
}

// A request without the attribute a limit counts by is not counted by
// that limit, on a cluster as on one limiter: central, every-hit, 1 per
// client and 1 per server, rtt 2 ms, 1 node. a on api at 0 (a 1, api
// 1); b without a server at 10 ms: only b's count (1), admitted; c on api
// at 20 ms: api full, rejected by the server's limit until 1 s (979 ms),
// c's own count charged (every-hit).
func TestClusterAllOfKeysMissingAttribute(t *testing.T) {
	t.Parallel()
	reqs := []req{{0, "a", "api"}, {10 * ms, "b", ""}, {20 * ms, "c", "api"}}
	_, got := runCluster(t, clientServer(algorithms.EveryHit, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, 1, 1, reqs...))
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{10 * ms, 12 * ms, 0, acc, 0},
		{20 * ms, 22 * ms, 0, rej, 979 * ms},
	}, got)
	require.Equal(t, []string{"[a api]", "[b ]", "[c api]"}, memberKeys(got))
}

// On one node with a store at rtt 0 (central), or one node alone
// (local), an all-of row whose limits count by different keys decides as
// its single limiter does, decision by decision: verdict, wait, the limit
// that fired and each limit's key, over random rows (members, by:,
// commit) and random traffic, some requests without the attribute.
func TestClusterAllOfKeysOneNodeMatchesSingle(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(40, 2))
	names := []string{"fixed-window", "sliding-window", "token-bucket", "nginx"}
	for trial := range testenv.Runs(25, 60) {
		var reqs []req
		var at time.Duration
		for range 40 + r.IntN(80) {
			at += time.Duration(r.IntN(60)) * ms
			server := []string{"api", "web", ""}[r.IntN(3)]
			reqs = append(reqs, req{at, fmt.Sprintf("k%d", r.IntN(4)), server})
		}
		commit := algorithms.Commits[r.IntN(len(algorithms.Commits))]
		var members []algorithms.Member
		for j := range 1 + r.IntN(3) {
			rate := int64(1 + r.IntN(6))
			m := algorithms.Member{Name: names[r.IntN(len(names))], By: []int{algorithms.ByKey, algorithms.ByAll, 1}[r.IntN(3)],
				Label: fmt.Sprintf("m%d", j),
				Params: algorithms.Params{Policy: algorithms.Policy{Rate: rate, Per: time.Duration(200+r.IntN(1000)) * ms, Burst: rate},
					CountRejected: commit != algorithms.AllOrNothing && r.IntN(2) == 0}}
			if m.Name == "token-bucket" || m.Name == "nginx" {
				m.Params.CountRejected = false
			}
			if m.Name == "nginx" {
				m.Params.Per = time.Second
			}
			members = append(members, m)
		}
		if !slices.ContainsFunc(members, func(m algorithms.Member) bool { return m.By != algorithms.ByKey }) {
			members[0].By = 1
		}
		single := clustertest.Base(keyedPlan(reqs...), sim.Algorithm{Name: "all-of", Label: "all-of",
			Params: algorithms.Params{Policy: members[0].Params.Policy, Commit: commit, Members: members}})
		single.Duration = 10 * time.Second
		want := observe(t, single)
		for _, mode := range []cluster.Mode{cluster.Central, cluster.Local} {
			cfg := single
			cfg.Cluster = &cluster.Config{Nodes: 1, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, 1),
				Store: cluster.Store{Timeout: time.Second}, OnStoreError: cluster.Allow}
			cfg.Algorithms = []sim.Algorithm{single.Algorithms[0]}
			cfg.Algorithms[0].Coord = cluster.Coordination{Mode: mode}
			_, got := runCluster(t, cfg)
			require.Len(t, got, len(want), "trial %d %s", trial, mode)
			for i := range want {
				w, g := want[i], got[i]
				require.Equal(t, fmt.Sprint(w.Time, w.Key, w.Decision, w.Fired, w.MemberKeys.Append(nil)),
					fmt.Sprint(g.Time, g.Key, g.Decision, g.Fired, g.MemberKeys.Append(nil)), "trial %d %s decision %d", trial, mode, i)
			}
		}
	}
}

// observe runs cfg, one row, and returns its decisions.
func observe(t *testing.T, cfg sim.Config) []sim.Decision {
	t.Helper()
	rec := &recorder{}
	cfg.Observe = func(int) sim.Observer { return rec }
	_, err := simRun(cfg)
	require.NoError(t, err)
	return rec.got
}
