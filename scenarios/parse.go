package scenarios

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/traffic"
)

const (
	// maxClients bounds clients: N of one source.
	maxClients = 10_000_000
	// defaultMaxAttempts is max-attempts for a retry policy that does not
	// set it: the first try and two retries.
	defaultMaxAttempts = 3
	// defaultKey is the key of a source with neither key nor clients.
	defaultKey = "global"
	// defaultPrefix is the key-prefix of a source with clients.
	defaultPrefix = "client"
	// defaultZipfS is zipf-s for a zipf key-dist that does not set it.
	defaultZipfS = 1.1
)

var (
	// the fields each mapping takes are its File type's (file.go)
	topFields    = fieldNames[File]()
	limitFields  = fieldNames[Limit]()
	policyFields = []string{"rate", "per", "burst"} // every algorithm entry may override these
	commonFields = sourceFieldsBy("common", "all", "synthetic")
	// sourceTypes are the source types, in the order messages list them.
	sourceTypes  = []string{"times", "burst", "steady", "poisson", "aligned", "onoff", "ramp", "replay"}
	sourceFields = func() map[string][]string {
		m := map[string][]string{}
		for _, typ := range sourceTypes {
			m[typ] = sourceFieldsBy("types", typ)
		}
		return m
	}()
	keyDists     = []string{string(traffic.KeyUniform), string(traffic.KeyZipf)}
	retryFields  = fieldNames[Retry]()
	retryApplies = map[string][]string{
		"none":        {"policy"},
		"immediate":   {"policy", "max-attempts", "on", "budget", "token-bucket", "breaker"},
		"fixed":       {"policy", "delay", "max-attempts", "on", "budget", "token-bucket", "breaker"},
		"backoff":     {"policy", "delay", "factor", "cap", "jitter", "max-attempts", "on", "budget", "token-bucket", "breaker"},
		"retry-after": {"policy", "resolution", "max-attempts", "on", "budget", "token-bucket", "breaker"},
	}
	budgetFields  = fieldNames[Budget]()
	tokenFields   = fieldNames[TokenBucket]()
	breakerFields = fieldNames[Breaker]()
	retryPolicies = []string{"none", "immediate", "fixed", "backoff", "retry-after"}
	jitters       = []string{"none", "full", "equal", "decorrelated"}
	reportFields  = fieldNames[Report]()
)

// Parse reads the scenario in data; file names it in errors. On failure
// the error is an Errors listing every problem found (up to 20), each as
// file:line:col: path: message.
func Parse(file string, data []byte) (*Scenario, error) {
	d := &decoder{file: file}
	var sc *Scenario
	if f := d.decodeFile(data); f != nil {
		sc = d.scenario(f)
	}
	return d.result(sc)
}

// Validate checks f: the error is an Errors listing every problem (up to
// 20), each named by its field path, and by file:line:col when f was read
// from a file (File.From names the file).
func Validate(f *File) error {
	_, err := Build(f)
	return err
}

// Build makes the scenario f describes, or says what is wrong with it as
// Validate does.
func Build(f *File) (*Scenario, error) {
	d := &decoder{file: f.From}
	return d.result(d.scenario(f))
}

// result is the scenario read, or every error found, in position order.
func (d *decoder) result(sc *Scenario) (*Scenario, error) {
	if len(d.errs) > 0 || sc == nil {
		if len(d.errs) == 0 { // cannot happen: every failure reports
			d.errAt(position{1, 1}, "", "invalid scenario")
		}
		return nil, d.errs.sorted()
	}
	sc.File = d.file
	return sc, nil
}

func (d *decoder) scenario(f *File) *Scenario {
	d.at = f.at
	if d.at == nil {
		d.at = newPositions()
	}
	d.broken = d.at.broken
	d.pending("v:")
	top, ok := d.mapping(d.at.of("", Value{Kind: Mapping}, position{}), "a mapping with name, limit and traffic", f)
	if !ok {
		return nil
	}
	d.allow(top, topFields, unknownField(topFields))
	sc := &Scenario{Seed: 1}

	if v := top.get("name", f.Name.Value); v.set {
		sc.Name, _ = d.str(v, true)
	} else {
		d.missing(v, "a string naming the scenario")
	}
	if v := top.get("description", f.Description.Value); v.set {
		s, _ := d.str(v, false)
		sc.Description = strings.TrimSpace(s)
	}
	if v := top.get("seed", f.Seed.Value); v.set {
		if s, ok := d.uinteger(v, "an integer >= 0"); ok {
			sc.Seed = s
		}
	}
	durVal := top.get("duration", f.Duration.Value)
	durOK := true
	if durVal.set {
		sc.Duration, durOK = d.duration(durVal, true)
	}

	lim, limOK := d.limit(top.get("limit", f.Limit.written()), f.Limit)
	sc.Limit = lim.policy
	per := time.Second // stands in for W when the limit is invalid
	if limOK {
		per = lim.policy.Per
	}

	bi := d.backend(top.get("backend", sectionOf(f.Backend)), f.Backend)
	d.workers = bi.workers
	svc := bi.svc
	sc.Service = svc.service
	sc.Backend = bi.cfg
	sc.Retry = d.clients(top.get("clients", sectionOf(f.Clients)), f.Clients)
	ci := d.cluster(top.get("cluster", sectionOf(f.Cluster)), f.Cluster)
	sc.Cluster = ci.cfg
	sc.Algorithms, sc.Skipped = d.algorithms(top.get("algorithms", listOf(f.Algorithms)), f.Algorithms, lim, limOK, svc, ci)
	sc.Expect = d.expectations(top.get("expect", expectOf(f.Expect)), f.Expect, sc)

	srcs, srcOK := d.traffic(top.get("traffic", listOf(f.Traffic)), f.Traffic, per, limOK)
	replays, srcOK, durOK := d.runLength(sc, top, srcs, durVal, per, limOK, srcOK, durOK)
	if durOK && sc.Duration > 0 && replays == 0 {
		d.faultsInRun(ci, sc.Duration)
		d.backendFaultsInRun(bi, sc.Duration)
	}
	if durOK && sc.Duration > 0 {
		d.sourceEnds(sc, srcs)
	}
	d.plan(sc, srcs)
	if srcOK {
		d.resolveBy(sc, sc.Traffic.Attributes())
		d.resolveClasses(sc)
	}
	sc.Windows, sc.Bucket, sc.WindowsNamed = d.report(top.get("report", sectionOf(f.Report)), f.Report, per)
	// The backend draws from the scenario's seed and reports in its buckets;
	// its Start stays 0 (the engine moves it, and the faults, to a recorded
	// trace's first arrival), MaxBuckets and RecoverWindow the backend's
	// defaults.
	if sc.Backend != nil {
		sc.Backend.Seed, sc.Backend.Bucket = sc.Seed, sc.Bucket
	}
	return sc
}

// runLength checks that the sources and the duration go together (replay
// sources alone and without a duration; every synthetic source ending
// when there is no duration) and, when none is written, derives the
// duration from the latest end of the sources, rounded up to a multiple
// of per. It returns how many sources are replays and whether the
// sources and the duration are usable.
func (d *decoder) runLength(sc *Scenario, top *mapping, srcs []*sourceSpec, durVal val, per time.Duration, limOK, srcOK, durOK bool) (int, bool, bool) {
	replays := 0
	for _, s := range srcs {
		if s.typ == "replay" {
			replays++
		}
	}
	switch {
	case replays > 0 && replays < len(srcs):
		// A trace keeps its recorded instants while synthetic traffic
		// starts at 0: on one clock they would be decades apart.
		for _, s := range srcs {
			if s.typ != "replay" {
				d.errAt(s.v.pos, s.v.path, "%s %s source cannot be mixed with a replay: a trace keeps its recorded times, synthetic traffic starts at 0 (replay the trace alone, or export the synthetic traffic with ratesim traffic and replay both)", article(s.typ), s.typ)
				srcOK = false
			}
		}
	case replays > 0 && durVal.set:
		d.errAt(durVal.pos, durVal.path, "%s: does not apply to replay sources, which run until their traces end (cut a slice with the source's start and end)", durVal.found())
	}
	if !durVal.set && replays > 0 && replays == len(srcs) {
		// replay sources only: until the traces end (Duration 0)
	} else if !durVal.set && replays == 0 {
		for _, s := range srcs {
			switch {
			case s.src.End() != 0:
			case s.typ == "ramp":
				d.errAt(s.v.pos, s.v.path, "a ramp with no end: set end on the source or the scenario's duration (the rate reaches to at the end)")
				srcOK = false
			default:
				d.errAt(s.v.pos, s.v.path, "%s %s source without end runs until the scenario's duration: set duration (or end on the source)", article(s.typ), s.typ)
				srcOK = false
			}
		}
		if srcOK && limOK {
			var latest time.Duration
			for _, s := range srcs {
				latest = max(latest, s.src.End())
			}
			if dur, ok := roundUp(latest, per); ok {
				sc.Duration = dur
			} else {
				d.errAt(top.pos, "duration", "missing, and the traffic's end %v rounded up to a multiple of per %v is out of range: set one", latest, per)
				durOK = false
			}
		}
	}
	return replays, srcOK, durOK
}

// sourceEnds ends every synthetic source at the scenario's duration, or
// its own end when earlier; a ramp reaches its to at its own end.
func (d *decoder) sourceEnds(sc *Scenario, srcs []*sourceSpec) {
	for _, s := range srcs {
		if s.typ == "replay" {
			continue // its start and end cut the trace, not time
		}
		end := sc.Duration
		if s.endSet && s.end < end {
			end = s.end
		}
		s.common.End = end
		if r, ok := s.src.(*traffic.Ramp); ok {
			// the rate reaches to at the source's own end, even past
			// the duration, which then only cuts the ramp
			r.Until = sc.Duration
			if s.endSet {
				r.Until = s.end
			}
		}
		if s.common.Start >= sc.Duration {
			d.errAt(s.start.pos, s.start.path, "%s: at or after the scenario's end %v, so the source sends nothing", s.start.found(), sc.Duration)
		}
	}
}

// plan makes the scenario's traffic plan of its sources: their seeds,
// attributes and retry policies.
func (d *decoder) plan(sc *Scenario, srcs []*sourceSpec) {
	sc.Traffic.Seed = sc.Seed
	seen := map[string]int{}
	for i, s := range srcs {
		if s.attrs != nil {
			if sc.Traffic.Attrs == nil {
				sc.Traffic.Attrs = make([]map[string]string, len(srcs))
			}
			sc.Traffic.Attrs[i] = s.attrs
		}
		sc.Traffic.Sources = append(sc.Traffic.Sources, s.src)
		// A source is seeded by its type, its keys and how many sources of
		// that type and keys came before it, so that adding a different
		// source anywhere leaves its draws alone.
		base := s.typ + ":" + keysOf(s.common.Clients)
		if s.ref != nil {
			base = s.typ + ":path=" + s.ref.written
			sc.replays = append(sc.replays, *s.ref)
		}
		sc.Traffic.SeedNames = append(sc.Traffic.SeedNames, base+"#"+strconv.Itoa(seen[base]))
		seen[base]++
		retry := sc.Retry
		if s.common.Retry != nil {
			retry = *s.common.Retry
		}
		sc.Retries = append(sc.Retries, retry)
	}
}

// keysOf describes the keys of a source for its seed name.
func keysOf(c traffic.Clients) string {
	if c.N == 0 {
		return "key=" + c.Key
	}
	return "clients=" + c.Prefix + "*" + strconv.Itoa(c.N)
}

// roundUp returns t rounded up to a whole multiple of w > 0.
func roundUp(t, w time.Duration) (time.Duration, bool) {
	n := t / w
	if t%w != 0 {
		n++
	}
	if n > math.MaxInt64/w {
		return 0, false
	}
	return n * w, true
}

// orList writes a, b or c.
func orList(list []string) string { return joinList(list, "or") }

// joinList writes a, b conj c.
func joinList(list []string, conj string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " " + conj + " " + list[len(list)-1]
}

// limitInfo is the scenario's policy and where each part was written.
type limitInfo struct {
	policy   algorithms.Policy
	whole    val
	fields   map[string]val // rate, per, burst in the mapping form
	burstSet bool
}

// field is where the policy field name was written: the field itself in
// the mapping form, the whole limit otherwise.
func (l limitInfo) field(name string) val {
	if v, ok := l.fields[name]; ok {
		return v
	}
	return l.whole
}

const wantLimit = "a rate like 10/s or a mapping {rate, per, burst}"

func (d *decoder) limit(v val, l *Limit) (limitInfo, bool) {
	li := limitInfo{whole: v, fields: map[string]val{}}
	if !v.set {
		d.missing(v, wantLimit)
		return li, false
	}
	if !v.ok() {
		return li, false
	}
	switch {
	case isMap(v.n):
	case isScalar(v.n):
		r, ok := d.rate(v)
		li.policy = algorithms.Policy{Rate: r.Count, Per: r.Per, Burst: r.Count}
		return li, ok
	default:
		d.typeErr(v, wantLimit)
		return li, false
	}
	m, _ := d.mapping(v, wantLimit, l)
	d.allow(m, limitFields, func(string) string { return "unknown field (want rate, per or burst)" })
	ok := true
	rv := m.get("rate", l.Rate.Value)
	if rv.set {
		li.fields["rate"] = rv
		li.policy.Rate, ok = d.integer(rv, 1, math.MaxInt64, "an integer >= 1 (requests per per)")
	} else {
		d.missing(rv, "an integer >= 1 (requests per per)")
		ok = false
	}
	li.policy.Per = time.Second
	if pv := m.get("per", l.Per.Value); pv.set {
		li.fields["per"] = pv
		p, cal, pok := d.period(pv)
		li.policy.Per, li.policy.Calendar, ok = p, cal, ok && pok
	}
	li.policy.Burst = li.policy.Rate
	if bv := m.get("burst", l.Burst.Value); bv.set {
		li.fields["burst"] = bv
		li.burstSet = true
		b, bok := d.integer(bv, 1, math.MaxInt64, "an integer >= 1")
		li.policy.Burst, ok = b, ok && bok
	}
	return li, ok
}

func (d *decoder) clients(v val, c *Clients) traffic.RetryPolicy {
	none := traffic.RetryPolicy{Policy: "none"}
	if !v.set {
		return none
	}
	m, ok := d.mapping(v, "a mapping {retry}", c)
	if !ok {
		return none
	}
	d.allow(m, []string{"retry"}, func(string) string { return "unknown field (want retry)" })
	if rv := m.get("retry", sectionOf(c.Retry)); rv.set {
		if p, ok := d.retry(rv, c.Retry); ok {
			return p
		}
	}
	return none
}

// retry reads a retry policy mapping.
func (d *decoder) retry(v val, r *Retry) (traffic.RetryPolicy, bool) {
	m, ok := d.mapping(v, "a mapping with a policy ("+orList(retryPolicies)+")", r)
	if !ok {
		return traffic.RetryPolicy{}, false
	}
	policy := "none"
	if pv := m.get("policy", r.Policy.Value); pv.set {
		s, ok := d.str(pv, true)
		if !ok {
			return traffic.RetryPolicy{}, false
		}
		if _, known := retryApplies[s]; !known {
			d.errAt(pv.pos, pv.path, "%s: unknown policy (want %s)", quote(s), orList(retryPolicies))
			d.allow(m, retryFields, unknownField(retryFields))
			return traffic.RetryPolicy{}, false
		}
		policy = s
	}
	applies := retryApplies[policy]
	good := true
	d.allow(m, applies, func(k string) string {
		good = false
		if !slices.Contains(retryFields, k) {
			return unknownField(retryFields)(k)
		}
		if len(applies) == 1 {
			return fmt.Sprintf("does not apply to policy %s (it takes no other field)", policy)
		}
		return fmt.Sprintf("does not apply to policy %s (its fields: %s)", policy, strings.Join(applies[1:], ", "))
	})
	rp := traffic.RetryPolicy{Policy: policy}
	if policy == "none" {
		return rp, good
	}
	rp.MaxAttempts, ok = d.maxAttempts(m.get("max-attempts", r.MaxAttempts.Value), policy)
	good = d.retryWaits(m, r, &rp) && good && ok
	if ov := m.get("on", listOf(r.On)); ov.set {
		on, ok := d.retryOn(ov, r.On)
		rp.On, good = on, good && ok
	}
	if bv := m.get("budget", sectionOf(r.Budget)); bv.set {
		b, ok := d.retryBudget(bv, r.Budget)
		rp.Budget, good = b, good && ok
	}
	if tv := m.get("token-bucket", sectionOf(r.TokenBucket)); tv.set {
		t, ok := d.retryTokens(tv, r.TokenBucket)
		rp.Tokens, good = t, good && ok
	}
	if bv := m.get("breaker", sectionOf(r.Breaker)); bv.set {
		b, ok := d.retryBreaker(bv, r.Breaker)
		rp.Breaker, good = b, good && ok
	}
	return rp, good
}

// retryTokens reads a retry policy's token bucket {capacity, cost: 1,
// refill: 0.1}, each a decimal with at most three decimal places:
// capacity required, above 0; cost above 0, at most capacity; refill
// at least 0.
func (d *decoder) retryTokens(v val, tb *TokenBucket) (traffic.RetryTokens, bool) {
	m, ok := d.mapping(v, "a mapping {capacity, cost, refill}", tb)
	if !ok {
		return traffic.RetryTokens{}, false
	}
	d.allow(m, tokenFields, unknownField(tokenFields))
	t := traffic.RetryTokens{CostMilli: 1000, RefillMilli: 100}
	good := true
	cv := m.get("capacity", tb.Capacity.Value)
	if !cv.set {
		d.missing(cv, "a decimal > 0: the tokens a client holds when full")
		good = false
	} else {
		n, ok := d.milli(cv, "a decimal > 0 with at most 3 decimal places: the tokens a client holds when full", false)
		t.CapacityMilli, good = n, good && ok
	}
	if sv := m.get("cost", tb.Cost.Value); sv.set {
		n, ok := d.milli(sv, "a decimal > 0 with at most 3 decimal places: the tokens a retry takes", false)
		if ok && good && n > t.CapacityMilli {
			d.errAt(sv.pos, sv.path, "%s: above the capacity (want cost <= capacity)", sv.found())
			ok = false
		}
		t.CostMilli, good = n, good && ok
	} else if good && t.CostMilli > t.CapacityMilli {
		d.errAt(cv.pos, cv.path, "%s: below the cost of a retry, 1 (want capacity >= cost)", cv.found())
		good = false
	}
	if rv := m.get("refill", tb.Refill.Value); rv.set {
		n, ok := d.milli(rv, "a decimal >= 0 with at most 3 decimal places: the tokens a success gives back", true)
		t.RefillMilli, good = n, good && ok
	}
	return t, good
}

// retryBreaker reads a retry policy's circuit breaker {window: an integer
// from 1 to 10000, threshold: a decimal from 0.001 to 1, open-for: a
// duration > 0}, all required.
func (d *decoder) retryBreaker(v val, br *Breaker) (traffic.RetryBreaker, bool) {
	m, ok := d.mapping(v, "a mapping {window, threshold, open-for}", br)
	if !ok {
		return traffic.RetryBreaker{}, false
	}
	d.allow(m, breakerFields, unknownField(breakerFields))
	var b traffic.RetryBreaker
	good := true
	const wantWindow = "an integer from 1 to 10000: how many of a client's last attempts are counted"
	if wv := m.get("window", br.Window.Value); !wv.set {
		d.missing(wv, wantWindow)
		good = false
	} else {
		n, ok := d.integer(wv, 1, 10000, wantWindow)
		b.Window, good = int(n), good && ok
	}
	const wantThreshold = "a decimal from 0.001 to 1: the share of failures that opens the breaker"
	if tv := m.get("threshold", br.Threshold.Value); !tv.set {
		d.missing(tv, wantThreshold)
		good = false
	} else {
		n, ok := d.milli(tv, wantThreshold, false)
		if ok && n > 1000 {
			d.errAt(tv.pos, tv.path, "%s: above 1 (want %s)", tv.found(), wantThreshold)
			ok = false
		}
		b.ThresholdMilli, good = n, good && ok
	}
	if ov := m.get("open-for", br.OpenFor.Value); !ov.set {
		d.missing(ov, "a duration > 0: how long the breaker stays open")
		good = false
	} else {
		dur, ok := d.duration(ov, true)
		b.OpenFor, good = dur, good && ok
	}
	return b, good
}

// milli reads a decimal with at most three decimal places in
// thousandths: above 0, or at least 0 when zero is allowed.
func (d *decoder) milli(v val, want string, zero bool) (int64, bool) {
	if !v.ok() {
		return 0, false
	}
	if !isNumber(v.n) {
		d.typeErr(v, want)
		return 0, false
	}
	n, msg := parseMilli(v.n.Text)
	if msg == "" && n == 0 && !zero {
		msg = "want " + want
	}
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", v.found(), msg)
		return 0, false
	}
	return n, true
}

// maxAttempts reads a retry policy's max-attempts (default 3; unlimited
// is 0, which immediate retries may not be).
func (d *decoder) maxAttempts(av val, policy string) (int, bool) {
	unlimited := av.set && isString(av.n) && av.n.Text == "unlimited"
	switch {
	case !av.set:
		return defaultMaxAttempts, true
	case unlimited && policy == "immediate":
		d.errAt(av.pos, av.path, `"unlimited": immediate retries at one instant must stop (want an integer >= 1)`)
		return defaultMaxAttempts, false
	case unlimited:
		return 0, true
	}
	want := "an integer >= 1 or unlimited"
	if policy == "immediate" {
		want = "an integer >= 1"
	}
	n, ok := d.integer(av, 1, math.MaxInt32, want)
	return int(n), ok
}

// retryWaits reads how long a retry policy waits (delay; a backoff's
// factor, cap and jitter; retry-after's resolution) into rp.
func (d *decoder) retryWaits(m *mapping, r *Retry, rp *traffic.RetryPolicy) bool {
	good := true
	policy := rp.Policy
	if policy == "fixed" || policy == "backoff" {
		dv := m.get("delay", r.Delay.Value)
		if !dv.set {
			what := "the wait before each retry"
			if policy == "backoff" {
				what = "the first wait, multiplied by factor after each retry"
			}
			d.missing(dv, "a duration > 0: "+what)
			good = false
		} else {
			dur, ok := d.duration(dv, true)
			rp.Delay, good = dur, good && ok
		}
	}
	if policy == "backoff" {
		rp.Factor = traffic.Fraction{Num: 2, Den: 1}
		rp.Jitter = "none"
		if fv := m.get("factor", r.Factor.Value); fv.set {
			f, ok := d.factor(fv)
			rp.Factor, good = f, good && ok
		}
		if cv := m.get("cap", r.Cap.Value); cv.set {
			c, ok := d.duration(cv, true)
			if ok && rp.Delay > 0 && c < rp.Delay {
				d.errAt(cv.pos, cv.path, "%s: below the base delay %v (want cap >= delay)", cv.found(), rp.Delay)
				ok = false
			}
			rp.Cap, good = c, good && ok
		}
		if jv := m.get("jitter", r.Jitter.Value); jv.set {
			j, ok := d.choice(jv, "jitter", jitters)
			rp.Jitter, good = j, good && ok
		}
	}
	if policy == "retry-after" {
		rp.Resolution = time.Second
		if rv := m.get("resolution", r.Resolution.Value); rv.set {
			r, ok := d.duration(rv, false)
			rp.Resolution, good = r, good && ok
		}
	}
	return good
}

// retryBudget reads a retry policy's budget: gRPC's retry throttling,
// {max-tokens: 1 to 1000, token-ratio: a decimal > 0 with at most three
// decimal places}, both required, as gRPC's retryThrottling requires them.
func (d *decoder) retryBudget(v val, bu *Budget) (traffic.RetryBudget, bool) {
	const wantRatio = "a decimal > 0 with at most 3 decimal places, like 0.1: the tokens a success gives back"
	m, ok := d.mapping(v, "a mapping {max-tokens, token-ratio}", bu)
	if !ok {
		return traffic.RetryBudget{}, false
	}
	d.allow(m, budgetFields, unknownField(budgetFields))
	var b traffic.RetryBudget
	good := true
	mv := m.get("max-tokens", bu.MaxTokens.Value)
	if !mv.set {
		d.missing(mv, "an integer from 1 to 1000: the tokens a client holds when full")
		good = false
	} else {
		n, ok := d.integer(mv, 1, 1000, "an integer from 1 to 1000: the tokens a client holds when full")
		b.MaxTokens, good = n, good && ok
	}
	rv := m.get("token-ratio", bu.TokenRatio.Value)
	if !rv.set {
		d.missing(rv, wantRatio)
		return b, false
	}
	if !isNumber(rv.n) {
		d.typeErr(rv, wantRatio)
		return b, false
	}
	milli, msg := parseMilli(rv.n.Text)
	if msg == "" && milli == 0 {
		msg = "want " + wantRatio
	}
	if msg != "" {
		d.errAt(rv.pos, rv.path, "%s: %s", rv.found(), msg)
		return b, false
	}
	b.RatioMilli = milli
	return b, good
}

// factor reads a decimal >= 1 exactly.
func (d *decoder) factor(v val) (traffic.Fraction, bool) {
	if !v.ok() {
		return traffic.Fraction{}, false
	}
	const want = "a decimal >= 1 like 2 or 1.5"
	if !isNumber(v.n) {
		d.typeErr(v, want)
		return traffic.Fraction{}, false
	}
	text := v.n.Text
	f, msg := parseFactor(text)
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", text, msg)
		return traffic.Fraction{}, false
	}
	return f, true
}

// Skipped is an algorithm left out of a scenario without an algorithms
// list: because it cannot enforce the scenario's policy, or because it
// could never refuse a request (Kept).
type Skipped struct {
	Name   string
	Reason string
	// Kept, when set, is the algorithm as the default list would hold it,
	// at index At of Scenario.Algorithms: it can run, and is left out only
	// because it would decide nothing (the concurrency limiter with a
	// service time of 0); naming it (ratesim's --algorithms) brings it
	// back.
	Kept *Algorithm
	At   int
}

// algorithms reads the algorithms list, or makes the default one.
func (d *decoder) algorithms(v val, entries []AlgEntry, lim limitInfo, limOK bool, svc service, ci clusterInfo) ([]Algorithm, []Skipped) {
	if !v.set {
		return d.defaultAlgorithms(lim, limOK, svc, ci)
	}
	items, ok := d.list(v, "a list of algorithm names or mappings with a name", len(entries), func(i int) Value { return entries[i].written() })
	if !ok {
		return nil, nil
	}
	if len(items) == 0 {
		d.errAt(v.pos, v.path, "empty list (want at least one algorithm, or no algorithms field for all of them)")
		return nil, nil
	}
	var out []Algorithm
	labels := map[string]val{}
	for i, it := range items {
		a, labelVal, ok := d.algorithm(it, &entries[i], lim, limOK, svc, ci)
		if !ok {
			continue
		}
		if first, dup := labels[a.Label]; dup {
			d.errAt(labelVal.pos, labelVal.path, "%s: duplicate label (also %s at %d:%d); set a unique label",
				quote(a.Label), strings.TrimSuffix(first.path, ".label"), first.pos.line, first.pos.col)
			continue
		}
		labels[a.Label] = labelVal
		out = append(out, a)
	}
	return out, nil
}

// defaultAlgorithms is every algorithm with the scenario's policy, leaving
// out those that cannot enforce it (nginx takes only per 1s or 1m) as long
// as some exact algorithm can; a policy no exact algorithm takes, and any
// other parameter an algorithm rejects, is an error. On a cluster every
// algorithm runs central, and those that cannot (x-time-rate) are left out.
// With a service time of 0 and no workers, the limits of requests in
// flight (concurrency) are left out too: nothing is ever in flight, so
// they would refuse nothing and only look like the most lenient row.
func (d *decoder) defaultAlgorithms(lim limitInfo, limOK bool, svc service, ci clusterInfo) ([]Algorithm, []Skipped) {
	var out []Algorithm
	var skipped []Skipped
	var firstErr error
	exactOK := false
	infos := algorithms.All()
	if d.workers {
		infos = append(infos, algorithms.WithBackend()...)
	}
	for _, info := range infos {
		if len(info.Required) > 0 {
			skipped = append(skipped, Skipped{Name: info.Name, Reason: fmt.Sprintf("it needs %s (no default, as in its source): list it with one", strings.Join(info.Required, " and "))})
			continue
		}
		var coord cluster.Coordination
		if ci.set {
			var why string
			if coord, why = defaultCoordination(info.Name); why != "" {
				skipped = append(skipped, Skipped{Name: info.Name, Reason: why})
				continue
			}
		}
		p := algorithms.Params{Policy: lim.policy, Service: svc.service}
		if limOK {
			if err := build(info.Name, p); err != nil {
				var pe *algorithms.ParamError
				if !errors.As(err, &pe) || !slices.Contains(policyFields, pe.Field) {
					d.paramErr(err, nil, lim.whole, info.Name, lim, svc)
					continue
				}
				firstErr = cmpOr(firstErr, err)
				skipped = append(skipped, Skipped{Name: info.Name, Reason: err.Error()})
				continue
			}
			exactOK = exactOK || info.Exact
		}
		a := Algorithm{Name: info.Name, Label: info.Name, Params: p, Set: map[string]any{}, Coord: coord}
		if info.InFlight && svc.service == 0 && !d.workers {
			skipped = append(skipped, Skipped{Name: info.Name, Reason: neverRefuses, Kept: &a, At: len(out)})
			continue
		}
		out = append(out, a)
	}
	if limOK && !exactOK && firstErr != nil {
		d.paramErr(firstErr, nil, lim.whole, "", lim, svc)
		return nil, nil
	}
	return out, skipped
}

// neverRefuses is why a limit of requests in flight is left out of the
// default list when the backend's service time is 0.
const neverRefuses = "backend.service is 0, so no request is ever in flight and it could refuse none; name it in algorithms to keep it"

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// newLimiter builds an algorithm; tests replace it.
var newLimiter = algorithms.New

// build checks that the algorithm accepts p.
func build(name string, p algorithms.Params) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s cannot be built with %v: %v", name, p.Policy, r)
		}
	}()
	_, err = newLimiter(name, p)
	return err
}

// paramErr reports an error from an algorithm's constructor at the field it
// names: in the entry when written there, else in the limit (or backend).
func (d *decoder) paramErr(err error, written map[string]val, entry val, label string, lim limitInfo, svc service) {
	forLabel := ""
	if label != "" {
		forLabel = fmt.Sprintf(" (for algorithm %s)", label)
	}
	var pe *algorithms.ParamError
	if !errors.As(err, &pe) {
		d.errAt(entry.pos, entry.path, "%v%s", err, forLabel)
		return
	}
	if v, ok := written[pe.Field]; ok {
		d.errAt(v.pos, v.path, "%s: %s", pe.Found, pe.Want)
		return
	}
	switch {
	case slices.Contains(policyFields, pe.Field):
		v := lim.field(pe.Field)
		d.errAt(v.pos, v.path, "%s: %s%s", pe.Found, pe.Want, forLabel)
	case pe.Field == "service" && svc.v.set:
		d.errAt(svc.v.pos, svc.v.path, "%s: %s%s", pe.Found, pe.Want, forLabel)
	default:
		d.errAt(entry.pos, entry.path, "%v%s", pe, forLabel)
	}
}

const wantAlgorithm = "an algorithm name or a mapping with a name"

// algorithm reads one entry of the algorithms list; it returns where the
// label was written (or the entry, for the name's label).
func (d *decoder) algorithm(it val, e *AlgEntry, lim limitInfo, limOK bool, svc service, ci clusterInfo) (Algorithm, val, bool) {
	if !it.ok() {
		return Algorithm{}, val{}, false
	}
	var m *mapping
	nameVal := it
	switch {
	case isString(it.n):
	case isMap(it.n):
		m, _ = d.mapping(it, wantAlgorithm, e)
		nameVal = m.get("name", e.Name.Value)
		if !nameVal.set {
			d.missing(nameVal, "an algorithm: "+orList(algorithms.Names()))
			return Algorithm{}, val{}, false
		}
	default:
		d.typeErr(it, wantAlgorithm)
		return Algorithm{}, val{}, false
	}
	name, ok := d.str(nameVal, true)
	if !ok {
		return Algorithm{}, val{}, false
	}
	info, known := algorithms.Lookup(name)
	if !known {
		msg := fmt.Sprintf("%s: unknown algorithm (want %s)", quote(name), orList(algorithms.Names()))
		if s := suggest(name, knownNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		d.errAt(nameVal.pos, nameVal.path, "%s", msg)
		return Algorithm{}, val{}, false
	}
	if info.Adaptive && !d.workers {
		d.errAt(nameVal.pos, nameVal.path, "%s: an adaptive limit learns from the backend's answers: it needs a backend with workers (add backend.workers)", name)
		return Algorithm{}, val{}, false
	}
	if name == "all-of" {
		return d.allOf(it, m, e, nameVal, lim, limOK, svc, ci)
	}
	a := Algorithm{Name: name, Label: name, Set: map[string]any{},
		Params: algorithms.Params{Policy: lim.policy, Service: svc.service}}
	labelVal := it
	if m == nil {
		coord, ok := d.coordination(it, nil, e, name, a.Params.Policy, ci)
		if !ok {
			return Algorithm{}, val{}, false
		}
		a.Coord = coord
		if limOK {
			if err := build(name, a.Params); err != nil {
				d.paramErr(err, nil, it, name, lim, svc)
				return Algorithm{}, val{}, false
			}
		}
		if !d.storeRow(it, nil, e, &a) {
			return Algorithm{}, val{}, false
		}
		return a, labelVal, true
	}

	allowed := slices.Concat([]string{"name", "label"}, policyFields, info.Options, coordFields)
	if d.member {
		allowed = append(allowed, "by")
	}
	d.allow(m, allowed, func(k string) string {
		if len(info.Options) == 0 {
			return fmt.Sprintf("%s takes no option %q (it has none besides rate, per and burst)", name, k)
		}
		return fmt.Sprintf("%s takes no option %q (its options: %s)", name, k, strings.Join(info.Options, ", "))
	})
	written, labelVal, good := d.entryOptions(m, e, &a, allowed, labelVal, lim, ci)
	p := &a.Params
	if good && p.FillInterval > 0 && p.TokensPerFill > 0 {
		good = d.discreteRate(m, p, written)
	}
	// How the entry runs on the cluster is not the algorithm's business:
	// Coord, not Params, and not in Set.
	coord, ok := d.coordination(it, m, e, name, p.Policy, ci)
	a.Coord, good = coord, good && ok
	if !good {
		return Algorithm{}, val{}, false
	}
	if limOK {
		if err := build(name, a.Params); err != nil {
			d.paramErr(err, written, it, a.Label, lim, svc)
			return Algorithm{}, val{}, false
		}
	}
	if !d.storeRow(it, m, e, &a) {
		return Algorithm{}, val{}, false
	}
	return a, labelVal, true
}

// entryOptions reads the overrides and options of the algorithm entry e,
// the mapping m, into a (allowed are the fields it takes; the
// coordination options are read apart). It returns where each was written
// and where the label was (labelVal when the entry sets none).
func (d *decoder) entryOptions(m *mapping, e *AlgEntry, a *Algorithm, allowed []string, labelVal val, lim limitInfo, ci clusterInfo) (map[string]val, val, bool) {
	good := true
	for _, k := range m.keys {
		good = good && slices.Contains(allowed, k)
	}
	if by := m.get("by", e.By.Value); by.set && d.member {
		d.memberBy = by // the all-of row resolves it
	}
	o := &entryReader{m: m, allowed: allowed, written: map[string]val{}}
	labelVal, good = d.entryPolicy(o, e, a, labelVal, lim, good)
	good = d.entryExtras(o, e, a, ci) && good
	for _, k := range m.keys {
		if _, read := o.written[k]; !read && slices.Contains(allowed, k) && !slices.Contains(entryFields, k) {
			// an option in Info.Options that this loader does not know
			d.errAt(m.keyPos[k], join(m.path, k), "option %q is not supported by the scenario loader", k)
		}
	}
	return o.written, labelVal, good
}

// entryReader reads the fields an algorithm entry takes, keeping where
// each was written.
type entryReader struct {
	m       *mapping
	allowed []string
	written map[string]val
}

// field is the entry's field k, holding x; ok when written and taken.
func (o *entryReader) field(k string, x Value) (val, bool) {
	v := o.m.get(k, x)
	if !v.set || !slices.Contains(o.allowed, k) {
		return v, false
	}
	o.written[k] = v
	return v, true
}

// entryPolicy reads an entry's label and its overrides of the policy.
func (d *decoder) entryPolicy(o *entryReader, e *AlgEntry, a *Algorithm, labelVal val, lim limitInfo, good bool) (val, bool) {
	p := &a.Params
	var ok bool
	if v, set := o.field("label", e.Label.Value); set {
		a.Label, ok = d.str(v, true)
		labelVal, good = v, good && ok
	}
	rateSet, burstSet := false, false
	if v, set := o.field("rate", e.Rate.Value); set {
		p.Rate, ok = d.integer(v, 1, math.MaxInt64, "an integer >= 1 (requests per per)")
		a.Set["rate"], rateSet, good = p.Rate, true, good && ok
	}
	if v, set := o.field("per", e.Per.Value); set {
		p.Per, p.Calendar, ok = d.period(v)
		a.Set["per"], good = p.PerString(), good && ok
	}
	if v, set := o.field("burst", e.Burst.Value); set && a.Name == "nginx" {
		p.NginxBurst, ok = d.integer(v, 0, math.MaxInt64, "an integer >= 0 (nginx's burst=N admits N+1 at once)")
		p.NginxBurstSet = true
		a.Set["burst"], good = p.NginxBurst, good && ok
	} else if set {
		p.Burst, ok = d.integer(v, 1, math.MaxInt64, "an integer >= 1")
		a.Set["burst"], burstSet, good = p.Burst, true, good && ok
	}
	if rateSet && !burstSet && !lim.burstSet {
		p.Burst = p.Rate // the burst defaults to the rate
	}
	return labelVal, good
}

// entryExtras reads an entry's zone and the algorithm's options.
func (d *decoder) entryExtras(o *entryReader, e *AlgEntry, a *Algorithm, ci clusterInfo) bool {
	p := &a.Params
	good := true
	if v, set := o.field("zone", e.Zone.Value); set {
		var text string
		var ok bool
		p.NginxZone, text, ok = d.zoneSize(v)
		a.Set["zone"] = text
		if ok && ci.set {
			d.errAt(o.m.keyPos["zone"], v.path, "%s: nginx's zone is one nginx's shared memory: it is not modelled on a cluster (remove zone or the cluster section)", v.found())
			ok = false
		}
		good = good && ok
	}
	good = d.shedOptions(o, e, a, ci) && good
	for _, opt := range algorithmOptions {
		if v, set := o.field(opt.name, opt.field(e)); set {
			var ok bool
			a.Set[opt.name], ok = opt.read(d, v, p)
			good = good && ok
		}
	}
	return good
}

// wantInFlightLimit is what an adaptive limit's initial-limit, min-limit
// and max-limit take.
const wantInFlightLimit = "an integer from 1 to 2^30: requests in flight"

// algorithmOption is an option of an algorithm entry besides label, rate,
// per, burst and zone: its field of the entry, and how it is read into its
// field of the Params (read returns the value as Algorithm.Set holds it).
type algorithmOption struct {
	name  string
	field func(e *AlgEntry) Value
	read  func(d *decoder, v val, p *algorithms.Params) (any, bool)
}

// entryFields are the fields of an algorithm entry.
var entryFields = fieldNames[AlgEntry]()

// algorithmOptions are the options, in the entry's order.
var algorithmOptions = []algorithmOption{
	{"count-rejected", func(e *AlgEntry) Value { return e.CountRejected.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.CountRejected, ok = d.boolean(v)
		return p.CountRejected, ok
	}},
	{"max-delay", func(e *AlgEntry) Value { return e.MaxDelay.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.MaxDelay, ok = d.duration(v, false)
		return p.MaxDelay.String(), ok
	}},
	{"fill-interval", func(e *AlgEntry) Value { return e.FillInterval.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.FillInterval, ok = d.duration(v, true)
		return p.FillInterval.String(), ok
	}},
	{"idle-reset", func(e *AlgEntry) Value { return e.IdleReset.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.IdleReset, ok = d.duration(v, true)
		return p.IdleReset.String(), ok
	}},
	{"tokens-per-fill", func(e *AlgEntry) Value { return e.TokensPerFill.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.TokensPerFill, ok = d.integer(v, 1, math.MaxInt64, "an integer >= 1 (envoy's tokens_per_fill)")
		return p.TokensPerFill, ok
	}},
	{"nodelay", func(e *AlgEntry) Value { return e.Nodelay.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Nodelay, ok = d.boolean(v)
		return p.Nodelay, ok
	}},
	{"delay", func(e *AlgEntry) Value { return e.Delay.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.NginxDelay, ok = d.integer(v, 0, math.MaxInt64, "an integer >= 0")
		return p.NginxDelay, ok
	}},
	{"max", func(e *AlgEntry) Value { return e.Max.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Max, ok = d.integer(v, 1, math.MaxInt64, "an integer >= 1")
		return p.Max, ok
	}},
	{"window", func(e *AlgEntry) Value { return e.Window.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Window, ok = d.duration(v, true)
		return p.Window.String(), ok
	}},
	{"min-samples", func(e *AlgEntry) Value { return e.MinSamples.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.MinSamples, ok = d.integer(v, 10, 1<<30, "an integer >= 10 (samples a window needs, as the Java requires)")
		return p.MinSamples, ok
	}},
	{"initial-limit", func(e *AlgEntry) Value { return e.InitialLimit.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		n, ok := d.integer(v, 1, 1<<30, wantInFlightLimit)
		p.InitialLimit = n
		return n, ok
	}},
	{"min-limit", func(e *AlgEntry) Value { return e.MinLimit.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		n, ok := d.integer(v, 1, 1<<30, wantInFlightLimit)
		p.MinLimit = n
		return n, ok
	}},
	{"max-limit", func(e *AlgEntry) Value { return e.MaxLimit.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		n, ok := d.integer(v, 1, 1<<30, wantInFlightLimit)
		p.MaxLimit = n
		return n, ok
	}},
	{"interval", func(e *AlgEntry) Value { return e.Interval.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Interval, ok = d.duration(v, true)
		return p.Interval.String(), ok
	}},
	{"min-rtt-calc-interval", func(e *AlgEntry) Value { return e.MinRTTInterval.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.MinRTTInterval, ok = d.duration(v, true)
		return p.MinRTTInterval.String(), ok
	}},
	{"k", func(e *AlgEntry) Value { return e.K.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.K, ok = d.number(v, "a multiplier > 0, like 2 or 1.5")
		if ok && !(p.K > 0) {
			d.errAt(v.pos, v.path, "%s: want a multiplier > 0, like 2 or 1.5 (the book: 2)", v.found())
			ok = false
		}
		return p.K, ok
	}},
	{"max-burst", func(e *AlgEntry) Value { return e.MaxBurst.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.MaxBurst, ok = d.duration(v, true)
		return p.MaxBurst.String(), ok
	}},
	{"warmup", func(e *AlgEntry) Value { return e.Warmup.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Warmup, ok = d.duration(v, true)
		return p.Warmup.String(), ok
	}},
	{"cold-factor", func(e *AlgEntry) Value { return e.ColdFactor.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.ColdFactor, ok = d.number(v, "a factor >= 1, like 3 (Guava's coldFactor)")
		if ok && !(p.ColdFactor >= 1) {
			d.errAt(v.pos, v.path, "%s: want a factor >= 1, like 3 (Guava's coldFactor)", v.found())
			ok = false
		}
		return p.ColdFactor, ok
	}},
	{"slack", func(e *AlgEntry) Value { return e.Slack.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Slack, ok = d.integer(v, 0, 1<<40, "an integer >= 0 (go.uber.org/ratelimit's WithSlack; 0 is WithoutSlack)")
		p.SlackSet = true
		return p.Slack, ok
	}},
	{"use-effective-count", func(e *AlgEntry) Value { return e.UseEffectiveCount.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.UseEffectiveCount, ok = d.boolean(v)
		return p.UseEffectiveCount, ok
	}},
	{"quota-type", func(e *AlgEntry) Value { return e.QuotaType.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.QuotaType, ok = d.choice(v, "quota-type", []string{algorithms.QuotaCalendar, algorithms.QuotaFlexi, algorithms.QuotaRollingWindow})
		return p.QuotaType, ok
	}},
	{"tier", func(e *AlgEntry) Value { return e.Tier.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.Tier, ok = d.choice(v, "tier", []string{algorithms.AzureClassic, algorithms.AzureV2})
		return p.Tier, ok
	}},
	{"increment-condition", func(e *AlgEntry) Value { return e.IncrementCond.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.IncrementLate, ok = d.boolean(v)
		return p.IncrementLate, ok
	}},
	{"mitigation-timeout", func(e *AlgEntry) Value { return e.MitigationTimeout.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.MitigationTimeout, ok = d.duration(v, true)
		return p.MitigationTimeout.String(), ok
	}},
	{"quota-offset", func(e *AlgEntry) Value { return e.QuotaOffset.Value }, func(d *decoder, v val, p *algorithms.Params) (any, bool) {
		var ok bool
		p.QuotaOffset, ok = d.integer(v, 0, 1<<40, "an integer >= 0 (API Gateway's QuotaSettings offset)")
		return p.QuotaOffset, ok
	}},
}

// knownNames are the names a misspelt algorithm is matched against: every
// listed one, then the rows a scenario must name (the vendors' rows,
// haproxy, all-of), which no error message lists.
func knownNames() []string {
	names := algorithms.Names()
	for _, a := range algorithms.OptIn() {
		names = append(names, a.Name)
	}
	return append(names, "all-of")
}

// discreteRate makes a token-bucket row with fill-interval D and
// tokens-per-fill N show its rate: rate N per D when the row writes
// neither rate nor per (the scenario's are not its refill), else the rate
// and per written must be the same rate, N*per = rate*D.
func (d *decoder) discreteRate(m *mapping, p *algorithms.Params, written map[string]val) bool {
	rv, rateSet := written["rate"]
	pv, perSet := written["per"]
	if !rateSet && !perSet {
		p.Rate, p.Per, p.Calendar = p.TokensPerFill, p.FillInterval, algorithms.NotCalendar
		return true
	}
	nh, nl := bits.Mul64(uint64(p.TokensPerFill), uint64(p.Per))
	lh, ll := bits.Mul64(uint64(p.Rate), uint64(p.FillInterval))
	if nh == lh && nl == ll && p.Calendar == algorithms.NotCalendar {
		return true
	}
	at := rv
	if !rateSet {
		at = pv
	}
	d.errAt(at.pos, at.path, "rate %d per %s is not tokens-per-fill %d per fill-interval %v, which is the refill: leave rate and per out (they are then %d per %v), or write the same rate",
		p.Rate, p.PerString(), p.TokensPerFill, p.FillInterval, p.TokensPerFill, p.FillInterval)
	return false
}

// sourceSpec is one parsed traffic source and what the duration needs.
type sourceSpec struct {
	v      val
	typ    string
	src    traffic.Source
	common *traffic.Common
	endSet bool
	end    time.Duration
	start  val
	ref    *replayRef // a replay's path
	// attrs are the attributes the source gives its requests beside their
	// key (its attributes field), or nil
	attrs map[string]string
}

// traffic reads the list of sources; per is the policy's W, the default
// every of an aligned source (limOK says whether it is the policy's).
func (d *decoder) traffic(v val, srcs []Source, per time.Duration, limOK bool) ([]*sourceSpec, bool) {
	if !v.set {
		d.missing(v, "a list of traffic sources")
		return nil, false
	}
	items, ok := d.list(v, "a list of traffic sources", len(srcs), func(int) Value { return Value{Kind: Mapping} })
	if !ok {
		return nil, false
	}
	if len(items) == 0 {
		d.errAt(v.pos, v.path, "empty list (want at least one traffic source)")
		return nil, false
	}
	var out []*sourceSpec
	all := true
	for i, it := range items {
		s, ok := d.source(it, &srcs[i], per, limOK)
		if ok {
			out = append(out, s)
		}
		all = all && ok
	}
	return out, all
}

func (d *decoder) source(it val, src *Source, per time.Duration, limOK bool) (*sourceSpec, bool) {
	supported := sourceTypes
	m, ok := d.mapping(it, "a mapping with a type ("+orList(supported)+")", src)
	if !ok {
		return nil, false
	}
	tv := m.get("type", src.Type.Value)
	if !tv.set {
		d.missing(tv, orList(supported))
		return nil, false
	}
	typ, ok := d.str(tv, true)
	if !ok {
		return nil, false
	}
	if sourceFields[typ] == nil {
		d.errAt(tv.pos, tv.path, "%s: unknown type (want %s)", quote(typ), orList(supported))
		return nil, false
	}
	own := sourceFields[typ]
	common := commonFields
	if typ == "replay" {
		common = replayCommon
	}
	allowed := append(slices.Clone(common), own...)
	good := true
	d.allow(m, allowed, func(k string) string {
		if typ == "replay" && slices.Contains(commonFields, k) {
			good = false
			return "does not apply to a replay source: its keys come from the trace (set key-field: a log's ip or user, a column, or none for one key)"
		}
		return fmt.Sprintf("unknown field (%s %s source takes %s and %s)", article(typ), typ, strings.Join(own, ", "), strings.Join(common, ", "))
	})
	s := &sourceSpec{v: it, typ: typ, start: m.get("start", src.Start.Value)}
	c, ok := d.sourceCommon(m, src, typ, s)
	return s, d.sourceOfType(m, src, typ, c, s, per, limOK, good && ok)
}

// sourceCommon reads the fields every source type takes (a replay only
// cost, start, end and retry) into s and the Common they make.
func (d *decoder) sourceCommon(m *mapping, src *Source, typ string, s *sourceSpec) (traffic.Common, bool) {
	good := true
	c := traffic.Common{Cost: 1, Clients: traffic.Clients{Key: defaultKey}}

	kv, cv, pv := m.get("key", src.Key.Value), m.get("clients", src.Clients.Value), m.get("key-prefix", src.KeyPrefix.Value)
	if typ == "replay" {
		kv, cv, pv = val{}, val{}, val{} // reported above
	}
	switch {
	case kv.set && cv.set:
		later := later(m, "key", "clients")
		d.errAt(m.keyPos[later], join(m.path, later), "want key or clients, not both")
		good = false
	case kv.set:
		key, ok := d.str(kv, true)
		c.Clients.Key, good = key, good && ok
	case cv.set:
		n, ok := d.integer(cv, 1, maxClients, fmt.Sprintf("an integer from 1 to %d", maxClients))
		c.Clients = traffic.Clients{N: int(n), Prefix: defaultPrefix}
		good = good && ok
	}
	if pv.set {
		if !cv.set {
			d.errAt(m.keyPos["key-prefix"], pv.path, "applies only with clients")
			good = false
		} else {
			prefix, ok := d.str(pv, true)
			c.Clients.Prefix, good = prefix, good && ok
		}
	}
	if v := m.get("cost", src.Cost.Value); v.set {
		cost, ok := d.integer(v, 1, math.MaxInt64, "an integer >= 1")
		c.Cost, good = cost, good && ok
	}
	startOK := true
	if s.start.set {
		c.Start, startOK = d.duration(s.start, false)
		good = good && startOK
	}
	if v := m.get("end", src.End.Value); v.set {
		end, ok := d.duration(v, true)
		if ok && startOK && end <= c.Start {
			d.errAt(v.pos, v.path, "%s: want an end after start %v", v.found(), c.Start)
			ok = false
		}
		s.end, s.endSet, good = end, true, good && ok
		c.End = end
	}
	if v := m.get("retry", sectionOf(src.Retry)); v.set {
		rp, ok := d.retry(v, src.Retry)
		c.Retry, good = &rp, good && ok
	}
	if v := m.get("attributes", attributesOf(src.Attributes)); v.set {
		attrs, ok := d.attributes(v, src.Attributes)
		s.attrs, good = attrs, good && ok
	}
	return c, good
}

// sourceOfType reads the fields of a source's own type into s; good says
// whether its common fields were read.
func (d *decoder) sourceOfType(m *mapping, in *Source, typ string, c traffic.Common, s *sourceSpec, per time.Duration, limOK, good bool) bool {
	switch typ {
	case "times":
		src, ok := d.timesSource(m, in, c, good)
		s.src, s.common, good = src, &src.Common, ok
	case "burst":
		src, ok := d.burstSource(m, in, c, good)
		s.src, s.common, good = src, &src.Common, ok
	case "steady":
		src, ok := d.steadySource(m, in, c, good)
		s.src, s.common, good = src, &src.Common, ok
	case "poisson":
		src, ok := d.poissonSource(m, in, c, good)
		s.src, s.common, good = src, &src.Common, ok
	case "aligned":
		src, ok := d.alignedSource(m, in, c, per, limOK, good)
		s.src, s.common, good = src, &src.Common, ok
	case "onoff":
		src, ok := d.onoffSource(m, in, c, good)
		s.src, s.common, good = src, &src.Common, ok
	case "ramp":
		src, ok := d.rampSource(m, in, c, good)
		s.src, s.common, good = src, &src.Common, ok
	case "replay":
		src, ref, ok := d.replay(m, in, c, good)
		s.src, s.common, s.ref, good = src, &src.Common, ref, ok
	}
	return good
}

// timesSource reads the fields of a times source.
func (d *decoder) timesSource(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.Times, bool) {
	src := &traffic.Times{Common: c}
	av := m.get("at", in.At.written())
	if !av.set {
		d.missing(av, "a list of instants like [0ms, 400ms]")
		good = false
	} else if items, ok := d.list(av, "a list of instants like [0ms, 400ms]", len(in.At.List), func(i int) Value { return in.At.List[i].Value }); ok {
		if len(items) == 0 {
			d.errAt(av.pos, av.path, "empty list (want at least one instant)")
			good = false
		}
		for _, item := range items {
			t, ok := d.duration(item, false)
			if ok && t == math.MaxInt64 { // its end, t+1ns, would overflow
				d.errAt(item.pos, item.path, "%s: want an instant before %v", item.found(), time.Duration(t))
				ok = false
			}
			src.At, good = append(src.At, t), good && ok
		}
	} else {
		good = false
	}
	return src, good
}

// burstSource reads the fields of a burst source.
func (d *decoder) burstSource(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.Burst, bool) {
	src := &traffic.Burst{Common: c}
	if av := m.get("at", in.At.written()); av.set {
		at, ok := d.duration(av, false)
		src.At, good = at, good && ok
	} else {
		d.missing(av, "a duration >= 0: the instant of the first request")
		good = false
	}
	if nv := m.get("count", in.Count.Value); nv.set {
		n, ok := d.integer(nv, 1, math.MaxInt64, "an integer >= 1")
		src.Count, good = n, good && ok
	} else {
		d.missing(nv, "an integer >= 1: the requests each client sends")
		good = false
	}
	if ov := m.get("over", in.Over.Value); ov.set {
		over, ok := d.duration(ov, false)
		src.Over, good = over, good && ok
	}
	if good && src.At >= math.MaxInt64-src.Over { // its end, at+over+1ns, would overflow
		d.errAt(m.keyPos["at"], join(m.path, "at"), "at + over is beyond the largest time %v", time.Duration(math.MaxInt64))
		good = false
	}
	return src, good
}

// steadySource reads the fields of a steady source.
func (d *decoder) steadySource(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.Steady, bool) {
	src := &traffic.Steady{Common: c}
	if rv := m.get("rate", in.Rate.Value); rv.set {
		r, ok := d.rate(rv)
		src.Rate, good = r, good && ok
	} else {
		d.missing(rv, "a rate like 10/s, 600/m or 5/100ms")
		good = false
	}
	return src, good
}

// poissonSource reads the fields of a poisson source.
func (d *decoder) poissonSource(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.Poisson, bool) {
	src := &traffic.Poisson{Common: c}
	src.Rate, good = d.sourceRate(m.get("rate", in.Rate.Value), good)
	src.KeyDist, src.ZipfS, good = d.keyDist(m, in, c.Clients.N > 0, good)
	return src, good
}

// alignedSource reads the fields of an aligned source.
func (d *decoder) alignedSource(m *mapping, in *Source, c traffic.Common, per time.Duration, limOK bool, good bool) (*traffic.Aligned, bool) {
	src := &traffic.Aligned{Common: c}
	src.Every, src.Offset, src.Count, src.Over, good = d.aligned(m, in, per, limOK, good)
	return src, good
}

// onoffSource reads the fields of an onoff source.
func (d *decoder) onoffSource(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.OnOff, bool) {
	src := &traffic.OnOff{Common: c}
	src.Rate, good = d.sourceRate(m.get("rate", in.Rate.Value), good)
	for _, f := range []struct {
		name, want string
		x          Value
		dst        *time.Duration
	}{
		{"on", "a duration > 0: how long the source sends, each time", in.On.Value, &src.On},
		{"off", "a duration > 0: how long the source is silent, each time", in.Off.Value, &src.Off},
	} {
		v := m.get(f.name, f.x)
		if !v.set {
			d.missing(v, f.want)
			good = false
			continue
		}
		dur, ok := d.duration(v, true)
		*f.dst, good = dur, good && ok
	}
	return src, good
}

// rampSource reads the fields of a ramp source.
func (d *decoder) rampSource(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.Ramp, bool) {
	src := &traffic.Ramp{Common: c}
	if v := m.get("from", in.From.Value); v.set {
		r, ok := d.rateWith(v, 0, "")
		src.From, good = r, good && ok
	} else {
		d.missing(v, "a rate like 0/s or 10/s: the rate at start")
		good = false
	}
	if v := m.get("to", in.To.Value); v.set {
		r, ok := d.rateWith(v, 1, "the count must be at least 1 ("+wantRate+"; only from may be 0/s)")
		src.To, good = r, good && ok
	} else {
		d.missing(v, "a rate like 10/s: the rate at end")
		good = false
	}
	return src, good
}

// sourceRate reads the required rate of a steady, poisson or onoff source.
func (d *decoder) sourceRate(rv val, good bool) (traffic.Rate, bool) {
	if !rv.set {
		d.missing(rv, "a rate like 10/s, 600/m or 5/100ms")
		return traffic.Rate{}, false
	}
	r, ok := d.rate(rv)
	return r, good && ok
}

// keyDist reads a poisson source's key-dist and zipf-s: with clients, the
// distribution (default uniform) and for zipf its exponent (default 1.1);
// with a single key, neither.
func (d *decoder) keyDist(m *mapping, in *Source, clients bool, good bool) (traffic.KeyDist, float64, bool) {
	dv, sv := m.get("key-dist", in.KeyDist.Value), m.get("zipf-s", in.ZipfS.Value)
	if !clients {
		for _, f := range []struct {
			k string
			v val
		}{{"key-dist", dv}, {"zipf-s", sv}} {
			if f.v.set {
				d.errAt(m.keyPos[f.k], f.v.path, "applies only with clients (a single key has no distribution)")
				good = false
			}
		}
		return "", 0, good
	}
	dist, distOK := traffic.KeyUniform, true
	if dv.set {
		name, ok := d.choice(dv, "key-dist", keyDists)
		if ok {
			dist = traffic.KeyDist(name)
		}
		distOK, good = ok, good && ok
	}
	switch {
	case !sv.set && dist == traffic.KeyZipf:
		return dist, defaultZipfS, good
	case !sv.set:
		return dist, 0, good
	case !dv.set:
		d.errAt(m.keyPos["zipf-s"], sv.path, "applies only with key-dist: zipf (the default is uniform)")
		return dist, 0, false
	case dist != traffic.KeyZipf:
		if distOK { // else key-dist's own error says enough
			d.errAt(m.keyPos["zipf-s"], sv.path, "applies only with key-dist: zipf")
		}
		return dist, 0, false
	}
	const want = "a number > 1 like 1.1"
	x, ok := d.number(sv, want)
	if ok && !(x > 1) {
		d.errAt(sv.pos, sv.path, "%s: a zipf exponent <= 1 (want %s)", sv.found(), want)
		ok = false
	}
	return dist, x, good && ok
}

// aligned reads an aligned source's every (default the policy's per W),
// offset (default 0, may be negative), count (default 1) and over (default
// 0), with |offset| < every and over < every.
func (d *decoder) aligned(m *mapping, in *Source, per time.Duration, limOK bool, good bool) (every, offset time.Duration, count int64, over time.Duration, _ bool) {
	every, count = per, 1
	everyOK, everyNote := limOK, " (the policy's per)"
	if v := m.get("every", in.Every.Value); v.set {
		every, everyOK = d.duration(v, true)
		good, everyNote = good && everyOK, ""
	}
	if v := m.get("offset", in.Offset.Value); v.set {
		off, ok := d.signedDuration(v)
		if ok && everyOK && (off <= -every || off >= every) {
			d.errAt(v.pos, v.path, "%s: want |offset| < every %v%s", v.found(), every, everyNote)
			ok = false
		}
		offset, good = off, good && ok
	}
	if v := m.get("count", in.Count.Value); v.set {
		n, ok := d.integer(v, 1, math.MaxInt64, "an integer >= 1")
		count, good = n, good && ok
	}
	if v := m.get("over", in.Over.Value); v.set {
		o, ok := d.duration(v, false)
		if ok && everyOK && o >= every {
			d.errAt(v.pos, v.path, "%s: want over < every %v%s, so that occurrences do not overlap", v.found(), every, everyNote)
			ok = false
		}
		over, good = o, good && ok
	}
	return every, offset, count, over, good
}

// article is "a" or "an" before a source type.
func article(typ string) string {
	if strings.ContainsRune("aeiou", rune(typ[0])) {
		return "an"
	}
	return "a"
}

// report reads report.windows and report.bucket; their defaults are W and
// W/10 (rounded down, at least 1ns).
func (d *decoder) report(v val, r *Report, per time.Duration) (windows []time.Duration, bucket time.Duration, named bool) {
	tenth := max(per/10, 1)
	windows = []time.Duration{per}
	if tenth != per {
		windows = append(windows, tenth)
	}
	bucket = tenth
	if !v.set {
		return windows, bucket, named
	}
	m, ok := d.mapping(v, "a mapping {windows, bucket}", r)
	if !ok {
		return windows, bucket, named
	}
	d.allow(m, reportFields, func(string) string { return "unknown field (want windows or bucket)" })
	if wv := m.get("windows", listOf(r.Windows)); wv.set {
		named = true
		const want = "a list of durations > 0 like [1s, 100ms]"
		if items, ok := d.list(wv, want, len(r.Windows), func(i int) Value { return r.Windows[i].Value }); ok {
			if len(items) == 0 {
				d.errAt(wv.pos, wv.path, "empty list (want %s)", want)
			}
			windows = nil
			seen := map[time.Duration]string{}
			for _, it := range items {
				w, ok := d.duration(it, true)
				if !ok {
					continue
				}
				if first, dup := seen[w]; dup {
					d.errAt(it.pos, it.path, "%s: duplicate window (also %s)", it.found(), first)
					continue
				}
				seen[w] = it.path
				windows = append(windows, w)
			}
		}
	}
	if bv := m.get("bucket", r.Bucket.Value); bv.set {
		if b, ok := d.duration(bv, true); ok {
			bucket = b
		}
	}
	return windows, bucket, named
}

// allOf reads an all-of entry (docs/algorithms.md): its commit mode and its
// limits, each an algorithm entry of its own (one of
// algorithms.AllOfMembers) under the scenario's policy.
func (d *decoder) allOf(it val, m *mapping, e *AlgEntry, nameVal val, lim limitInfo, limOK bool, svc service, ci clusterInfo) (Algorithm, val, bool) {
	const wantLimits = "a list of limits, e.g. limits: [{name: nginx, rate: 10, per: 1s, burst: 5}, {name: nginx, rate: 100, per: 1m}]"
	if m == nil {
		d.errAt(it.pos, it.path, "all-of needs its limits: write it as a mapping with %s", wantLimits)
		return Algorithm{}, val{}, false
	}
	allowed := slices.Concat([]string{"name", "label", "commit", "limits"}, coordFields)
	d.allow(m, allowed, func(k string) string {
		return fmt.Sprintf("all-of takes no option %q (its options: label, commit, limits; rate, per and burst go in each limit)", k)
	})
	good := true
	for _, k := range m.keys {
		good = good && slices.Contains(allowed, k)
	}
	a := Algorithm{Name: "all-of", Label: "all-of", Set: map[string]any{},
		Params: algorithms.Params{Policy: lim.policy, Service: svc.service, Commit: algorithms.AllOrNothing}}
	// on a cluster: local, central or racy (cluster.ModesOf), each member
	// keeping its state where the mode says
	coord, ok := d.coordination(it, m, e, "all-of", a.Params.Policy, ci)
	a.Coord, good = coord, good && ok
	labelVal := it
	if v := m.get("label", e.Label.Value); v.set {
		var ok bool
		a.Label, ok = d.str(v, true)
		labelVal, good = v, good && ok
	}
	if v := m.get("commit", e.Commit.Value); v.set {
		c, ok := d.str(v, true)
		if ok && !slices.Contains(algorithms.Commits, algorithms.Commit(c)) {
			var names []string
			for _, k := range algorithms.Commits {
				names = append(names, string(k))
			}
			d.errAt(v.pos, v.path, "%s: unknown commit (want %s)", quote(c), orList(names))
			ok = false
		}
		a.Params.Commit, good = algorithms.Commit(c), good && ok
	}
	a.Set["commit"] = string(a.Params.Commit)
	lv := m.get("limits", listOf(e.Limits))
	if !lv.set {
		d.missing(lv, wantLimits)
		return Algorithm{}, val{}, false
	}
	items, ok := d.list(lv, wantLimits, len(e.Limits), func(i int) Value { return e.Limits[i].written() })
	if !ok {
		return Algorithm{}, val{}, false
	}
	if len(items) == 0 {
		d.errAt(lv.pos, lv.path, "empty list (want %s)", wantLimits)
		return Algorithm{}, val{}, false
	}
	var sets []map[string]any
	for i, item := range items {
		d.member, d.memberBy = true, val{}
		ma, _, ok := d.algorithm(item, &e.Limits[i], lim, limOK, svc, clusterInfo{})
		d.member = false
		if !ok {
			good = false
			continue
		}
		if !slices.Contains(algorithms.AllOfMembers, ma.Name) && !slices.Contains(algorithms.AllOfOptInMembers, ma.Name) &&
			!slices.Contains(algorithms.AllOfCountingMembers, ma.Name) {
			at := item
			if !isString(item.n) {
				if mm, ok := d.mapping(item, wantAlgorithm, &e.Limits[i]); ok {
					at = mm.get("name", e.Limits[i].Name.Value)
				}
			}
			d.errAt(at.pos, at.path, "%s: an all-of limit must be %s (the algorithms that can check a request without charging it)",
				quote(ma.Name), orList(algorithms.AllOfMembers))
			good = false
			continue
		}
		if slices.Contains(algorithms.AllOfCountingMembers, ma.Name) && a.Params.Commit == algorithms.AllOrNothing {
			d.errAt(item.pos, item.path, "%s: an all-of with it needs commit: %s or %s",
				strings.Replace(algorithms.CountingWhy(ma.Name), ma.Name, quote(ma.Name), 1), algorithms.EveryHit, algorithms.InOrder)
			good = false
			continue
		}
		if slices.Contains(algorithms.AllOfCountingMembers, ma.Name) && ci.set && coord.Mode != "" && coord.Mode != cluster.Local {
			d.errAt(item.pos, item.path, "%s keeps no state in a store: on a cluster an all-of with it runs coordination: %s (found %s)",
				quote(ma.Name), cluster.Local, coord.Mode)
			good = false
			continue
		}
		mem := algorithms.Member{Name: ma.Name, Params: ma.Params}
		if e.Limits[i].Label.Set() {
			mem.Label = ma.Label
		}
		a.Params.Members = append(a.Params.Members, mem)
		a.by = append(a.by, d.memberBy)
		set := map[string]any{"name": ma.Name}
		for k, v := range ma.Set {
			set[k] = v
		}
		if d.memberBy.set {
			by, _ := d.str(d.memberBy, true)
			set["by"] = by
		}
		sets = append(sets, set)
	}
	a.Set["limits"] = sets
	if good && len(a.Params.Members) == len(items) {
		good = d.storeMembers(&a, items, e)
	}
	if wv := m.get("write", e.Write.Value); wv.set && good && a.Coord.Write == cluster.WriteIncr && !cluster.AllOfIncrWrites(a.Params.Commit, a.Params.Members) {
		d.errAt(wv.pos, wv.path, `"incr": an all-of row writes back by INCRBY only with commit all-or-nothing and fixed-window or sliding-window limits (want set)`)
		good = false
	}
	if !good {
		return Algorithm{}, val{}, false
	}
	if limOK {
		if err := build("all-of", a.Params); err != nil {
			d.paramErr(err, nil, it, a.Label, lim, svc)
			return Algorithm{}, val{}, false
		}
	}
	return a, labelVal, true
}
