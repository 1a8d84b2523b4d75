package redislua

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/redis/go-redis/v9"
)

// allOfReq is one request to an all-of row: its key and its attributes
// ("" where it carries none).
type allOfReq struct {
	now   time.Duration
	key   string
	attrs []string
	cost  int64
}

// allOfWant is what a request must get: the decision and the limit that
// fired (1 + its index, 0 for none).
type allOfWant struct {
	d     algorithms.Decision
	fired int
	why   string
}

// allOfGo decides reqs on the Go all-of row with params p.
type allOfGo struct {
	lim algorithms.Limiter
	ids map[string]algorithms.Key
}

func newAllOfGo(t *testing.T, p algorithms.Params) *allOfGo {
	t.Helper()
	lim, err := algorithms.New(AllOf, p)
	if err != nil {
		t.Fatal(err)
	}
	return &allOfGo{lim: lim, ids: map[string]algorithms.Key{}}
}

func (g *allOfGo) id(s string) algorithms.Key {
	if s == "" {
		return algorithms.NoKey
	}
	k, ok := g.ids[s]
	if !ok {
		k = algorithms.Key(len(g.ids) + 1)
		g.ids[s] = k
	}
	return k
}

func (g *allOfGo) decide(q allOfReq) (algorithms.Decision, int) {
	attrs := []algorithms.Key{g.id(q.key)}
	for _, a := range q.attrs {
		attrs = append(attrs, g.id(a))
	}
	d := g.lim.(algorithms.Attributed).DecideAttrs(q.now, attrs, q.cost)
	return d, g.lim.(algorithms.Firer).Fired() + 1
}

// memberKeys returns each limit's key for q, as sim.MemberKeys writes them:
// the request's key, "global" for by: global, an attribute's value ("" for
// none); nil when every limit counts by the request's key.
func memberKeys(p algorithms.Params, q allOfReq) []string {
	byKey := true
	for _, m := range p.Members {
		byKey = byKey && m.By == algorithms.ByKey
	}
	if byKey {
		return nil
	}
	keys := make([]string, len(p.Members))
	for i, m := range p.Members {
		switch {
		case m.By == algorithms.ByAll:
			keys[i] = "global"
		case m.By == algorithms.ByKey:
			keys[i] = q.key
		case m.By-1 < len(q.attrs):
			keys[i] = q.attrs[m.By-1]
		}
	}
	return keys
}

// onRedis decides reqs through the all-of script on Redis, by the Runner.
func onRedis(t *testing.T, ctx context.Context, c *redis.Client, p algorithms.Params, run string, depth int, reqs []allOfReq, fn func(i int, got Reply) error) {
	t.Helper()
	r, err := NewRunner(ctx, c, Config{Algorithm: AllOf, Params: p, Run: run, Label: "row", Depth: depth})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	done, err := r.RunReplies(ctx, func(yield func(Request) bool) {
		for _, q := range reqs {
			if !yield(Request{Now: q.now, Key: q.key, Cost: q.cost, Keys: memberKeys(p, q)}) {
				return
			}
		}
	}, func(_ Request, got Reply) error {
		err := fn(i, got)
		i++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if done != len(reqs) {
		t.Fatalf("%d decisions, want %d", done, len(reqs))
	}
}

func limit(name string, rate int64, per time.Duration, burst int64) algorithms.Member {
	return algorithms.Member{Name: name, Params: policy(rate, per, burst)}
}

func allOf(commit algorithms.Commit, members ...algorithms.Member) algorithms.Params {
	return algorithms.Params{Policy: algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}, Commit: commit, Members: members}
}

// TestAllOfHand holds the all-of script, and the Go row, to small cases
// worked by hand, one per commit mode and a few with delays and limits of
// other keys: each step says why its decision and its fired limit are what
// they are.
func TestAllOfHand(t *testing.T) {
	t.Parallel()
	srv := startRedisServer(t)
	c := clientNoRetry(t, srv)
	ctx := context.Background()

	// limits[0] fixed-window 2 per 1s; limits[1] token-bucket 1 per 4s,
	// burst 3 (a quarter of a token a second)
	fw := limit("fixed-window", 2, time.Second, 2)
	tb := limit("token-bucket", 1, 4*time.Second, 3)
	at := func(now time.Duration) allOfReq { return allOfReq{now: now, key: "a", cost: 1} }
	type hstep struct {
		q    allOfReq
		want allOfWant
	}
	cases := []struct {
		name  string
		p     algorithms.Params
		steps []hstep
	}{
		{"all-or-nothing", allOf(algorithms.AllOrNothing, fw, tb), []hstep{
			{at(0), allOfWant{acc(), 0, "window 0 holds 1; the bucket 2 tokens"}},
			{at(0), allOfWant{acc(), 0, "window 0 holds 2; the bucket 1 token"}},
			{at(0), allOfWant{rej(time.Second), 1, "window 0 is full: wait for window 1; the bucket would admit, but is not charged"}},
			{at(time.Second), allOfWant{acc(), 0, "window 1 holds 1; the bucket had 1 token (not 0: uncharged above) + 0.25: 0.25 left"}},
			{at(time.Second), allOfWant{rej(3 * time.Second), 2, "the bucket is 0.75 short: 3s; window 1 would admit, not charged"}},
			{at(time.Second), allOfWant{rej(3 * time.Second), 2, "window 1 still holds 1 (uncharged), so the bucket alone rejects"}},
			{at(2 * time.Second), allOfWant{rej(2 * time.Second), 2, "the bucket has 0.5 tokens: 2s to a whole one; window 2 would admit"}},
		}},
		{"every-hit", allOf(algorithms.EveryHit, fw, tb), []hstep{
			{at(0), allOfWant{acc(), 0, "window 0 holds 1; the bucket 2 tokens"}},
			{at(0), allOfWant{acc(), 0, "window 0 holds 2; the bucket 1 token"}},
			{at(0), allOfWant{rej(time.Second), 1, "window 0 is full; the bucket admits and is charged: 0 tokens"}},
			{at(time.Second), allOfWant{rej(3 * time.Second), 2, "the bucket has 0.25: 3s to a token; window 1 admits and counts 1"}},
			{at(time.Second), allOfWant{rej(3 * time.Second), 2, "the bucket still 0.75 short; window 1 counts 2"}},
			{at(time.Second), allOfWant{rej(3 * time.Second), 1, "both reject: the first that rejected fired, the longest wait (3s, not window 1's 1s) is the retry"}},
		}},
		{"in-order", allOf(algorithms.InOrder, fw, tb), []hstep{
			{at(0), allOfWant{acc(), 0, "window 0 holds 1; the bucket 2 tokens"}},
			{at(0), allOfWant{acc(), 0, "window 0 holds 2; the bucket 1 token"}},
			{at(0), allOfWant{rej(time.Second), 1, "window 0 is full: the bucket is not asked, keeps its token"}},
			{at(time.Second), allOfWant{acc(), 0, "window 1 holds 1; the bucket 1.25 tokens: 0.25 left"}},
			{at(time.Second), allOfWant{rej(3 * time.Second), 2, "window 1 admits and keeps the count (2); the bucket is 0.75 short"}},
			{at(time.Second), allOfWant{rej(time.Second), 1, "window 1 is full: it alone is asked, its 1s is the retry (every-hit would say 3s)"}},
		}},
		// limits[0] nginx 10r/s burst=2 (a request every 100ms, 2 queued);
		// limits[1] token-bucket 5 per 1s, burst 1, max-delay 300ms
		{"delays", allOf(algorithms.AllOrNothing,
			algorithms.Member{Name: "nginx", Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 3}, NginxBurst: 2, NginxBurstSet: true}},
			algorithms.Member{Name: "token-bucket", Params: algorithms.Params{Policy: algorithms.Policy{Rate: 5, Per: time.Second, Burst: 1}, MaxDelay: 300 * time.Millisecond}}), []hstep{
			{at(0), allOfWant{acc(), 0, "nginx: excess 0; the bucket's token"}},
			{at(0), allOfWant{del(ms(200)), 2, "nginx delays 100ms (excess 1), the bucket 200ms (1 token short at 5/s): the larger, the bucket's"}},
			{at(0), allOfWant{rej(ms(100)), 2, "the bucket is 2 short: 400ms > 300ms, 100ms too early; nginx (200ms) not charged"}},
			{at(ms(100)), allOfWant{del(ms(300)), 2, "nginx: excess 1 - 1 + 1 = 1, 100ms; the bucket 1.5 short: 300ms, within max-delay"}},
			{at(ms(100)), allOfWant{rej(ms(200)), 2, "the bucket 2.5 short: 500ms, 200ms over max-delay"}},
		}},
		// limits[0] fixed-window 1 per 1s by the request's key; limits[1]
		// fixed-window 3 per 1s over every request (by: global); limits[2]
		// fixed-window 1 per 1s by the attribute user, which a request may
		// lack (then that limit is not asked)
		{"keys", allOf(algorithms.EveryHit,
			limit("fixed-window", 1, time.Second, 1),
			algorithms.Member{Name: "fixed-window", Params: policy(3, time.Second, 3), By: algorithms.ByAll},
			algorithms.Member{Name: "fixed-window", Params: policy(1, time.Second, 1), By: 1}), []hstep{
			{allOfReq{now: 0, key: "a", attrs: []string{""}, cost: 1}, allOfWant{acc(), 0, "a: 1; global: 1; no user: not asked"}},
			{allOfReq{now: 0, key: "b", attrs: []string{"u"}, cost: 1}, allOfWant{acc(), 0, "b: 1; global: 2; user u: 1"}},
			{allOfReq{now: 0, key: "a", attrs: []string{"v"}, cost: 1}, allOfWant{rej(time.Second), 1, "a is full; global counts 3 (every-hit); user v counts 1"}},
			{allOfReq{now: 0, key: "c", attrs: []string{"u"}, cost: 1}, allOfWant{rej(time.Second), 2, "c: 1; global is full; user u is full too, but global rejected first"}},
			{allOfReq{now: time.Second, key: "c", attrs: []string{"u"}, cost: 1}, allOfWant{acc(), 0, "window 1: every count starts at 0"}},
		}},
	}
	for n, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newAllOfGo(t, tc.p)
			reqs := make([]allOfReq, len(tc.steps))
			for i, s := range tc.steps {
				reqs[i] = s.q
				d, fired := g.decide(s.q)
				if d != s.want.d || fired != s.want.fired {
					t.Errorf("step %d (%s): Go %+v fired %d, want %+v fired %d", i+1, s.want.why, d, fired, s.want.d, s.want.fired)
				}
			}
			onRedis(t, ctx, c, tc.p, fmt.Sprint("hand", n), 1, reqs, func(i int, got Reply) error {
				s := tc.steps[i]
				if got.Decision != s.want.d || got.Fired != s.want.fired {
					t.Errorf("step %d (%s): Lua %+v fired %d, want %+v fired %d", i+1, s.want.why, got.Decision, got.Fired, s.want.d, s.want.fired)
				}
				return nil
			})
		})
	}
}

// randomAllOf makes an all-of row of 1 to 3 limits drawn from the rules'
// differential cases, each counting by the request's key, every request or
// one of two attributes.
func randomAllOf(rng *rand.Rand, commit algorithms.Commit) algorithms.Params {
	cases := differentialCases()
	p := allOf(commit)
	for range 1 + rng.IntN(3) {
		name := AllOfRules[rng.IntN(len(AllOfRules))]
		var mp algorithms.Params
		for {
			mp = cases[name][rng.IntN(len(cases[name]))]
			if _, err := algorithms.New(name, mp); err == nil {
				break
			}
		}
		by := []int{algorithms.ByKey, algorithms.ByKey, algorithms.ByAll, 1, 2}[rng.IntN(5)]
		p.Members = append(p.Members, algorithms.Member{Name: name, Params: mp, By: by})
	}
	return p
}

func describeAllOf(p algorithms.Params) string {
	var s []string
	for _, m := range p.Members {
		s = append(s, fmt.Sprintf("%s %s by %d", m.Name, describe(m.Params), m.By))
	}
	return string(p.Commit) + " [" + strings.Join(s, "; ") + "]"
}

// TestAllOfDifferential runs random all-of rows, in every commit mode,
// with limits of every rule counting by the request's key, every request
// or an attribute that a request may lack, on randomised traces through
// the Go row and through the all-of script on a real redis-server (the
// Runner, pipelined): every verdict, delay, retry_after and fired limit
// identical.
func TestAllOfDifferential(t *testing.T) {
	t.Parallel()
	srv := startRedisServer(t)
	c := clientNoRetry(t, srv)
	ctx := context.Background()
	rows, n := 16, 400
	if testing.Short() {
		rows, n = 5, 200
	}
	type tally struct {
		verdicts map[algorithms.Verdict]int
		fired    map[int]int
	}
	seen := map[algorithms.Commit]*tally{}
	for _, commit := range algorithms.Commits {
		seen[commit] = &tally{map[algorithms.Verdict]int{}, map[int]int{}}
		for r := range rows {
			seed := uint64(r + 1)
			rng := rand.New(rand.NewPCG(seed, uint64(len(commit))))
			p := randomAllOf(rng, commit)
			m0 := p.Members[0].Params
			trace := randomTrace(seed, n, 4, m0.Per, m0.Rate)
			reqs := make([]allOfReq, len(trace))
			for i, q := range trace {
				a := []string{fmt.Sprint("u", rng.IntN(3)), fmt.Sprint("r", rng.IntN(2))}
				if rng.IntN(8) == 0 {
					a[0] = "" // no user: the limits by it are not asked
				}
				reqs[i] = allOfReq{now: q.now, key: fmt.Sprint("k", q.key), attrs: a, cost: q.cost}
			}
			label := fmt.Sprintf("%s seed %d", describeAllOf(p), seed)
			g := newAllOfGo(t, p)
			tl := seen[commit]
			onRedis(t, ctx, c, p, fmt.Sprint("diff-", commit, r), 16, reqs, func(i int, got Reply) error {
				want, fired := g.decide(reqs[i])
				tl.verdicts[got.Verdict]++
				tl.fired[got.Fired]++
				if got.Decision != want || got.Fired != fired {
					q := reqs[i]
					return fmt.Errorf("%s: decision %d (at %v, key %s, attrs %v, cost %d): Lua %+v fired %d, Go %+v fired %d",
						label, i+1, q.now, q.key, q.attrs, q.cost, got.Decision, got.Fired, want, fired)
				}
				return nil
			})
		}
	}
	for _, commit := range algorithms.Commits {
		tl := seen[commit]
		if tl.verdicts[algorithms.Accept] == 0 || tl.verdicts[algorithms.Delay] == 0 || tl.verdicts[algorithms.Reject] == 0 {
			t.Errorf("%s: verdicts %v: the traces test too little", commit, tl.verdicts)
		}
		if tl.fired[2] == 0 {
			t.Errorf("%s: fired %v: no second limit ever fired", commit, tl.fired)
		}
		t.Logf("%s: verdicts %v, fired %v", commit, tl.verdicts, tl.fired)
	}
}

// An all-of row with a limit that has no script is refused, naming that
// limit and why; so is one with a limit whose params its script does not
// take. A bad argument is an error reply before any key is written.
func TestAllOfRefused(t *testing.T) {
	azure := algorithms.Member{Name: "azure-rate-limit", Params: policy(5, time.Second, 5), Label: "rate-limit (policy.xml:4)"}
	p := allOf(algorithms.EveryHit, limit("token-bucket", 5, time.Second, 5), azure)
	err := Unsupported(p)
	var me *MemberError
	if !errors.As(err, &me) || me.Index != 1 {
		t.Fatalf("Unsupported: %v, want the MemberError of limits[1]", err)
	}
	for _, s := range []string{"rate-limit (policy.xml:4): azure-rate-limit has no script", "API Management", "an all-of script takes nginx, fixed-window, sliding-window, token-bucket"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Unsupported: %q lacks %q", err, s)
		}
	}
	cal := limit("fixed-window", 5, time.Second, 5)
	cal.Params.Calendar = algorithms.CalendarMonth
	err = Unsupported(allOf(algorithms.AllOrNothing, limit("token-bucket", 5, time.Second, 5), cal))
	if err == nil || !strings.HasPrefix(err.Error(), "limits[1]: per 1mo or 1y") {
		t.Errorf("a calendar month: %v", err)
	}
	if err := Unsupported(allOf(algorithms.InOrder, limit("nginx", 5, time.Second, 5), cal)); err == nil {
		t.Error("a calendar month in-order: no error")
	}

	srv := startRedisServer(t)
	_, c := srv, clientNoRetry(t, srv)
	ctx := context.Background()
	if _, err := NewRunner(ctx, c, Config{Algorithm: AllOf, Params: p}); err == nil || !strings.Contains(err.Error(), "azure-rate-limit has no script") {
		t.Errorf("NewRunner: %v", err)
	}
	src, err := Script(AllOf, ClockArg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []any
		want string
	}{
		{[]any{0, 1, "all-or-nothing", 2, "token-bucket", 1, 0, 5, 1000000000, 5, "nginx", 2, 0, 5, 1500000000, 5},
			"ratesim: limits[1]: per: nginx takes a rate per 1s (r/s) or per 1m (r/m) only"},
		{[]any{0, 1, "every-hit", 1, "gcra", 1, 0, 5, 1000000000, 5}, "ratesim: limits[0]: no rule gcra"},
		{[]any{0, 1, "first", 1, "token-bucket", 1, 0, 5, 1000000000, 5}, "ratesim: commit: want all-or-nothing"},
		{[]any{0, 1, "in-order", 1, "token-bucket", 1, 1, 5, 1000000000, 5, "count-rejected", 1}, "ratesim: limits[0]: unknown option count-rejected for token-bucket"},
		{[]any{0, 1, "in-order", 1, "token-bucket", 3, 0, 5, 1000000000, 5}, "ratesim: limits[0]: key: want 0 (not asked) or an index of KEYS up to 2"},
		{[]any{0, 1, "in-order", 1, "token-bucket", 1, 0, 5, 1000000000, 5, 7}, "ratesim: found 1 arguments after the last limit"},
	} {
		err := c.Eval(ctx, src, []string{"bad:{x}:1", "bad:{x}:2"}, tc.argv...).Err()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.argv, err, tc.want)
		}
	}
	if n, err := c.Exists(ctx, "bad:{x}:1", "bad:{x}:2").Result(); err != nil || n != 0 {
		t.Errorf("a refused call wrote %d keys (%v)", n, err)
	}
}

// TestAllOfClockRedisAndSlots: the all-of script's production variant,
// against Redis's own TIME, on a one-node Redis Cluster (which refuses a
// script whose keys are not all in one slot of the node): limits[0]
// fixed-window 5 per 200ms by the request's key, limits[1] token-bucket 3
// per 300ms over every request. A burst of 6 at once (a millisecond or so,
// where the bucket gains a token in 100ms): 3 admitted (the bucket holds
// 3), then the bucket fires; both limits' keys, which share the run's hash
// slot, get a PEXPIRE no longer than their state takes to become fresh
// (200ms, 300ms), and vanish.
func TestAllOfClockRedisAndSlots(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	p := allOf(algorithms.AllOrNothing, limit("fixed-window", 5, 200*time.Millisecond, 5),
		algorithms.Member{Name: "token-bucket", Params: policy(3, 300*time.Millisecond, 3), By: algorithms.ByAll})
	src, err := Script(AllOf, ClockRedis)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{MemberKey("r7", "row", 0, "alice"), MemberKey("r7", "row", 1, "global")}
	now := redisNow(t, c)
	time.Sleep(200*time.Millisecond - time.Duration(now.UnixNano())%(200*time.Millisecond) + 5*time.Millisecond)
	for i := range 6 {
		res, err := c.Eval(ctx, src, keys, AllOfArgs(p, 0, 1, nil)...).Result()
		if err != nil {
			t.Fatal(err)
		}
		got, err := reply(res, true)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i < 3 && (got.Verdict != algorithms.Accept || got.Fired != 0):
			t.Errorf("request %d of the burst: %+v, want accepted", i+1, got)
		case i >= 3 && (got.Verdict != algorithms.Reject || got.Fired != 2 || got.RetryAfter <= 0 || got.RetryAfter%time.Microsecond != 0):
			t.Errorf("request %d after the bucket's 3: %+v, want rejected by limits[1], retry_after whole microseconds", i+1, got)
		}
	}
	for i, fresh := range []time.Duration{200 * time.Millisecond, 300 * time.Millisecond} {
		ttl, err := c.PTTL(ctx, keys[i]).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > fresh {
			t.Errorf("%s: PTTL %v after the burst, want in (0, %v]", keys[i], ttl, fresh)
		}
	}
	if keySlot(keys[0]) != keySlot(keys[1]) {
		t.Errorf("the limits' keys are in slots %d and %d", keySlot(keys[0]), keySlot(keys[1]))
	}
	time.Sleep(400 * time.Millisecond)
	if n, err := c.Exists(ctx, keys...).Result(); err != nil || n != 0 {
		t.Errorf("%d of the limits' keys still exist after they became fresh (%v)", n, err)
	}
}
