// Package sim is ratesim's discrete-event engine: it replays a scenario's
// traffic through each algorithm on a virtual clock of integer nanoseconds
// and accumulates the metrics of docs/metrics.md.
//
// A run is a pure function of its Config: the same scenario and seed give
// the same Report, byte for byte, however many cores run it. The traffic
// is generated once per Run and read by every algorithm (see feed), each
// on its own goroutine with its own limiter, retries and event queue
// (clients react to each algorithm differently once they retry). Memory is
// bounded by the keys and the traffic of the last report window, never by
// the number of requests.
//
// Events are ordered by time; at one instant, releases of delayed requests
// come first, then first attempts in the order the traffic produced them
// (sources in file order, clients by index), then retries in the order they
// were scheduled; a backend's events come before first attempts (see
// queue.go, which orders every source's events).
//
// Clients retry a rejected request as their source's retry policy says
// (traffic.RetryPolicy.Wait); a retry is a new arrival of the same request
// (same key and cost, attempt + 1). Retries stop at the end of the
// traffic: a retry that would come at or after Start+Duration (with no
// duration, one policy period after the last first attempt) is not made,
// and its request counts as given up. Jitter draws come from one generator
// per run seeded from the scenario's seed, so runs stay deterministic.
package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/timeq"
	"github.com/ratesim/ratesim/traffic"
)

// Config is everything one comparison needs.
type Config struct {
	Name        string
	Description string
	Seed        uint64
	// Start is where the time series begins (0 for synthetic traffic);
	// Duration the end of the traffic: arrivals at or after Start+Duration
	// are not sent. Releases of delayed requests after it still count.
	// Duration 0 means the traffic runs until its sources end (recorded
	// traces): the series then begins at the first arrival, and retries
	// stop one policy period W after the last first attempt.
	Start    time.Duration
	Duration time.Duration
	// Limit is the scenario's policy, as reported; each Algorithm carries
	// its own (possibly overridden) copy in Params.
	Limit      algorithms.Policy
	Algorithms []Algorithm
	Traffic    traffic.Plan
	// Windows are the peak window lengths; Bucket the series bucket.
	Windows []time.Duration
	Bucket  time.Duration
	// Retries is the client retry policy of each source, by source index;
	// a source without one (or a nil slice) does not retry.
	Retries []traffic.RetryPolicy
	// TopKeys is how many keys each result lists by rejections (default 5).
	TopKeys int
	// KeyGlobs, when set, are patterns (path.Match) of key names: each
	// result totals the requests and rejections of the keys each matches
	// (Result.KeyGroups), for a sweep's goal over some keys only.
	KeyGlobs []string
	// Workers bounds how many algorithms decide at once; 0 means no bound
	// but GOMAXPROCS. (Every algorithm's run reads the same traffic as it
	// is generated, so all of them are under way together.)
	Workers int
	// Observe, when set, returns the observer of algorithm i's decisions
	// (or nil). Each observer is called from one goroutine only.
	Observe func(i int) Observer
	// ObserveStore, when set, returns the observer of the scripts that
	// algorithm i's row runs in the cluster's store (or nil), for a row in
	// central mode: each script as the store executes it, in the store's
	// order, with Time the instant the script was given (the store's
	// clock, or the node's with clock: node), Decided the store's instant
	// and Node the node that sent it. Rows in other modes run no scripts.
	ObserveStore func(i int) Observer
	// Inspect, when set, samples one key's state in every algorithm that
	// can show it (algorithms.Inspector), for charts.
	Inspect *Inspect
	// Explain, when set, asks a cluster row what it saw when it decided
	// one attempt (Result.View).
	Explain *Explain
	// Backend, when set, gives every algorithm row its own copy of this
	// backend with workers (docs/backend.md): what the row admits is served
	// there, its clients time out and retry on what it sheds, times out or
	// fails; nil keeps the backend a pure delay.
	Backend *backend.Config
	// Cluster, when set, runs every algorithm on the cluster's nodes as
	// its Algorithm.Coord says (docs/cluster.md), by Coordinate; nil runs
	// each as one exact limiter.
	Cluster *cluster.Config
	// Coordinate, when set, builds the coordinator of algorithm i's row
	// (package cluster/coord's New, for Cluster), whose engine side is row:
	// each row is then a coordinated row (Coordinator).
	Coordinate func(cfg *Config, i int, row *Row) (Coordinator, error)
	// Progress, when set, is told how far the whole run has got, for a
	// progress bar: each algorithm's run reports every ProgressEvery of its
	// events (arrivals, retries and releases) the virtual time of its next
	// event, and Progress is called, from the reporting run's goroutine and
	// never from two at once, with done = the time every run still going
	// has reached (the slowest one's), whenever that grows: counted from
	// Start and at most Duration, and total = Duration. Without a duration
	// (recorded traces) total is 0 and done counts from the first arrival.
	// Successive calls increase done. Progress must return quickly; it
	// cannot change the run.
	Progress func(done, total time.Duration)

	// board joins the runs' progress reports for Progress (set by Run)
	board *progressBoard
	// Baseline, when set, is the label of the row every other row is held
	// against (docs/accuracy.md): each other result gains Baseline.
	Baseline string
	// Check, when set, holds every row against what the gateway logged
	// (docs/replay.md, replay --check-field): each result gains Check.
	Check *Check
}

// ProgressEvery is how many events of a run pass between two calls of
// Config.Progress.
const ProgressEvery = 1 << 16

// Inspect asks for the state of Key every Every, from the start of the
// series to the end of the run. Past MaxSeriesBuckets samples the interval
// doubles (every other sample is dropped).
type Inspect struct {
	Key   string
	Every time.Duration
}

// Algorithm is one row of the comparison.
type Algorithm struct {
	Name   string
	Label  string
	Params algorithms.Params
	// Set is the options and overrides as written, reported as "params".
	Set map[string]any
	// New, when set, builds the limiter instead of the registry (for
	// tests and for limiters that are not in the registry).
	New func() (algorithms.Limiter, error)
	// Coord is how the row coordinates on Config.Cluster.
	Coord cluster.Coordination
	// Route, when not 0, is the route whose requests the row takes
	// (traffic.Arrival.Route): a gateway's location, route or router. The
	// row decides and counts only those; its offered figures and key
	// counts are its own. 0 takes every request.
	Route uint16
	// Routes, when set, are the other routes whose requests the row takes
	// besides Route: a limit whose state several routes share (an nginx
	// zone named by several locations). A limiter that is an
	// algorithms.RouteDecider then decides each by its route's rule.
	Routes []uint16
}

// Run runs every algorithm of cfg and returns the report, results in the
// order of cfg.Algorithms.
//
// The traffic is read once (see feed): the calling goroutine generates it
// in batches that every algorithm's run reads in turn, each run on its own
// goroutine with its own limiter, retries and event queue (GOMAXPROCS of
// them deciding at once, or cfg.Workers).
func Run(cfg Config) (*Report, error) {
	return runWith(cfg, feedShape{batchArrivals, ringBatches})
}

// runWith is Run with the feed's ring of shape rg.
func runWith(cfg Config, rg feedShape) (*Report, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	n := len(cfg.Algorithms)
	var cmp *baselineCmp
	if cfg.Baseline != "" {
		var err error
		if cmp, err = newBaselineCmp(&cfg, cfg.Baseline); err != nil {
			return nil, err
		}
	}
	errs := make([]error, n)
	if cfg.Progress != nil {
		cfg.board = newProgressBoard(cfg.Progress, n, cfg.Duration)
	}
	rows := make([]reader, n)
	checks := make([]*checkObserver, n)
	var live []reader
	for i := range cfg.Algorithms {
		var obs Observer
		if cfg.Observe != nil {
			obs = cfg.Observe(i)
		}
		if cmp != nil {
			obs = cmp.observer(i, obs)
		}
		if cfg.Check != nil {
			checks[i] = newCheckObserver(cfg.Check, obs)
			for j, m := range cfg.Algorithms[i].Params.Members {
				checks[i].limits = append(checks[i].limits, LimitName(m, j))
			}
			obs = checks[i]
		}
		if rows[i], errs[i] = newRow(&cfg, i, obs); errs[i] == nil {
			live = append(live, rows[i])
		}
	}
	if len(live) == 0 {
		return nil, firstError(errs)
	}
	for i := range errs {
		if errs[i] != nil {
			cfg.board.finished(i) // never runs
		}
	}
	keys, stream, err := cfg.Traffic.Open()
	if err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return nil, firstError(errs)
	}
	f := newFeed(&cfg, keys, stream, len(live), rg)
	var deciding chan struct{} // a token per run deciding, or no bound
	if cfg.Workers > 0 {
		deciding = make(chan struct{}, cfg.Workers)
	}
	var wg sync.WaitGroup
	for j, rd := range live {
		rd.attach(keys, f)
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := rd.base().index
			errs[i] = readFeed(f, j, deciding, rd)
			cfg.board.finished(i)
		}()
	}
	f.produce()
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	var vs []*BaselineResult
	if cmp != nil {
		var err error
		if vs, err = cmp.finish(); err != nil {
			return nil, err
		}
	}
	start, duration := cfg.Start, cfg.Duration
	if duration == 0 {
		// until the traces end: from the first arrival to the last (every
		// run saw the same traffic, or a route of it: the feed's)
		start, duration = f.first, f.last-f.first
	}
	results := make([]Result, n)
	for i, rd := range rows {
		results[i] = rd.report(duration)
		if vs != nil {
			results[i].Baseline = vs[i]
		}
		if checks[i] != nil {
			results[i].Check = checks[i].result()
		}
	}
	return &Report{
		Scenario:    cfg.Name,
		Description: cfg.Description,
		Seed:        cfg.Seed,
		StartNs:     int64(start),
		DurationNs:  int64(duration),
		Limit:       LimitOf(cfg.Limit),
		Keys:        f.nkeys,
		Results:     results,
	}, nil
}

// reserver is a limiter that can size its per-key state for n keys up
// front (the algorithms' optional Reserver): the engine tells it how many
// keys the traffic's sources declared before the first decision.
type reserver interface {
	Reserve(n int)
}

// firstError is the first error of errs, in the algorithms' order.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (cfg *Config) check() error {
	switch {
	case len(cfg.Algorithms) == 0:
		return errors.New("no algorithms to run")
	case cfg.Bucket <= 0:
		return errors.New("report bucket must be > 0")
	case len(cfg.Windows) == 0:
		return errors.New("no report windows")
	case cfg.Cluster != nil && cfg.Coordinate == nil:
		return errors.New("a cluster needs Config.Coordinate (package cluster/coord)")
	}
	for _, v := range cfg.Windows {
		if v <= 0 {
			return fmt.Errorf("report window %v must be > 0", v)
		}
	}
	return nil
}

// run is the state of one algorithm's run.
type run struct {
	cfg   *Config
	index int // in cfg.Algorithms
	alg   *Algorithm
	lim   algorithms.Limiter
	keys  *traffic.Keys // shared by every run, see traffic.Keys
	feed  *feed
	obs   Observer
	dec   Decision // what obs is shown, reused
	// the name of key nameID, the last key obs was shown (a key's name
	// never changes: traffic.Keys)
	named  bool
	nameID uint32
	name   string
	// what is scheduled: retries, and releases of delayed requests (their
	// costs and keys by release instant). Releases at one instant pop in
	// no particular order, the same from run to run: nothing a release
	// counts (peaks, the admitted series, the latest release) depends on
	// it but which of two keys whose key peaks tie at one start is named,
	// and no limiter sees them. The queue takes nothing before the last
	// instant it gave (it would raise it to that), and nothing comes: a
	// release is a decision's instant plus its delay, decisions come in
	// time order, and a release pops once the clock has reached it.
	events   eventQueue
	releases timeq.Queue[delayed]
	// retried is the retry that retrySource.Fire hands to the row's try
	// (held here, rather than allocated once per retry)
	retried traffic.Arrival
	// q orders the events of every source of the row (queue.go): relSrc,
	// retrySrc (-1 when no client retries) and beSrc (-1 without a
	// backend) are its sources' indices, and a cluster's store is one more
	q                       agenda
	relSrc, retrySrc, beSrc int

	res    Result
	delays delayHist
	// the releases to the backend: their key peaks, which count the
	// peaks of every key together too
	keyPeaks  keyPeaks
	attempts  *peakSet // of attempts reaching the limiter, or nil: the feed's
	series    series
	last      time.Duration // latest release
	end       time.Duration // no retry at or after it (0: not known yet)
	first     time.Duration // first first attempt
	lastFresh time.Duration // last first attempt
	started   bool          // a first attempt has come
	rng       *rand.Rand    // jitter
	// decorrelated jitter's draws: a stream per request (reseeded by
	// retry), so that a request's sleeps need no state between retries
	reqPCG  rand.PCG
	reqRand *rand.Rand
	// gates are what hold the retries of the sources' policies back (a
	// retry budget, token bucket or circuit breaker), by source; nil when
	// no policy has one
	gates    []*gates
	retries  bool        // some client retries
	rejected pagedCounts // rejected attempts by key id (first attempts: feed.offered)
	// byKey counts retries and the last admission by key, for
	// Config.KeyGlobs' groups; nil without globs
	byKey    *keyTrack
	watchers []*watcher                  // Config.Inspect's: the limiter's, or a cluster's nodes' or store's
	ahead    [prefetchLen]algorithms.Key // the keys of the next arrivals, for Prefetch
	// be is the row's backend (Config.Backend), or nil; ids counts the
	// first attempts so far, each request's identity in the backend (the
	// same in every row: every row reads the same traffic)
	be *backend.Backend
	// limits is the row's limiter when its limit moves (an adaptive row
	// with a backend), for the backend's limit series; else nil
	limits algorithms.LimitReporter
	// sampler is the row's limiter when it learns from the backend's
	// answers (algorithms.Sampler, with a backend); else nil
	sampler algorithms.Sampler
	ids     uint64
	cur     uint64 // the identity of the request being decided
	// in a cluster, the node that decided the request being decided and
	// its epoch (backend.Request's Node and Epoch); 0 otherwise
	node  int32
	epoch uint32
	// countOnly: the run is a cluster row's reference, of which only the
	// admissions are read; it counts its verdicts and retries its
	// rejections, and keeps no other account (decideCounting)
	countOnly bool

	// byAttrs is the row's limiter when its limits count by different
	// attributes of a request (algorithms.Attributed); attrs is its
	// arguments' buffer, tuples the attribute tuples it has met
	byAttrs algorithms.Attributed
	attrs   []algorithms.Key
	tuples  [][]uint32
	// members is what Decision.MemberKeys reads a byAttrs row's keys
	// from; limitPeaks its limits' busiest keys
	members    *memberRow
	limitPeaks *limitPeaks
	// firer is the row's limiter when it says which of its limits decided
	// each request (an all-of row), fired the counts of Result.Fired
	firer    algorithms.Firer
	fired    []LimitFired
	curFired int // Decision.Fired of the request being decided

	// route is Algorithm.Route: the row takes only that route's first
	// attempts; offered counts them by key id (nil: the feed's count,
	// every row's)
	route   uint16
	routes  []uint16 // Algorithm.Routes
	offered *pagedCounts
	// routed is the row's limiter when it takes several routes and
	// decides by the request's route (Algorithm.Routes)
	routed algorithms.RouteDecider

	// the run's progress report (Config.Progress through its board), and
	// the events so far
	progress func(done, total time.Duration)
	steps    uint64
}

// watcher samples one key's state for Config.Inspect.
type watcher struct {
	in    algorithms.Inspector
	key   string
	every time.Duration
	next  time.Duration // the next sample instant
	init  bool
	state StateSeries
	// room is where the next samples' values go, carved a sample at a
	// time, so that a sample does not allocate a slice of its own
	room []float64
	// id is key's, once the run has interned it (an id never changes)
	id    uint32
	found bool
}

// watcherRoom is how many samples' values a watcher's room holds.
const watcherRoom = 256

// newRun builds the limiter of algorithm i and its run.
func newRun(cfg *Config, i int, obs Observer) (*run, error) {
	alg := &cfg.Algorithms[i]
	lim, err := newLimiter(cfg, alg, alg.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", alg.Label, err)
	}
	r := newRunOf(cfg, i, obs, lim)
	r.retryBy(r.decide)
	return r, nil
}

// newLimiter builds alg's limiter with params p: alg.New's, when set,
// which takes no params, else the registry's with the scenario's seed (the
// adaptive limits' draws), and for concurrency in front of a backend model
// the limiter that learns its completions from it.
func newLimiter(cfg *Config, alg *Algorithm, p algorithms.Params) (algorithms.Limiter, error) {
	if alg.New != nil {
		return alg.New()
	}
	p.Seed = cfg.Seed
	if cfg.Backend != nil && alg.Name == "concurrency" {
		// in front of a backend model, it learns its completions
		return algorithms.NewConcurrencyModel(p)
	}
	return algorithms.New(alg.Name, p)
}

// newRunOf builds the run of algorithm i around lim (nil for a cluster
// row's accounting, whose nodes and store decide).
func newRunOf(cfg *Config, i int, obs Observer, lim algorithms.Limiter) *run {
	alg := &cfg.Algorithms[i]
	r := &run{
		cfg: cfg, index: i, alg: alg, lim: lim, obs: obs,
		delays: newDelayHist(),
		series: newSeries(cfg.Bucket, cfg.Start-cfg.Start%cfg.Bucket),
	}
	r.keyPeaks = newKeyPeaks(cfg.Windows)
	if r.retries = retries(cfg.Retries); r.retries {
		// else every run's attempts are the first attempts: the feed's
		attempts := newPeakSet(cfg.Windows)
		r.attempts = &attempts
		for i, p := range cfg.Retries {
			if g := newGates(p); g != nil {
				if r.gates == nil {
					r.gates = make([]*gates, len(cfg.Retries))
				}
				r.gates[i] = g
			}
			if p.Jitter == "decorrelated" && r.reqRand == nil {
				r.reqRand = rand.New(&r.reqPCG)
			}
		}
	}
	if len(cfg.KeyGlobs) > 0 {
		r.byKey = &keyTrack{}
	}
	if cfg.Duration > 0 {
		r.end = cfg.Start + cfg.Duration
	}
	// the same jitter stream for every algorithm of a scenario and seed
	r.rng = rand.New(rand.NewPCG(cfg.Seed, 0x6a09e667f3bcc909))
	r.progress = cfg.board.reporter(i)
	if alg.Route != 0 {
		// the row's own traffic: its own offered figures
		r.route, r.routes, r.offered = alg.Route, alg.Routes, &pagedCounts{}
		if rd, ok := lim.(algorithms.RouteDecider); ok && len(alg.Routes) > 0 {
			r.routed = rd
		}
		if r.attempts == nil {
			attempts := newPeakSet(cfg.Windows)
			r.attempts = &attempts
		}
	}
	if at, ok := lim.(algorithms.Attributed); ok && at.ByAttributes() {
		r.byAttrs = at
		r.members = &memberRow{}
		for _, m := range alg.Params.Members {
			r.members.by = append(r.members.by, m.By)
		}
		r.limitPeaks = newLimitPeaks(alg.Params.Members)
	}
	if f, ok := lim.(algorithms.Firer); ok {
		r.firer = f
		for j, m := range alg.Params.Members {
			r.fired = append(r.fired, LimitFired{Limit: LimitName(m, j)})
		}
	}
	if in, ok := lim.(algorithms.Inspector); ok && cfg.Inspect != nil && cfg.Inspect.Every > 0 {
		r.watchers = []*watcher{{in: in, key: cfg.Inspect.Key, every: cfg.Inspect.Every,
			state: StateSeries{Key: cfg.Inspect.Key}}}
	}
	r.q = newAgenda()
	r.relSrc, r.retrySrc, r.beSrc = r.q.add(releaseSource{r}), -1, -1
	return r
}

// retryBy makes try take the row's retries (the run's own decide, or a
// cluster's balancer), when its clients retry.
func (r *run) retryBy(try func(a *traffic.Arrival, attempt int) error) {
	if r.retries {
		r.retrySrc = r.q.add(retrySource{r, try})
	}
}

// newRow builds the row of algorithm i, shown to obs: a coordinated row
// (cfg.Coordinate), else a run of one limiter.
func newRow(cfg *Config, i int, obs Observer) (reader, error) {
	if cfg.Coordinate != nil {
		c, err := newCoordRow(cfg, i, obs)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	r, err := newRun(cfg, i, obs)
	if err != nil {
		return nil, err
	}
	if cfg.Backend != nil && cfg.Duration > 0 {
		// a trace's at its first arrival (run.fresh)
		if err := r.newBackend(0, cfg.Start); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// reader is one row's run as a reader of the feed: it decides each batch
// of first attempts in turn, then finishes what is scheduled.
type reader interface {
	// attach gives the row the run's keys and feed, before the first
	// batch: its limiters name the keys through keys, and size their
	// state for the keys the sources declared (ranges; a trace's come
	// later).
	attach(keys *traffic.Keys, f *feed)
	// decideBatch decides batch.
	decideBatch(batch []traffic.Arrival) error
	finish() error
	// base is the run that holds the row's accounting.
	base() *run
	// report is the row's result once it has finished, the report
	// spanning span.
	report(span time.Duration) Result
}

// readFeed runs rd over the feed's batches as reader j, holding a token of
// deciding while it decides, and returns the run's error: its own (an
// observer's or the limiter's), else the traffic's.
func readFeed(f *feed, j int, deciding chan struct{}, rd reader) error {
	var err error
	for b := 0; ; b++ {
		batch, ok := f.next(b)
		if !ok {
			break
		}
		if err == nil {
			if deciding != nil {
				deciding <- struct{}{}
			}
			err = rd.decideBatch(batch)
			if deciding != nil {
				<-deciding
			}
		}
		// a run that failed reads on, so as not to hold the others up
		f.done(j, b)
	}
	if err != nil {
		return err
	}
	if deciding != nil {
		deciding <- struct{}{}
		defer func() { <-deciding }()
	}
	return rd.finish()
}

func (r *run) base() *run { return r }

func (r *run) attach(keys *traffic.Keys, f *feed) {
	r.keys, r.feed = keys, f
	if r.members != nil {
		r.members.keys = keys
	}
	if kn, ok := r.lim.(algorithms.KeyNamer); ok {
		kn.NameKeys(func(k algorithms.Key) string { return keys.Name(uint32(k)) })
	}
	if n := keys.Len(); n > 0 {
		if rs, ok := r.lim.(reserver); ok {
			rs.Reserve(n)
		}
		if !r.countOnly {
			r.rejected.reserve(n)
			r.keyPeaks.reserve(n)
		}
	}
}

func (r *run) report(time.Duration) Result { return r.result() }

// decideBatch decides a batch of first attempts. A limiter that is an
// algorithms.Prefetcher is told of the keys of each chunk of prefetchLen
// arrivals one chunk ahead of deciding them, so that their state is fetched
// from memory while the chunk before is decided.
func (r *run) decideBatch(batch []traffic.Arrival) error {
	pf, _ := r.lim.(algorithms.Prefetcher)
	if pf != nil && len(batch) > 0 {
		r.prefetch(pf, batch)
	}
	for c := 0; c < len(batch); c += prefetchLen {
		if pf != nil && c+prefetchLen < len(batch) {
			// one chunk ahead of the decisions: its lines
			// arrive while this chunk is decided
			r.prefetch(pf, batch[c+prefetchLen:])
		}
		chunk := batch[c:min(c+prefetchLen, len(batch))]
		for i := range chunk {
			if r.route != 0 && chunk[i].Route != r.route && !r.takesToo(chunk[i].Route) {
				continue // another route's
			}
			if err := r.fresh(&chunk[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// takesToo says that route is one of the row's other routes
// (Algorithm.Routes).
func (r *run) takesToo(route uint16) bool {
	for _, o := range r.routes {
		if o == route {
			return true
		}
	}
	return false
}

// finish ends the run once the traffic has: the events scheduled still
// happen (as when each run read its own stream), then a stream's error
// ends the run.
func (r *run) finish() error {
	if err := r.drain(); err != nil {
		return err
	}
	if r.feed.err != nil {
		return r.feed.err
	}
	r.sampleEnd()
	return nil
}

// sampleEnd samples the watched key up to the end of the run.
func (r *run) sampleEnd() {
	end := r.cfg.Start + r.cfg.Duration
	if r.cfg.Duration == 0 {
		end = r.lastFresh
	}
	for _, w := range r.watchers {
		w.sampleUntil(max(end, r.last), r)
	}
}

// prefetch tells pf of the keys of the first prefetchLen arrivals of as.
func (r *run) prefetch(pf algorithms.Prefetcher, as []traffic.Arrival) {
	chunk := as[:min(prefetchLen, len(as))]
	for j := range chunk {
		r.ahead[j] = algorithms.Key(chunk[j].Key)
	}
	pf.Prefetch(r.ahead[:len(chunk)], chunk[len(chunk)-1].At)
}

// fresh takes the next first attempt a: the scheduled events before it, in
// time order, then a.
func (r *run) fresh(a *traffic.Arrival) error {
	if !r.started {
		r.started, r.first = true, a.At
		if r.cfg.Duration == 0 {
			r.series.setStart(a.At - a.At%r.series.bucket)
			if r.cfg.Backend != nil { // a cluster's reference has its own too
				if err := r.newBackend(a.At, a.At-a.At%r.series.bucket); err != nil {
					return err
				}
			}
		}
	}
	r.lastFresh = a.At
	if !r.quiet(a.At) {
		if err := r.until(a.At, classArrival); err != nil {
			return err
		}
	}
	r.cur = r.ids
	r.ids++
	return r.decide(a, 1)
}

// scheduled reports whether a release or a retry is scheduled, and the
// instant of the earliest if so.
func (r *run) scheduled() (time.Duration, bool) {
	at := r.q.heads[r.relSrc].at
	if r.retrySrc >= 0 {
		at = min(at, r.q.heads[r.retrySrc].at)
	}
	return at, at != noHead.at
}

// drain ends the traffic: the events still scheduled, in time order.
func (r *run) drain() error {
	if r.end == 0 {
		r.end = r.lastFresh + r.cfg.Limit.Per
	}
	return r.until(math.MaxInt64, 0)
}

// step comes before each event when the run reports its progress: every
// ProgressEvery events, the instant of the next (the first attempt at
// fresh when have, or the next scheduled event if earlier).
func (r *run) step(have bool, fresh time.Duration) {
	if r.steps++; r.steps%ProgressEvery == 0 {
		r.reportProgress(have, fresh)
	}
}

// nextRetry takes the next scheduled retry off the queue: its attempt and
// the attempt's number, or false when it falls at or after the end of the
// run (it was scheduled before the end of the traffic was known), and the
// client gives up.
func (r *run) nextRetry() (traffic.Arrival, int, bool) {
	ev := r.events.pop()
	r.cur = ev.id
	if r.end != 0 && ev.at >= r.end {
		r.res.GaveUp++
		return traffic.Arrival{}, 0, false
	}
	return traffic.Arrival{At: ev.at, Key: ev.key, Cost: ev.cost, Source: ev.source, Attrs: ev.attrs}, int(ev.attempt), true
}

// reportProgress reports to the board (Config.Progress) the instant of the next event:
// the next first attempt (when have) or the next scheduled event.
func (r *run) reportProgress(have bool, fresh time.Duration) {
	t := fresh
	if next, ok := r.scheduled(); ok && (!have || next < t) {
		t = next
	}
	from := r.cfg.Start
	if r.cfg.Duration == 0 {
		from = r.first
	}
	done := max(t-from, 0)
	if r.cfg.Duration > 0 {
		done = min(done, r.cfg.Duration)
	}
	r.progress(done, r.cfg.Duration)
}

// sampleUntil samples w's key at every sample instant up to and including
// t, from the start of r's series once its first attempt has come.
func (w *watcher) sampleUntil(t time.Duration, r *run) {
	if !w.init {
		if !r.started {
			return
		}
		w.init = true
		w.next = r.series.start
	}
	for w.next <= t {
		if !w.found {
			w.id, w.found = r.keys.Lookup(w.key)
		}
		id := w.id
		if !w.found {
			id = uint32(r.keys.Len()) // a key not seen yet is fresh
		}
		gauges := w.in.Inspect(w.next, algorithms.Key(id))
		if w.state.Names == nil {
			for _, g := range gauges {
				w.state.Names = append(w.state.Names, g.Name)
			}
		}
		n := len(gauges)
		if len(w.room) < n {
			w.room = make([]float64, n*watcherRoom)
		}
		vals := w.room[:n:n]
		w.room = w.room[n:]
		if n == 0 {
			vals = []float64{} // as a sample of no gauge always was
		}
		for i, g := range gauges {
			vals[i] = g.Value
		}
		m := len(w.state.TimesNs)
		w.state.TimesNs = lengthen(w.state.TimesNs, m+1)
		w.state.Values = lengthen(w.state.Values, m+1)
		w.state.TimesNs[m], w.state.Values[m] = int64(w.next), vals
		if len(w.state.TimesNs) >= MaxSeriesBuckets {
			// keep every other sample and sample half as often
			n := 0
			for i := 0; i < len(w.state.TimesNs); i += 2 {
				w.state.TimesNs[n], w.state.Values[n] = w.state.TimesNs[i], w.state.Values[i]
				n++
			}
			w.state.TimesNs, w.state.Values = w.state.TimesNs[:n], w.state.Values[:n]
			w.every *= 2
			w.next = time.Duration(w.state.TimesNs[n-1])
		}
		w.next += w.every
	}
}

// decide puts one attempt to the limiter and accounts for its verdict.
func (r *run) decide(a *traffic.Arrival, attempt int) error {
	var d algorithms.Decision
	if r.byAttrs != nil {
		d = r.decideByAttrs(a)
	} else if r.routed != nil {
		d = r.routed.DecideRoute(a.At, algorithms.Key(a.Key), a.Cost, a.Route)
	} else {
		d = r.lim.Decide(a.At, algorithms.Key(a.Key), a.Cost)
	}
	if r.limits != nil {
		r.limitAt(a.At)
	}
	if r.countOnly {
		return r.count(a, attempt, d)
	}
	if r.firer != nil {
		r.curFired = r.blame(d)
	}
	if r.obs != nil {
		if err := r.observe(a, attempt, d); err != nil {
			return err
		}
	}
	row := r.series.row(a.At) // the counts of a.At's bucket
	r.arrived(a, attempt, row)
	return r.verdict(a, attempt, d, a.At, row)
}

// count is decide's accounting for a run that only counts (countOnly): the
// attempt and its verdict in res, and a rejection's retry, which the
// admissions of later attempts depend on. A delayed request is counted
// when it is decided; its release, which only the backend's figures read,
// is not scheduled. With a backend (a cluster's reference in front of its
// own copy of it), what it admits is submitted there, as decide does:
// its limiter's samples and its clients' retries depend on it.
func (r *run) count(a *traffic.Arrival, attempt int, d algorithms.Decision) error {
	r.res.Attempts++
	if attempt == 1 {
		r.res.Offered++
	}
	switch d.Verdict {
	case algorithms.Accept, algorithms.Delay:
		if d.Verdict == algorithms.Accept {
			r.res.Accepted++
		} else {
			r.res.Delayed++
		}
		if r.be != nil {
			admitted := a.At
			if d.Verdict == algorithms.Delay {
				admitted += d.Delay
			}
			return r.submit(a, attempt, admitted, 0)
		}
		if r.gates != nil {
			r.succeeded(a.Source, a.Key, a.At)
		}
	case algorithms.Reject:
		r.res.Rejected++
		if r.retries {
			r.retry(a, r.cur, attempt, a.At, d.RetryAfter, traffic.CauseReject)
		} else {
			r.res.GaveUp++
		}
	default:
		return unknownVerdict(d.Verdict)
	}
	return nil
}

// arrived accounts for an attempt reaching the limiter at a.At, before its
// verdict; row is a.At's bucket. Attempts come in time order.
func (r *run) arrived(a *traffic.Arrival, attempt int, row *[5]int64) {
	r.res.Attempts++
	row[colAttempts]++
	if r.attempts != nil {
		r.attempts.add(a.At, a.Cost)
	}
	if attempt == 1 {
		r.res.Offered++
		row[colOffered]++
		if r.offered != nil {
			r.offered.inc(a.Key)
		}
	} else if r.byKey != nil {
		r.byKey.retried.inc(a.Key)
	}
}

// verdict accounts for the verdict d on an attempt that arrived at a.At,
// which took effect at decided (>= a.At; a.At but in a cluster, where it
// waits for the store): an admitted request is released at decided (plus
// its delay), a rejected one retried from decided. row is a.At's bucket.
// Verdicts come in order of decided.
func (r *run) verdict(a *traffic.Arrival, attempt int, d algorithms.Decision, decided time.Duration, row *[5]int64) error {
	switch d.Verdict {
	case algorithms.Accept:
		r.res.Accepted++
		r.delays.addZero()
		r.keyPeaks.add(decided, algorithms.GrantedOf(d, a.Cost), a.Key) // a partial admission counts what it was granted
		if r.limitPeaks != nil {
			r.limitPeaks.add(decided, algorithms.GrantedOf(d, a.Cost), a.Key, r.tuples[a.Attrs])
		}
		row[colAdmitted]++
		r.last = max(r.last, decided)
		if r.byKey != nil {
			r.byKey.admitted(a.Key, decided)
		}
		if r.be != nil || r.gates != nil {
			return r.admitted(a, attempt, decided, decided-a.At)
		}
	case algorithms.Delay:
		r.res.Delayed++
		r.delays.add(d.Delay)
		row[colDelayed]++
		r.releases.Push(decided+d.Delay, delayed{algorithms.GrantedOf(d, a.Cost), a.Key, a.Attrs})
		r.q.wake(r.relSrc, decided+d.Delay, classRelease)
		if r.byKey != nil {
			r.byKey.admitted(a.Key, decided+d.Delay)
		}
		if r.be != nil || r.gates != nil {
			return r.admitted(a, attempt, decided+d.Delay, decided-a.At)
		}
	case algorithms.Reject:
		r.res.Rejected++
		row[colRejected]++
		r.rejected.inc(a.Key)
		if r.retries {
			r.retry(a, r.cur, attempt, decided, d.RetryAfter, traffic.CauseReject)
		} else {
			r.res.GaveUp++
		}
	default:
		return unknownVerdict(d.Verdict)
	}
	return nil
}

// admitted is what an admission does besides verdict's accounting, with a
// backend or retry gates (apart, so that the plain run's verdict stays
// small enough to inline): the request, admitted at admitted with its
// verdict gate after its arrival, is submitted to the backend, else it is
// a success, at its verdict, for its client's retry gates.
func (r *run) admitted(a *traffic.Arrival, attempt int, admitted, gate time.Duration) error {
	if r.be != nil {
		return r.submit(a, attempt, admitted, gate)
	}
	r.succeeded(a.Source, a.Key, a.At+gate)
	return nil
}

// unknownVerdict is the error of a limiter that returned verdict v.
func unknownVerdict(v algorithms.Verdict) error {
	return fmt.Errorf("limiter returned unknown verdict %d", v)
}

// observe shows a decision to the observer, which may stop observing.
func (r *run) observe(a *traffic.Arrival, attempt int, d algorithms.Decision) error {
	if !r.named || a.Key != r.nameID {
		r.named, r.nameID, r.name = true, a.Key, r.keys.Name(a.Key)
	}
	r.dec = Decision{Time: a.At, Key: r.name, Cost: a.Cost, Attempt: attempt, Decision: d, Node: -1, Decided: a.At, Logged: a.Logged, Fired: r.curFired, Route: a.Route}
	if r.members != nil {
		r.dec.MemberKeys = MemberKeys{row: r.members, key: a.Key, attrs: a.Attrs}
	}
	err := r.obs.Observe(&r.dec)
	if errors.Is(err, ErrStopObserving) {
		r.obs = nil
		return nil
	}
	return err
}

// retry schedules the next attempt of request id, whose attempt a ended
// for cause at from (a rejection with its retry_after, or, with a backend,
// a shed, a timeout or an error), when its client's policy retries on that
// cause. It counts the request as given up when it is not retried after a
// rejection, or when its policy would retry but it has run out of attempts
// or of time, or its client's retry gates (a budget, token bucket or
// breaker) hold the retry back; a shed, timeout or error that the policy
// does not retry on just ends the request.
func (r *run) retry(a *traffic.Arrival, id uint64, attempt int, from, retryAfter time.Duration, cause traffic.Cause) {
	g := r.gate(a.Source)
	if g != nil {
		g.fail(a.Key, from)
	}
	if int(a.Source) >= len(r.cfg.Retries) || !r.cfg.Retries[a.Source].On.Retries(cause) {
		if cause == traffic.CauseReject {
			r.res.GaveUp++
		}
		return
	}
	p := &r.cfg.Retries[a.Source]
	if g != nil && g.budget != nil && !g.budget.Allows(a.Key) {
		r.res.GaveUp++
		r.res.RetriesThrottled++
		return
	}
	rng := r.rng
	if r.reqRand != nil && p.Jitter == "decorrelated" {
		r.reqPCG.Seed(r.cfg.Seed, id^decorrelatedStream)
		rng = r.reqRand
	}
	if wait, ok := p.Wait(attempt, retryAfter, rng); ok {
		at := from + wait
		if at >= from && (r.end == 0 || at < r.end) && attempt < math.MaxInt32 {
			if g != nil && !g.allows(a.Key, from) {
				// a retry the policy would make, held back
				r.res.GaveUp++
				r.res.RetriesThrottled++
				return
			}
			r.events.push(event{at: at, id: id, cost: a.Cost, key: a.Key,
				source: a.Source, attempt: int32(attempt + 1), attrs: a.Attrs})
			r.q.wake(r.retrySrc, at, classRetry)
			if g != nil {
				g.sent(a.Key)
			}
			return
		}
	}
	r.res.GaveUp++
}

// decorrelatedStream tells a request's decorrelated jitter draws apart
// from the other streams of the scenario's seed.
const decorrelatedStream = 0x3c6ef372fe94f82b

// gate is the retry gates of source's policy, or nil.
func (r *run) gate(source int32) *gates {
	if r.gates == nil || int(source) >= len(r.gates) {
		return nil
	}
	return r.gates[source]
}

// succeeded gives an attempt's success at at to its client's retry gates:
// an admission when there is no backend to answer, else the backend's
// answer in time.
func (r *run) succeeded(source int32, key uint32, at time.Duration) {
	if g := r.gate(source); g != nil {
		g.succeed(key, at)
	}
}

// gates hold one policy's retries back: a retry budget
// (traffic.RetryBudget), a retry token bucket (traffic.RetryTokens) and a
// circuit breaker (traffic.RetryBreaker), each per client (key), any of
// them unset. A retry is sent only when all that are set allow it.
type gates struct {
	budget  *traffic.Budgets
	tokens  *traffic.TokenBuckets
	breaker *traffic.Breakers
}

// newGates returns p's gates, nil when it has none.
func newGates(p traffic.RetryPolicy) *gates {
	g := gates{traffic.NewBudgets(p.Budget), traffic.NewTokenBuckets(p.Tokens), traffic.NewBreakers(p.Breaker)}
	if g.budget == nil && g.tokens == nil && g.breaker == nil {
		return nil
	}
	return &g
}

// fail counts an attempt of key that failed at at.
func (g *gates) fail(key uint32, at time.Duration) {
	if g.budget != nil {
		g.budget.Fail(key)
	}
	if g.breaker != nil {
		g.breaker.Outcome(key, at, true)
	}
}

// succeed counts an attempt of key that succeeded at at.
func (g *gates) succeed(key uint32, at time.Duration) {
	if g.budget != nil {
		g.budget.Succeed(key)
	}
	if g.tokens != nil {
		g.tokens.Succeed(key)
	}
	if g.breaker != nil {
		g.breaker.Outcome(key, at, false)
	}
}

// allows reports whether the token bucket and the breaker let key retry
// at at. (A retry budget is asked before the policy, as gRPC does: a
// request out of attempts and of budget counts as throttled; the others
// hold back only a retry the policy would make.)
func (g *gates) allows(key uint32, at time.Duration) bool {
	return (g.tokens == nil || g.tokens.Allows(key)) &&
		(g.breaker == nil || g.breaker.Allows(key, at))
}

// sent takes a retry's tokens from key's bucket: the retry is scheduled.
func (g *gates) sent(key uint32) {
	if g.tokens != nil {
		g.tokens.Spend(key)
	}
}

// delayed is a delayed request waiting for its release: its cost and key.
type delayed struct {
	cost  int64
	key   uint32
	attrs uint32 // the request's attribute tuple (traffic.Arrival.Attrs)
}

// release sends a delayed request to the backend at at (decide does it for
// an accepted one).
func (r *run) release(at time.Duration, d delayed) {
	r.keyPeaks.add(at, d.cost, d.key)
	if r.limitPeaks != nil {
		r.limitPeaks.add(at, d.cost, d.key, r.tuples[d.attrs])
	}
	r.series.add(at, colAdmitted)
	r.last = max(r.last, at)
}

// keyReport counts the keys that were rejected at all and lists the top
// ones by rejections (then by offered requests, then by name).
func (r *run) keyReport() KeyReport {
	n := r.cfg.TopKeys
	if n <= 0 {
		n = DefaultTopKeys
	}
	var rep KeyReport
	var top []int // key ids, kept sorted, at most n
	offered := r.offeredBy
	better := func(a, b int) bool {
		if ra, rb := r.rejected.get(uint32(a)), r.rejected.get(uint32(b)); ra != rb {
			return ra > rb
		}
		if oa, ob := offered(a), offered(b); oa != ob {
			return oa > ob
		}
		return r.keys.Name(uint32(a)) < r.keys.Name(uint32(b))
	}
	for id := range r.rejected.nonZero() {
		rep.Limited++
		if len(top) == n && !better(id, top[n-1]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return better(id, top[i]) })
		if len(top) < n {
			top = append(top, 0)
		}
		copy(top[i+1:], top[i:len(top)-1])
		top[i] = id
	}
	rep.Top = make([]KeyCount, len(top))
	for i, id := range top {
		rep.Top[i] = KeyCount{Key: r.keys.Name(uint32(id)), Offered: offered(id), Rejected: r.rejected.get(uint32(id))}
	}
	return rep
}

// offeredBy is how many first attempts key id sent the row.
func (r *run) offeredBy(id int) int64 {
	if r.offered != nil {
		return r.offered.get(uint32(id))
	}
	if id < len(r.feed.offered) {
		return r.feed.offered[id]
	}
	return 0
}

// blame counts the limit that decided d (Result.Fired) and returns 1 +
// its index, 0 when none did.
func (r *run) blame(d algorithms.Decision) int {
	j := r.firer.Fired()
	if j < 0 || j >= len(r.fired) {
		return 0
	}
	switch d.Verdict {
	case algorithms.Reject:
		r.fired[j].Rejected++
	case algorithms.Delay:
		r.fired[j].Delayed++
	}
	return j + 1
}

func (r *run) result() Result {
	res := r.res
	res.Fired = r.fired
	res.Algorithm = r.alg.Name
	res.Label = r.alg.Label
	res.Params = r.alg.Set
	if res.Params == nil {
		res.Params = map[string]any{}
	}
	res.Limit = LimitOf(r.alg.Params.Policy)
	res.DelayNs = r.delays.percentiles()
	res.Delays = r.delays.distribution()
	if r.lim != nil && r.watchers != nil { // a cluster row's are its nodes' or its store's
		res.State = &r.watchers[0].state
	}
	p := r.alg.Params.Policy
	res.KeyPeaks, res.Peaks = r.keyPeaks.peaks(p, r.keys.Name)
	if r.limitPeaks != nil {
		res.LimitPeaks = r.limitPeaks.report(r.keys)
	}
	if r.attempts == nil {
		res.AttemptPeaks = r.feed.attempts.peaks(p)
	} else {
		res.AttemptPeaks = r.attempts.peaks(p)
	}
	res.Keys = r.keyReport()
	res.KeyGroups = r.keyGroups()
	if r.lim != nil { // a cluster row's memory is the cluster's
		m := r.lim.Memory()
		res.Memory = Memory{BytesPerKeyMax: m.BytesPerKeyMax, KeysPeak: m.KeysPeak, BytesPeak: m.BytesPeak}
		if z, ok := r.lim.(algorithms.ZoneCounter); ok {
			ev, ref := z.ZoneCounts()
			res.ZoneEvictions, res.ZoneRefusals = &ev, &ref
		}
	}
	end := r.cfg.Start + r.cfg.Duration
	if r.cfg.Duration == 0 {
		end = r.lastFresh + 1
	}
	res.Series = r.series.result(max(end, r.last+1))
	if r.be != nil {
		res.Backend = r.backendResult(end)
	}
	return res
}

// keyGroups totals, for each of Config.KeyGlobs, the first attempts, all
// attempts and the rejected attempts of the keys whose names it matches,
// and finds their last admission.
func (r *run) keyGroups() []KeyGroup {
	if len(r.cfg.KeyGlobs) == 0 {
		return nil
	}
	gs := make([]KeyGroup, len(r.cfg.KeyGlobs))
	for i, g := range r.cfg.KeyGlobs {
		gs[i].Glob = g
	}
	for id := range r.keys.Len() {
		name := r.keys.Name(uint32(id))
		for i, g := range r.cfg.KeyGlobs {
			if ok, _ := path.Match(g, name); ok {
				gs[i].Keys++
				offered := r.offeredBy(id)
				gs[i].Offered += offered
				gs[i].Attempts += offered
				gs[i].Rejected += r.rejected.get(uint32(id))
				gs[i].Attempts += r.byKey.retried.get(uint32(id))
				if id < len(r.byKey.last) && r.byKey.last[id] > 0 {
					gs[i].LastAdmitted = max(gs[i].LastAdmitted, r.byKey.last[id]-1-r.cfg.Start)
					gs[i].Admitted = true
				}
			}
		}
	}
	return gs
}

// keyTrack is what a run counts by key for Config.KeyGlobs besides its
// rejections: the attempts after the first, and the last admission
// (released at, plus 1: 0 is none).
type keyTrack struct {
	retried pagedCounts
	last    []time.Duration
}

// admitted records an admission of key released at at.
func (k *keyTrack) admitted(key uint32, at time.Duration) {
	if int(key) >= len(k.last) {
		k.last = append(k.last, make([]time.Duration, int(key)+1-len(k.last))...)
	}
	k.last[key] = max(k.last[key], at+1)
}

// prefetchLen is how many arrivals a run prepares its limiter for at once
// (algorithms.Prefetcher).
const prefetchLen = 32
