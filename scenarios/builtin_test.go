package scenarios

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

func TestBuiltins(t *testing.T) {
	infos := Builtins()
	var names []string
	for _, info := range infos {
		names = append(names, info.Name)
		require.NotEmpty(t, info.Description, info.Name)
		require.NotContains(t, info.Description, "invalid:", info.Name)
		sc, err := Builtin(info.Name)
		require.NoError(t, err, info.Name)
		checkInvariants(t, sc)
		require.Equal(t, info.Name, sc.Name, "a built-in's name is its file name")
		require.Equal(t, "builtin:"+info.Name, sc.File)
		require.Equal(t, info.Description, sc.Description)
	}
	require.Equal(t, []string{"double-burst", "token-vs-leaky", "nginx-burst", "sliding-window-accuracy",
		"retry-storm", "retry-storm-jitter", "api-gateway", "cron-aligned", "ip-rotation", "kong-local-pods", "kong-local-pods-backend", "redis-race", "sync-interval", "redis-outage", "flexible-consistency", "protect-the-backend", "gc-pause-collapse", "netflix-gradient2", "metastable-retry", "metastable-retry-jitter", "metastable-retry-budget", "choose-burst",
		"sdi-token-bucket", "sdi-fixed-window", "sdi-sliding-window", "cloudflare-window",
		"figma-fixed-window", "kong-6723", "kong-6723-sync", "kong-6724", "apisix-12592", "openfoodfacts-nginx",
		"traefik-average", "resilience4j-cycles", "bucket4j-greedy", "istio-local-pods",
		"aws-backoff-jitter", "brooker-retries-5", "brooker-retries-50", "brooker-retries-100", "sre-client-throttling", "nc-rate-latency", "traefik-router-buckets",
		"aws-burst-400", "apigee-spike-100pm", "azure-increment-late", "guava-next-pays", "cloudflare-mitigation",
		"uber-take", "redis-rate-partial", "priority-shedding", "gubernator-global",
		"cloudflare-data-centers"}, names)
	require.Equal(t, Default, names[0])

	// every embedded file is listed
	files, err := fs.Glob(builtinFS, "builtin/*")
	require.NoError(t, err)
	require.Len(t, files, len(names))
	for _, f := range files {
		require.Contains(t, names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}

	_, err = Builtin("nope")
	require.EqualError(t, err, `no built-in scenario "nope" (built-ins: double-burst, token-vs-leaky, nginx-burst, sliding-window-accuracy, retry-storm, retry-storm-jitter, api-gateway, cron-aligned, ip-rotation, kong-local-pods, kong-local-pods-backend, redis-race, sync-interval, redis-outage, flexible-consistency, protect-the-backend, gc-pause-collapse, netflix-gradient2, metastable-retry, metastable-retry-jitter, metastable-retry-budget, choose-burst, sdi-token-bucket, sdi-fixed-window, sdi-sliding-window, cloudflare-window, figma-fixed-window, kong-6723, kong-6723-sync, kong-6724, apisix-12592, openfoodfacts-nginx, traefik-average, resilience4j-cycles, bucket4j-greedy, istio-local-pods, aws-backoff-jitter, brooker-retries-5, brooker-retries-50, brooker-retries-100, sre-client-throttling, nc-rate-latency, traefik-router-buckets, aws-burst-400, apigee-spike-100pm, azure-increment-late, guava-next-pays, cloudflare-mitigation, uber-take, redis-rate-partial, priority-shedding, gubernator-global, cloudflare-data-centers)`)
}

// The default scenario of `ratesim compare` is docs/algorithms.md, worked example 1.
func TestDoubleBurst(t *testing.T) {
	sc, err := Builtin("double-burst")
	require.NoError(t, err)
	require.Equal(t, uint64(1), sc.Seed)
	require.Equal(t, 3*time.Second, sc.Duration)
	require.Equal(t, algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, sc.Limit)
	// every algorithm but concurrency: no service time, nothing in flight
	require.Len(t, sc.Algorithms, len(algorithms.All())-1)
	require.Len(t, sc.Skipped, 1)
	require.Equal(t, "concurrency", sc.Skipped[0].Name)
	require.Equal(t, []time.Duration{time.Second, 100 * time.Millisecond}, sc.Windows)
	alice := traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 1, End: 3 * time.Second}
	require.Equal(t, []traffic.Source{
		&traffic.Burst{Common: alice, At: 900 * time.Millisecond, Count: 10, Over: 100 * time.Millisecond},
		&traffic.Burst{Common: alice, At: time.Second, Count: 10, Over: 100 * time.Millisecond},
	}, sc.Traffic.Sources)

	// the arrivals are 900, 910, ..., 1090 ms
	_, stream, err := sc.Traffic.Open()
	require.NoError(t, err)
	var a traffic.Arrival
	var got []time.Duration
	for stream.Next(&a) {
		got = append(got, a.At)
	}
	require.Len(t, got, 20)
	for i, at := range got {
		require.Equal(t, 900*time.Millisecond+time.Duration(i)*10*time.Millisecond, at)
	}
}

func TestNginxBurst(t *testing.T) {
	sc, err := Builtin("nginx-burst")
	require.NoError(t, err)
	var labels []string
	for _, a := range sc.Algorithms {
		labels = append(labels, a.Label)
		if a.Name == "nginx" {
			require.True(t, a.Params.NginxBurstSet)
			require.Equal(t, int64(5), a.Params.NginxBurst)
		}
	}
	require.Equal(t, []string{"nginx-burst5", "nginx-burst5-nodelay", "nginx-burst5-delay2", "token-bucket"}, labels)
	require.True(t, sc.Algorithms[1].Params.Nodelay)
	require.Equal(t, int64(2), sc.Algorithms[2].Params.NginxDelay)
}

// The built-ins stay small: the teaching ones hundreds of requests at most,
// the gateway in miniature some thousands, so that every built-in runs in a
// blink.
func TestBuiltinsAreSmall(t *testing.T) {
	for _, info := range Builtins() {
		sc, err := Builtin(info.Name)
		require.NoError(t, err)
		_, stream, err := sc.Traffic.Open()
		require.NoError(t, err)
		n := 0
		var a traffic.Arrival
		for stream.Next(&a) {
			require.Less(t, a.At, sc.Duration)
			n++
		}
		require.NoError(t, stream.Err())
		require.Greater(t, n, 0, info.Name)
		limit := 500
		switch info.Name {
		case "retry-storm", "retry-storm-jitter":
			limit = 5000 // 20 waves of 150, and a trickle
		case "api-gateway":
			limit = 25000 // 500/s of Poisson and three abusers for 30s
		case "redis-race", "sync-interval", "redis-outage", "gubernator-global":
			limit = 10000 // a race, or a cluster's overshoot, needs traffic
		case "kong-local-pods-backend":
			limit = 10000 // 30s at 200/s: three pods' load on a backend queues
		case "protect-the-backend":
			limit = 5000 // a backend's queue and p99 need a minute of bursts
		case "ip-rotation":
			limit = 15000 // 20s of an attacker rotating at 500/s
		case "netflix-gradient2":
			limit = 10000 // four steps of 20s of load, up to 200/s
		case "metastable-retry", "metastable-retry-jitter", "metastable-retry-budget":
			limit = 2000 // three minutes at 9/s: recovering (or not) takes time
		case "istio-local-pods":
			limit = 11000 // 2s of the 5,330 a second the thread reports
		case "choose-burst":
			limit = 5000 // 20s of Zipf clients and two abusers, for a sweep
		case "brooker-retries-5", "brooker-retries-50", "brooker-retries-100":
			limit = 12000 // four clients at 100/s for 30s: a load figure within 1%
		case "sre-client-throttling":
			limit = 20000 // 30/s for 10m: the throttle's window turns over 60 times
		case "nc-rate-latency":
			limit = 2500 // a burst and 10s at 200/s against the bucket
		}
		require.LessOrEqual(t, n, limit, info.Name)
	}
}

func TestLoadResolve(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(path, []byte(base+"traffic: [{type: times, at: [0s]}]\n"), 0o644))

	sc, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, path, sc.File)

	missing := filepath.Join(dir, "missing.yaml")
	_, err = Load(missing)
	require.EqualError(t, err, missing+": no such file or directory")
	require.True(t, errors.Is(err, fs.ErrNotExist))

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: t\n"), 0o644))
	_, err = Load(bad)
	require.EqualError(t, err, bad+":1:1: limit: missing (want a rate like 10/s or a mapping {rate, per, burst})\n"+
		bad+":1:1: traffic: missing (want a list of traffic sources)")

	// a file first, then a built-in name
	sc, err = Resolve(path)
	require.NoError(t, err)
	require.Equal(t, path, sc.File)
	sc, err = Resolve("token-vs-leaky")
	require.NoError(t, err)
	require.Equal(t, "builtin:token-vs-leaky", sc.File)
	_, err = Resolve(missing)
	require.EqualError(t, err, missing+": no such file, and no built-in scenario of that name (built-ins: double-burst, token-vs-leaky, nginx-burst, sliding-window-accuracy, retry-storm, retry-storm-jitter, api-gateway, cron-aligned, ip-rotation, kong-local-pods, kong-local-pods-backend, redis-race, sync-interval, redis-outage, flexible-consistency, protect-the-backend, gc-pause-collapse, netflix-gradient2, metastable-retry, metastable-retry-jitter, metastable-retry-budget, choose-burst, sdi-token-bucket, sdi-fixed-window, sdi-sliding-window, cloudflare-window, figma-fixed-window, kong-6723, kong-6723-sync, kong-6724, apisix-12592, openfoodfacts-nginx, traefik-average, resilience4j-cycles, bucket4j-greedy, istio-local-pods, aws-backoff-jitter, brooker-retries-5, brooker-retries-50, brooker-retries-100, sre-client-throttling, nc-rate-latency, traefik-router-buckets, aws-burst-400, apigee-spike-100pm, azure-increment-late, guava-next-pays, cloudflare-mitigation, uber-take, redis-rate-partial, priority-shedding, gubernator-global, cloudflare-data-centers)")
	_, err = Resolve(dir)
	require.EqualError(t, err, dir+": is a directory, want a scenario file")

	// a file of a built-in's name in the working directory wins
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("double-burst", []byte("name: mine\nlimit: 1/s\ntraffic: [{type: times, at: [0s]}]\n"), 0o644))
	sc, err = Resolve("double-burst")
	require.NoError(t, err)
	require.Equal(t, "mine", sc.Name)
}

// decide runs every algorithm of sc over its traffic (no retries) and
// returns the verdicts per label, in arrival order.
func decide(t *testing.T, sc *Scenario) map[string][]algorithms.Decision {
	t.Helper()
	out := map[string][]algorithms.Decision{}
	for _, a := range sc.Algorithms {
		lim, err := algorithms.New(a.Name, a.Params)
		require.NoError(t, err, a.Label)
		_, stream, err := sc.Traffic.Open()
		require.NoError(t, err)
		var arr traffic.Arrival
		for stream.Next(&arr) {
			out[a.Label] = append(out[a.Label], lim.Decide(arr.At, algorithms.Key(arr.Key), arr.Cost))
		}
	}
	return out
}

func admitted(ds []algorithms.Decision) (n int, set []bool) {
	for _, d := range ds {
		set = append(set, d.Verdict != algorithms.Reject)
		if d.Verdict != algorithms.Reject {
			n++
		}
	}
	return n, set
}

// The built-ins teach what their descriptions say.
func TestBuiltinLessons(t *testing.T) {
	t.Run("double-burst", func(t *testing.T) {
		sc, err := Builtin("double-burst")
		require.NoError(t, err)
		got := decide(t, sc)
		n, _ := admitted(got["fixed-window"])
		require.Equal(t, 20, n)
		n, set := admitted(got["sliding-log"])
		require.Equal(t, 10, n)
		for i := range 10 {
			require.True(t, set[i])
			require.False(t, set[10+i])
		}
	})
	t.Run("token-vs-leaky", func(t *testing.T) {
		sc, err := Builtin("token-vs-leaky")
		require.NoError(t, err)
		got := decide(t, sc)
		_, tb := admitted(got["token-bucket"])
		_, gcra := admitted(got["gcra"])
		_, leaky := admitted(got["leaky-bucket"])
		require.Equal(t, tb, gcra)
		require.Equal(t, tb, leaky)
		require.Contains(t, tb, false, "the second burst is more than the bucket holds")
		for i, d := range got["token-bucket"] {
			require.NotEqual(t, algorithms.Delay, d.Verdict, "token bucket never delays: request %d", i)
		}
		delayed := 0
		for _, d := range got["leaky-bucket"] {
			if d.Verdict == algorithms.Delay {
				delayed++
			}
		}
		require.Greater(t, delayed, 0, "leaky bucket delays the bursts")
	})
	t.Run("nginx-burst", func(t *testing.T) {
		sc, err := Builtin("nginx-burst")
		require.NoError(t, err)
		got := decide(t, sc)
		_, nodelay := admitted(got["nginx-burst5-nodelay"])
		// docs/algorithms.md, worked example 3: 8 at 0 ms admit 6, reject 2; then 50,
		// 100, 150, 250 ms are rejected, admitted, rejected, admitted
		require.Equal(t, []bool{true, true, true, true, true, true, false, false, false, true, false, true}, nodelay[:12])
		for _, label := range []string{"nginx-burst5", "nginx-burst5-delay2", "token-bucket"} {
			_, set := admitted(got[label])
			require.Equal(t, nodelay, set, label)
		}
		for _, d := range got["nginx-burst5-nodelay"] {
			require.NotEqual(t, algorithms.Delay, d.Verdict)
		}
		delays := func(label string) (n int) {
			for _, d := range got[label] {
				if d.Verdict == algorithms.Delay {
					n++
				}
			}
			return n
		}
		require.Greater(t, delays("nginx-burst5"), delays("nginx-burst5-delay2"))
		require.Greater(t, delays("nginx-burst5-delay2"), 0)
	})
	t.Run("sliding-window-accuracy", func(t *testing.T) {
		sc, err := Builtin("sliding-window-accuracy")
		require.NoError(t, err)
		got := decide(t, sc)
		fixed, _ := admitted(got["fixed-window"])
		sliding, _ := admitted(got["sliding-window"])
		log, _ := admitted(got["sliding-log"])
		t.Logf("admitted: fixed-window %d, sliding-window %d, sliding-log %d", fixed, sliding, log)
		// an approximation: it may admit a little more or less than the log,
		// but it is much closer to it than the fixed window is
		require.Less(t, log, fixed)
		require.Less(t, sliding, fixed)
		require.LessOrEqual(t, abs(sliding-log), (fixed-log)/4)
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
