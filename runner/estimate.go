package runner

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/human"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// Estimate is the size of a run, worked out from its scenario before it
// starts (docs/commands.md, "Budgets"): its sources' rates and durations,
// its clients' retry policies, its rows and its cluster. Figures are
// exact where the traffic is (Accuracy), else an upper bound (a Poisson
// source's count, a retry policy's most attempts) or, for a trace, about
// its size over the length of its first lines. traffic.Unbounded stands
// for no bound.
type Estimate struct {
	// Requests are the first attempts; Retries the most further attempts
	// the clients' retry policies allow them (RetryBound says why).
	Requests, Retries int64
	// Accuracy is that of Requests and Keys.
	Accuracy traffic.Accuracy
	// KeysAccuracy is that of Keys: a bound when sources may share keys.
	KeysAccuracy traffic.Accuracy
	RetryBound   string
	// Rows are the algorithm rows; Runs the limiters each request goes
	// through, a cluster row's exact reference counted beside it.
	Rows, Runs int
	// StoreOps are the most operations a cluster's rows send to its store.
	StoreOps int64
	// Work is what a run decides: every attempt in every run, and the
	// store's operations. The request budget counts it.
	Work int64
	// Keys are the keys the traffic goes to (at most).
	Keys int64
	// Window is the longest peak window (report.windows); Instants the
	// most distinct instants of attempts in any such window; Entries
	// the most entries the peaks of offered traffic hold for them, one
	// an instant or, for evenly spaced instants of one source, one a run
	// of them (docs/metrics.md, "Peaks"); PeakBytes their memory.
	Window    time.Duration
	Instants  int64
	Entries   int64
	PeakBytes int64
	// Memory is the run's memory, about: PeakBytes, the keys' state in
	// every run (KeyBytes), what grows with the attempts of the longest
	// window (WindowBytes: the key peaks' releases, a sliding log's
	// entries) and the retries waiting at once in every run (RetryBytes),
	// over a fixed base.
	Memory, KeyBytes, WindowBytes, RetryBytes int64
}

// The memory model of an estimate, from the engine's measured figures
// (BENCHMARKS.md, "How the engine grows with the keys": 10M keys over
// nine rows peaked at 2,137 MiB, 224 bytes a key; 1M keys at 312 MiB).
// Each figure errs above the measured one.
const (
	// baseBytes is a run's memory before its keys: the runtime, the
	// traffic's ring of batches, the report.
	baseBytes = 32 << 20
	// keyBytes is a key's name and id in the key space and its offered
	// count, shared by the runs; runKeyBytes a key's state in one run
	// (the limiter's, its totals of the report and the key peaks).
	keyBytes    = 64
	runKeyBytes = 32
	// releaseBytes is an entry of the key peaks (one per release of the
	// longest window, sim/keypeaks.go) and of a sliding log.
	releaseBytes = 16
	// retryBytes is a retry waiting in a run's queue of events: the
	// request (about 48 bytes) in a slice that may be twice its length.
	retryBytes = 96
)

// EstimateOf works out the size of a run of sc as it stands (the
// algorithms kept, see Run). A trace is opened to measure its size and
// first lines; its error is returned.
func EstimateOf(sc *scenarios.Scenario) (*Estimate, error) {
	e := &Estimate{Rows: len(sc.Algorithms)}
	for _, w := range sc.Windows {
		e.Window = max(e.Window, w)
	}
	if e.Window == 0 {
		e.Window = sc.Limit.Per
	}
	var all traffic.Size
	var retryWindow, pending int64
	var reasons []string
	for i, src := range sc.Traffic.Sources {
		s, err := traffic.SizeOf(src, sc.Duration, e.Window)
		if err != nil {
			return nil, err
		}
		all = all.Add(s, e.Window)
		var p traffic.RetryPolicy
		if i < len(sc.Retries) {
			p = sc.Retries[i]
		}
		more, why := retriesPer(p, sc.Duration)
		if more > 0 {
			e.Retries = satAdd(e.Retries, satMul(s.Requests, more))
			// a window's retries come from the first attempts of the
			// window and of as long before it as the waits last; the
			// retries waiting at once, from those of the waits
			inWindow, waiting := s.Window, s.Window
			if spread := waits(p, more); spread > 0 {
				wide, err := traffic.SizeOf(src, sc.Duration, satDuration(e.Window, spread))
				if err != nil {
					return nil, err
				}
				inWindow = wide.Window
				if spread < math.MaxInt64 {
					wide, err = traffic.SizeOf(src, sc.Duration, spread)
					if err != nil {
						return nil, err
					}
				}
				waiting = wide.Window
			}
			retryWindow = satAdd(retryWindow, satMul(inWindow, more))
			pending = satAdd(pending, satMul(waiting, more))
			if !slices.Contains(reasons, why) {
				reasons = append(reasons, why)
			}
		}
	}
	e.RetryBound = strings.Join(reasons, "; ")
	e.Requests, e.Keys, e.Accuracy, e.KeysAccuracy = all.Requests, all.Keys, all.Accuracy, all.Accuracy
	if len(sc.Traffic.Sources) > 1 {
		e.KeysAccuracy = max(e.KeysAccuracy, traffic.Bound) // names may repeat
	}
	attempts := satAdd(e.Requests, e.Retries)
	window := satAdd(all.Window, retryWindow) // attempts in a window

	// every row decides every attempt; a cluster row also runs its exact
	// reference on the same traffic
	e.Runs = e.Rows
	nodes := int64(1)
	if sc.Cluster != nil {
		e.Runs *= 2
		nodes = int64(max(sc.Cluster.Nodes, 1))
	}
	e.Work = satMul(attempts, int64(e.Runs))
	var runKeys int64 // a key's state, in runs: a node of local/split each
	for _, a := range sc.Algorithms {
		runKeys++
		if sc.Cluster == nil {
			continue
		}
		runKeys++ // the reference
		switch a.Coord.Mode {
		case cluster.Local, cluster.Split:
			runKeys += nodes - 1
		case cluster.Central, cluster.Lease:
			e.StoreOps = satAdd(e.StoreOps, attempts)
		case cluster.Racy:
			e.StoreOps = satAdd(e.StoreOps, satMul(attempts, 2)) // a GET and a SET
		case cluster.Sync:
			// one operation per node per interval at most, whatever the
			// keys: the instants k*S + floor(i*S/N) in the duration
			ops := int64(traffic.Unbounded)
			if sc.Duration > 0 && a.Coord.Sync > 0 {
				ops = int64(sc.Duration/a.Coord.Sync) + 1
			}
			e.StoreOps = satAdd(e.StoreOps, satMul(ops, nodes))
		}
	}
	e.Work = satAdd(e.Work, e.StoreOps)

	// the peaks of attempts hold one entry per distinct instant of the
	// longest window, or per run of evenly spaced ones where the
	// traffic's size knows them (first attempts only): 12 bytes while it
	// is at most 2^32-1 ns and the cost at one instant fits in 32 bits (a
	// window of fewer requests than that, of cost 1), else 24
	// (sim/peaks.go); with retries each run keeps its own
	e.Instants = min(satAdd(all.Instants, retryWindow), window, int64(e.Window))
	e.Entries = e.Instants
	if e.Retries == 0 {
		e.Entries = min(e.Entries, all.Runs)
	}
	entry := int64(12)
	if e.Window > math.MaxUint32 || window > math.MaxUint32 {
		entry = 24
	}
	peakSets := int64(1)
	if e.Retries > 0 {
		peakSets = int64(max(e.Runs, 1))
	}
	e.PeakBytes = satMul(ringBytes(e.Entries, entry), peakSets)
	e.KeyBytes = satMul(e.Keys, satAdd(keyBytes, satMul(runKeys, runKeyBytes)))
	for _, a := range sc.Algorithms {
		// the key peaks' releases of the longest window, and a sliding
		// log's entries, are at most the attempts of the window; a row
		// that holds its keys to its policy releases fewer on few keys
		rel, n := window, int64(1)
		if sc.Cluster != nil {
			n++ // the reference
		} else if per, ok := releasesPerKey(a, e.Window); ok {
			rel = min(rel, satMul(e.Keys, per))
		}
		if a.Name == "sliding-log" {
			n++
		}
		e.WindowBytes = satAdd(e.WindowBytes, satMul(ringBytes(rel, releaseBytes), n))
	}
	// every run keeps its own retries waiting
	e.RetryBytes = satMul(satMul(pending, retryBytes), int64(e.Runs))
	e.Memory = satAdd(satAdd(satAdd(satAdd(baseBytes, e.PeakBytes), e.KeyBytes), e.WindowBytes), e.RetryBytes)
	return e, nil
}

// TrafficEstimateOf is the size of writing sc's traffic (ratesim
// traffic): its first attempts, a line each, which no limiter decides and
// no client retries, and the keys' names, which the traffic's key space
// holds; nothing else grows. Work is the requests written.
func TrafficEstimateOf(sc *scenarios.Scenario) (*Estimate, error) {
	e := &Estimate{}
	var all traffic.Size
	for _, src := range sc.Traffic.Sources {
		s, err := traffic.SizeOf(src, sc.Duration, time.Second) // no window is kept
		if err != nil {
			return nil, err
		}
		all = all.Add(s, time.Second)
	}
	e.Requests, e.Keys, e.Accuracy, e.KeysAccuracy = all.Requests, all.Keys, all.Accuracy, all.Accuracy
	if len(sc.Traffic.Sources) > 1 {
		e.KeysAccuracy = max(e.KeysAccuracy, traffic.Bound) // names may repeat
	}
	e.Work = e.Requests
	e.KeyBytes = satMul(e.Keys, keyBytes)
	e.Memory = satAdd(baseBytes, e.KeyBytes)
	return e, nil
}

// ringBytes is the most memory a ring of sim's peaks takes to hold n
// entries of size bytes (sim/peaks.go, ring): whole chunks of 1024
// entries, a chunk or two spare and the releases stored but not yet
// counted (2048 entries in all), in blocks that double up to 8 MiB, so
// that they hold at most twice what is used, or 8 MiB more.
func ringBytes(n, size int64) int64 {
	used := satMul(satAdd(n, 2*1024), size)
	return satAdd(used, min(used, 8<<20))
}

// releasesPerKey is the most requests a row admits of one key in a
// window of v, for the algorithms that hold every key to their policy
// (docs/algorithms.md): the burst, nginx's own burst, and the rate over
// the window and two more periods (a fixed window admits up to 2L across
// a boundary). Other rows (adaptive, concurrency, none, stepped refills)
// have no such bound.
func releasesPerKey(a scenarios.Algorithm, v time.Duration) (int64, bool) {
	switch a.Name {
	case "fixed-window", "sliding-window", "sliding-log", "token-bucket", "gcra", "leaky-bucket", "nginx", "x-time-rate":
	default:
		return 0, false
	}
	p := a.Params
	if p.Per <= 0 || p.FillInterval > 0 {
		return 0, false
	}
	periods := int64(v/p.Per) + 2
	return satAdd(satAdd(p.Burst, p.NginxBurst), satMul(p.Rate, periods)), true
}

// Add adds the estimate of another run to e, as the total of a sweep's
// points: the requests, decisions and operations summed; the keys, the
// window's instants and the memory the most of one run (the points of a
// sweep do not all run at once).
func (e *Estimate) Add(x *Estimate) {
	e.Requests = satAdd(e.Requests, x.Requests)
	e.Retries = satAdd(e.Retries, x.Retries)
	e.StoreOps = satAdd(e.StoreOps, x.StoreOps)
	e.Work = satAdd(e.Work, x.Work)
	e.Rows += x.Rows
	e.Runs += x.Runs
	e.Accuracy, e.KeysAccuracy = max(e.Accuracy, x.Accuracy), max(e.KeysAccuracy, x.KeysAccuracy)
	if x.RetryBound != "" && !strings.Contains(e.RetryBound, x.RetryBound) {
		e.RetryBound = strings.TrimPrefix(e.RetryBound+"; "+x.RetryBound, "; ")
	}
	e.Keys = max(e.Keys, x.Keys)
	e.Window = max(e.Window, x.Window)
	if x.Memory > e.Memory {
		e.Memory, e.KeyBytes, e.WindowBytes, e.RetryBytes = x.Memory, x.KeyBytes, x.WindowBytes, x.RetryBytes
		e.Instants, e.Entries, e.PeakBytes = x.Instants, x.Entries, x.PeakBytes
	}
}

// waits is the longest a request's retries after the first attempt can
// spread over, more of them under policy p: 0 for immediate, the sum of
// the fixed or backoff waits (full and equal jitter only shorten them,
// decorrelated jitter's are at most 3 times the last), and for
// retry-after, whose waits are the limiter's, no bound.
func waits(p traffic.RetryPolicy, more int64) time.Duration {
	switch p.Policy {
	case "immediate":
		return 0
	case "fixed", "backoff":
		q := p
		if p.Jitter == "decorrelated" {
			// each sleep is at most 3 times the last
			q.Factor = traffic.Fraction{Num: 3, Den: 1}
		}
		q.Jitter, q.MaxAttempts = "", 0
		var sum time.Duration
		for k := int64(1); k <= more && k < 1<<20; k++ {
			w, _ := q.Wait(int(k), 0, nil)
			if sum = satDuration(sum, w); sum == math.MaxInt64 {
				break
			}
		}
		return sum
	}
	return math.MaxInt64 // retry-after: the limiter's waits
}

func satDuration(a, b time.Duration) time.Duration {
	return time.Duration(satAdd(int64(a), int64(b)))
}

// retriesPer is the most attempts after the first that policy p allows a
// request in a run of duration d (0: until the traces end), and why.
func retriesPer(p traffic.RetryPolicy, d time.Duration) (int64, string) {
	if p.Policy == "" || p.Policy == "none" {
		return 0, ""
	}
	if p.MaxAttempts > 0 {
		return int64(p.MaxAttempts - 1), fmt.Sprintf("%s: max-attempts %d", p.Policy, p.MaxAttempts)
	}
	// unlimited: as many waits as fit in the duration
	var least time.Duration // the shortest wait
	switch p.Policy {
	case "fixed":
		least = p.Delay
	case "backoff":
		switch p.Jitter {
		case "", "none":
			least = p.Delay
		case "equal":
			least = p.Delay / 2
		}
	case "retry-after":
		least = p.Resolution
	}
	if d <= 0 || least <= 0 {
		return traffic.Unbounded, p.Policy + ": unlimited attempts, and no least wait to bound them"
	}
	return int64(d/least) + 1, fmt.Sprintf("%s: unlimited attempts, one per %s at most", p.Policy, least)
}

// satAdd and satMul are a+b and a*b for a, b >= 0, traffic.Unbounded
// past it.
func satAdd(a, b int64) int64 {
	if a > traffic.Unbounded-b {
		return traffic.Unbounded
	}
	return a + b
}

func satMul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > traffic.Unbounded {
		return traffic.Unbounded
	}
	return int64(lo)
}

// The default budget of a run (docs/commands.md, "Budgets"), sized for a
// laptop: a billion decisions take the engine about a minute and a half
// of one core (about 11M decisions a second per core, BENCHMARKS.md), and
// 4 GiB is half a laptop of 8.
const (
	DefaultMaxRequests = 1_000_000_000
	DefaultMaxMemory   = 4 << 30
)

// The default budget of a sweep in total, over all its points: ten runs'
// worth of decisions (a quarter of an hour of one core), and the memory
// of a run for the points in flight at once.
const DefaultMaxTotalRequests = 10 * DefaultMaxRequests

// Budget bounds a run's estimate. A bound of 0 or less is none.
type Budget struct {
	// MaxRequests bounds Estimate.Work, MaxMemory Estimate.Memory.
	MaxRequests, MaxMemory int64
}

// DefaultBudget is the budget of a run unless the caller says otherwise.
func DefaultBudget() Budget {
	return Budget{MaxRequests: DefaultMaxRequests, MaxMemory: DefaultMaxMemory}
}

// BudgetError is a run whose estimate is over its budget: it did not
// start.
type BudgetError struct {
	Estimate *Estimate
	Budget   Budget
	// What names the run: "" for a run, "point limit.burst=5" or "the
	// sweep of 12 points" for a sweep; Flag the flag that raises its
	// request budget ("" for --max-requests).
	What, Flag string
}

func (e *BudgetError) Error() string {
	var over []string
	est, b := e.Estimate, e.Budget
	flag := "--max-requests"
	if e.Flag != "" {
		flag = e.Flag
	}
	if b.MaxRequests > 0 && est.Work > b.MaxRequests {
		verb := "decide"
		if est.Rows == 0 {
			verb = "write" // the traffic alone
		}
		over = append(over, fmt.Sprintf("%s requests to %s, over %s %s", Count(est.Work), verb, flag, Count(b.MaxRequests)))
	}
	if b.MaxMemory > 0 && est.Memory > b.MaxMemory {
		msg := fmt.Sprintf("%s of memory, over --max-memory %s", Bytes(est.Memory), Bytes(b.MaxMemory))
		// the part that needs it all: exact figures are not approximated
		switch {
		case est.PeakBytes > b.MaxMemory && est.Entries < est.Instants:
			msg += fmt.Sprintf(": the exact peaks of offered traffic hold the %s distinct instants of the %s window in runs of evenly spaced ones, up to %s entries (%s)",
				Count(est.Instants), human.Duration(est.Window), Count(est.Entries), Bytes(est.PeakBytes))
		case est.PeakBytes > b.MaxMemory:
			msg += fmt.Sprintf(": the exact peaks of offered traffic hold each distinct instant of the %s window, up to %s of them (%s)",
				human.Duration(est.Window), Count(est.Entries), Bytes(est.PeakBytes))
		case est.WindowBytes > b.MaxMemory:
			msg += fmt.Sprintf(": the exact key peaks (and sliding logs) hold each request admitted in the %s window (%s)",
				human.Duration(est.Window), Bytes(est.WindowBytes))
		case est.KeyBytes > b.MaxMemory:
			msg += fmt.Sprintf(": the state of %s keys (%s)", Count(est.Keys), Bytes(est.KeyBytes))
		}
		over = append(over, msg)
	}
	what := "the run"
	if e.What != "" {
		what = e.What
	}
	raise := "--max-requests or --max-memory (2e9, 8GiB, unlimited)"
	if e.Flag != "" {
		raise = e.Flag + " (2e10, unlimited)"
	}
	return fmt.Sprintf("%s is too big to start: %s; its estimate:\n  %s\nraise %s to run it anyway",
		what, strings.Join(over, "; "), strings.Join(est.Lines(), "\n  "), raise)
}

// Check returns a *BudgetError when the estimate is over the budget.
func (b Budget) Check(e *Estimate) error {
	if (b.MaxRequests > 0 && e.Work > b.MaxRequests) || (b.MaxMemory > 0 && e.Memory > b.MaxMemory) {
		return &BudgetError{Estimate: e, Budget: b}
	}
	return nil
}

// Lines are the estimate in words, one figure a line, as validate prints
// them.
func (e *Estimate) Lines() []string {
	req := "requests: " + figure(e.Accuracy, e.Requests)
	if e.Retries > 0 {
		req += fmt.Sprintf(", and at most %s retries (%s)", Count(e.Retries), e.RetryBound)
	}
	work := fmt.Sprintf("decisions: %s (every attempt by %s", Count(e.Work), plural(e.Runs, "limiter"))
	if e.StoreOps > 0 {
		work += fmt.Sprintf(", and %s store operations", Count(e.StoreOps))
	}
	work += ")"
	keys := "keys: " + figure(e.KeysAccuracy, e.Keys)
	if e.Rows == 0 {
		// the traffic alone: nothing decides, the keys' names grow
		return []string{req, keys, fmt.Sprintf("memory: about %s (the keys' names, %s)", Bytes(e.Memory), Bytes(e.KeyBytes))}
	}
	mem := fmt.Sprintf("memory: about %s (peaks of offered traffic: %s distinct instants of the %s window at most, %s)",
		Bytes(e.Memory), Count(e.Instants), human.Duration(e.Window), Bytes(e.PeakBytes))
	if e.Entries < e.Instants {
		mem = fmt.Sprintf("memory: about %s (peaks of offered traffic: %s distinct instants of the %s window at most, in runs of evenly spaced ones: %s entries, %s)",
			Bytes(e.Memory), Count(e.Instants), human.Duration(e.Window), Count(e.Entries), Bytes(e.PeakBytes))
	}
	return []string{req, work, keys, mem}
}

// figure writes n as exact, at most or about (a), or as Count writes
// traffic.Unbounded.
func figure(a traffic.Accuracy, n int64) string {
	switch {
	case n == traffic.Unbounded:
		return Count(n)
	case a == traffic.Exact:
		return "exactly " + Count(n)
	}
	return a.String() + " " + Count(n)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Count writes n with thousands separators; traffic.Unbounded, which
// stands for as much or more, with "or more".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if n == traffic.Unbounded {
		b.WriteString(" or more")
	}
	return b.String()
}

// Bytes writes n bytes in the largest binary unit that keeps a whole
// part, with one decimal (12.5 MiB), rounded up; traffic.Unbounded as
// "8192.0 PiB or more".
func Bytes(n int64) string {
	more := ""
	if n == traffic.Unbounded {
		more = " or more"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	u := 0
	for v := n; v >= 1024 && u < len(units)-1; v >>= 10 {
		u++
	}
	if u == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	// tenths of the unit, rounded up: an estimate errs above
	unit := int64(1) << (10 * u)
	tenths := (n/unit)*10 + ((n%unit)*10+unit-1)/unit
	return fmt.Sprintf("%d.%d %s%s", tenths/10, tenths%10, units[u], more)
}
