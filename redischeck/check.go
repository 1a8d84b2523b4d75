// Package redischeck replays a scenario's decisions on a real Redis, each
// one made again by its algorithm's Lua script (package redislua), and
// compares every verdict, delay and retry_after with the simulation's
// (docs/redis.md, compare --redis).
//
// Rows are replayed one at a time, each by a run of the simulation of that
// row alone (its decisions are those it made beside the others: every row
// has its own limiter and draws), streamed to the script as they are made:
// nothing holds the decisions. A plain row replays its attempts in
// processing order; a central cluster row the scripts its store ran, in
// store order, with the instant each was given. Between two rows the first
// one's keys are measured (MEMORY USAGE of each, INFO's used_memory) and
// deleted.
//
// The package never prints and never exits.
package redischeck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/queue"
	"github.com/ratesim/ratesim/redislua"
	"github.com/ratesim/ratesim/sim"
)

// Options are how a check runs.
type Options struct {
	// Run names this run's keys (redislua.Key); it must be fresh.
	Run string
	// Keep leaves the keys in Redis after the check (--redis-keep).
	Keep bool
	// Depth is the pipeline depth (0: redislua.DefaultDepth).
	Depth int
	// Lanes is how many connections send at once (0: DefaultLanes).
	Lanes int
	// Wall returns the wall clock, for the throughput and latency figures
	// (the only ones that are not the same from run to run).
	Wall func() time.Time
	// Progress, when set, is told how far the replay of row i (of
	// cfg.Algorithms) has got: the virtual time its simulation has
	// reached, of the run's duration (0 for a trace without one), as
	// sim.Config.Progress says it.
	Progress func(i int, done, total time.Duration)
}

// Check replays every row of cfg that has a script on c, and returns each
// row's figures, in cfg's order (a row that cannot be replayed says why).
// rep is the report of cfg's run, for its span. A Redis that fails stops
// the check with an error that says how many decisions of which row were
// checked.
func Check(ctx context.Context, c *redis.Client, cfg sim.Config, rep *sim.Report, o Options) ([]*sim.RedisResult, error) {
	out := make([]*sim.RedisResult, len(cfg.Algorithms))
	first, ok, err := FirstArrival(cfg.Traffic)
	if err != nil {
		return nil, err
	}
	for i := range cfg.Algorithms {
		alg := &cfg.Algorithms[i]
		if why := skipped(cfg, alg); why != "" {
			out[i] = &sim.RedisResult{Skipped: why}
			continue
		}
		res, err := checkRow(ctx, c, cfg, i, rep, o, first, ok)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", alg.Label, err)
		}
		out[i] = res
	}
	return out, nil
}

// skipped says why row alg cannot be replayed, or "".
func skipped(cfg sim.Config, alg *sim.Algorithm) string {
	info, _ := algorithms.Lookup(alg.Name)
	switch {
	case alg.New != nil:
		return "its limiter is not one of ratesim's algorithms"
	case info.Adaptive:
		return alg.Name + " learns one limit for the row from the backend's answers: it has no script"
	case info.Backend:
		return alg.Name + " admits everything: it keeps nothing in a store"
	case alg.Name == "concurrency" && cfg.Backend != nil:
		return "in front of a backend with workers it learns when each request is done from the backend, which its script, given the service time, does not"
	case alg.Params.NginxZone != 0:
		return "its zone frees nodes under memory pressure, which the script, with Redis keeping every key, does not"
	case !redislua.Has(alg.Name):
		why := redislua.NoScript(alg.Name)
		if why == "" {
			why = "ratesim has no Lua script of it"
		}
		return alg.Name + " has no script: " + why
	case redislua.Unsupported(alg.Params) != nil:
		return redislua.Unsupported(alg.Params).Error()
	case cfg.Cluster == nil:
		return ""
	}
	co := alg.Coord.WithDefaults(alg.Params.Burst, alg.Params.Per, cfg.Cluster.Nodes)
	if co.Mode != cluster.Central {
		return "in " + string(co.Mode) + " mode the nodes decide on state of their own; only a central row runs one script in a store"
	}
	if co.Clock == cluster.NodeClock {
		return "with clock: node the store's scripts see time go back, which a script given one clock does not"
	}
	for _, f := range cfg.Cluster.Faults {
		if f.Type == cluster.StoreFlush {
			return "a store-flush fault empties the store mid-run, which the replay does not"
		}
	}
	return ""
}

// memorySample is how often (in decisions) a replay asks for the MEMORY
// USAGE of the key just decided, the first decision on.
const memorySample = 1024

// item is one decision on its way to Redis: the request and what the
// simulation decided, and when it was handed over (for the latency).
type item struct {
	req  redislua.Request
	want algorithms.Decision
	sent time.Time
	// seq is the decision's place in the row's order; attempt and at
	// name it in a mismatch
	seq     int64
	attempt int
	at      time.Duration
	// fired is the limit of an all-of row that decided it (sim.Decision's
	// Fired)
	fired int
}

// feeder is the observer of the row's run: it hands each decision to the
// lane of its key, and stops the run when the replay has stopped.
type feeder struct {
	epoch   time.Duration
	lanes   []chan item
	stop    <-chan struct{}
	seq     int64
	inRange func(now time.Duration, cost int64) error
}

// RangeError is a policy, a span or a cost that a script cannot decide
// exactly (redislua.CheckRange): bad input, not a failure of Redis.
type RangeError struct{ Err error }

func (e RangeError) Error() string { return e.Err.Error() }
func (e RangeError) Unwrap() error { return e.Err }

var errReplayStopped = errors.New("the replay on Redis stopped")

func (f *feeder) Observe(d *sim.Decision) error {
	select {
	case <-f.stop:
		return errReplayStopped
	default:
	}
	now := d.Time - f.epoch
	if err := f.inRange(now, d.Cost); err != nil {
		return err
	}
	it := item{req: redislua.Request{Now: now, Key: d.Key, Cost: d.Cost, Keys: d.MemberKeys.Append(nil)},
		want: d.Decision, seq: f.seq, attempt: d.Attempt, at: d.Time, fired: d.Fired}
	f.seq++
	select {
	case f.lanes[lane(d.Key, len(f.lanes))] <- it:
		return nil
	case <-f.stop:
		return errReplayStopped
	}
}

// lane returns the lane of key among n: FNV-1a of the key, mod n.
func lane(key string, n int) int {
	if n == 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// DefaultLanes is how many connections a replay sends on at once.
const DefaultLanes = 4

// laneResult is what one lane found.
type laneResult struct {
	res   sim.RedisResult
	first int64 // the seq of its first mismatch
	lat   latencies
	err   error
}

// checkRow replays row i. The decisions go out on lanes, each a connection
// of its own with its pipelines in order, a key always on the same lane:
// each key's scripts run in the simulation's order, and the scripts of
// different keys, which touch different Redis keys, commute. So Redis is
// kept busy while a lane's client reads its replies and makes its next
// pipeline. An all-of row whose limits count by other than the request's
// key (an attribute, every request) goes out on one lane: two requests of
// different keys may share a limit's key, and their scripts do not commute.
func checkRow(ctx context.Context, c *redis.Client, cfg sim.Config, i int, rep *sim.Report, o Options,
	firstAt time.Duration, haveFirst bool) (*sim.RedisResult, error) {
	alg := cfg.Algorithms[i]
	p := alg.Params
	epoch, span := Epoch(p, rep, cfg.Cluster, firstAt, haveFirst)
	// the policy over the run's span, for requests of cost 1; a costlier
	// request is checked when it first comes (feeder)
	if err := redislua.CheckRange(alg.Name, redislua.ClockArg, p, 1, span); err != nil {
		return nil, RangeError{err}
	}
	wall := o.Wall
	if wall == nil {
		wall = time.Now
	}
	nl := o.Lanes
	if nl == 0 {
		nl = DefaultLanes
	}
	for _, m := range p.Members {
		if m.By != algorithms.ByKey {
			nl = 1
		}
	}
	runners := make([]*redislua.Runner, nl)
	for l := range runners {
		var err error
		if runners[l], err = redislua.NewRunner(ctx, c, redislua.Config{Algorithm: alg.Name, Params: p,
			Run: o.Run, Label: alg.Label, Depth: o.Depth}); err != nil {
			return nil, err
		}
	}

	lanes := make([]chan item, nl)
	for l := range lanes {
		lanes[l] = make(chan item, 4096)
	}
	stop := make(chan struct{})
	checked := int64(1)
	f := &feeder{epoch: epoch, lanes: lanes, stop: stop,
		inRange: func(now time.Duration, cost int64) error {
			if now < 0 || now > span {
				return fmt.Errorf("an instant %v from the epoch falls outside the span %v that was checked", now, span)
			}
			if cost > checked {
				if err := redislua.CheckRange(alg.Name, redislua.ClockArg, p, cost, span); err != nil {
					return RangeError{err}
				}
				checked = cost
			}
			return nil
		}}
	one := cfg
	one.Algorithms = []sim.Algorithm{alg}
	one.Observe, one.ObserveStore, one.Progress, one.Inspect = nil, nil, nil, nil
	if o.Progress != nil {
		one.Progress = func(done, total time.Duration) { o.Progress(i, done, total) }
	}
	if cfg.Cluster != nil {
		one.ObserveStore = func(int) sim.Observer { return f }
	} else {
		one.Observe = func(int) sim.Observer { return f }
	}
	simErr := make(chan error, 1)
	go func() {
		_, err := sim.Run(one)
		for _, ch := range lanes {
			close(ch)
		}
		simErr <- err
	}()

	start := wall()
	results := make([]laneResult, nl)
	var wg sync.WaitGroup
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }) }
	for l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lr := &results[l]
			lr.err = runLane(ctx, c, runners[l], lanes[l], lr, wall, o.Run, alg)
			if lr.err != nil {
				halt()
			}
		}()
	}
	wg.Wait()
	took := wall().Sub(start)
	halt()
	for _, ch := range lanes { // let the run end
		for range ch {
		}
	}
	simE := <-simErr

	res := &sim.RedisResult{}
	var lat latencies
	first := int64(-1)
	var laneErr error
	for l := range results {
		lr := &results[l]
		res.Decisions += lr.res.Decisions
		res.Mismatches += lr.res.Mismatches
		res.MemoryUsageMax = max(res.MemoryUsageMax, lr.res.MemoryUsageMax)
		if lr.res.FirstMismatch != nil && (first < 0 || lr.first < first) {
			first, res.FirstMismatch = lr.first, lr.res.FirstMismatch
		}
		lat.merge(&lr.lat)
		if laneErr == nil && lr.err != nil {
			laneErr = lr.err
		}
	}
	if simE != nil && !errors.Is(simE, errReplayStopped) {
		return nil, simE
	}
	if laneErr != nil {
		var re *redislua.RunError
		if errors.As(laneErr, &re) {
			// the decisions checked on every lane
			return nil, &redislua.RunError{Done: int(res.Decisions), Err: re.Err}
		}
		return nil, laneErr
	}
	if took > 0 {
		res.OpsPerS = int64(float64(res.Decisions) / took.Seconds())
	}
	res.P99Ns = int64(lat.p99().Truncate(time.Microsecond))
	if err := measure(ctx, c, redislua.Key(o.Run, alg.Label, ""), res, o.Keep); err != nil {
		return nil, err
	}
	return res, nil
}

// runLane sends the decisions of one lane of row alg to Redis with run and
// compares the answers, into lr.
func runLane(ctx context.Context, c *redis.Client, run *redislua.Runner, ch <-chan item, lr *laneResult, wall func() time.Time, runID string, alg sim.Algorithm) error {
	var pending queue.Deque[item] // sent, not yet answered: at most a pipeline
	seq := func(yield func(redislua.Request) bool) {
		for it := range ch {
			it.sent = wall()
			pending.PushBack(it)
			if !yield(it.req) {
				return
			}
		}
	}
	res := &lr.res
	_, err := run.RunReplies(ctx, seq, func(_ redislua.Request, got redislua.Reply) error {
		it := pending.PopFront()
		lr.lat.add(wall().Sub(it.sent))
		res.Decisions++
		if res.Decisions%memorySample == 1 {
			// the state this decision left (and the others of its
			// pipeline): a key's largest state may be gone by the end
			u, err := c.MemoryUsage(ctx, sampleKey(runID, alg, it.req), 0).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				// the server failed mid-run, as a script's failure is told
				return &redislua.RunError{Done: int(res.Decisions), Err: fmt.Errorf("MEMORY USAGE: %w", err)}
			}
			res.MemoryUsageMax = max(res.MemoryUsageMax, u)
		}
		if got.Decision != it.want || got.Fired != it.fired {
			res.Mismatches++
			if res.FirstMismatch == nil {
				lr.first = it.seq
				sd, rd := sim.RedisDecisionOf(it.want), sim.RedisDecisionOf(got.Decision)
				sd.Limit, rd.Limit = firedName(alg, it.fired), firedName(alg, got.Fired)
				res.FirstMismatch = &sim.RedisMismatch{TimeNs: int64(it.at), Key: it.req.Key, Cost: it.req.Cost,
					Attempt: it.attempt, Simulation: sd, Redis: rd}
			}
		}
		return nil
	})
	return err
}

// sampleKey is the Redis key whose MEMORY USAGE is sampled after req: its
// key's, or for an all-of row the first limit's that applies to it.
func sampleKey(run string, alg sim.Algorithm, req redislua.Request) string {
	if alg.Name != redislua.AllOf {
		return redislua.Key(run, alg.Label, req.Key)
	}
	for i := range alg.Params.Members {
		if req.Keys == nil {
			return redislua.MemberKey(run, alg.Label, i, req.Key)
		}
		if req.Keys[i] != "" {
			return redislua.MemberKey(run, alg.Label, i, req.Keys[i])
		}
	}
	return redislua.Key(run, alg.Label, req.Key)
}

// firedName names the limit of an all-of row that fired (1 + its index,
// as sim.Decision's Fired), "" for none.
func firedName(alg sim.Algorithm, fired int) string {
	if fired < 1 || fired > len(alg.Params.Members) {
		return ""
	}
	return sim.LimitName(alg.Params.Members[fired-1], fired-1)
}
