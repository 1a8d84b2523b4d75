package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// This file reads the backend section (docs/scenario-file.md and docs/backend.md) and a retry
// policy's on.

const (
	// maxWorkers bounds backend.workers.
	maxWorkers  = 1_000_000
	wantWorkers = "an integer from 1 to 1000000"
	// wantService is what backend.service takes with workers.
	wantService       = "a duration (constant) or a mapping {dist: exponential, mean: 20ms} or {dist: lognormal, mean: 20ms, p99: 120ms}"
	wantQueue         = "an integer >= 0 or unbounded"
	wantErrors        = "a fraction from 0 to 1 like 0.01"
	wantBackendFaults = "a list of faults like {type: slow, at: 20s, for: 10s, factor: 5}"
)

var (
	backendFields = fieldNames[Backend]()
	serviceFields = fieldNames[Service]()
	dists         = names([]backend.Dist{backend.Constant, backend.Exponential, backend.Lognormal})
	disciplines   = names([]backend.Discipline{backend.FIFO, backend.LIFO})
	// backendFaultTypes are the backend's fault types, in the order
	// messages list them.
	backendFaultTypes  = []backend.FaultType{backend.Slow, backend.Pause, backend.Workers, backend.Trigger}
	backendFaultFields = fieldNames[BackendFault]()
	// backendFaultApplies lists the fields each fault type takes.
	backendFaultApplies = map[backend.FaultType][]string{
		backend.Slow:    {"type", "at", "for", "factor"},
		backend.Pause:   {"type", "at", "for"},
		backend.Workers: {"type", "at", "for", "count"},
		backend.Trigger: {"type", "at", "for"},
	}
	causeNames = func() []string {
		out := make([]string, len(traffic.Causes))
		for i, c := range traffic.Causes {
			out[i] = c.String()
		}
		return out
	}()
)

// service is what the algorithms assume of the backend: the time an
// admitted request spends there (backend.service, or its mean with
// workers), and where it was written.
type service struct {
	service time.Duration
	v       val
}

// backendInfo is the backend section as the rest of the file needs it.
type backendInfo struct {
	svc service
	// workers says the section writes workers (even an invalid value: the
	// retries' on is then not reported as needing them).
	workers bool
	// cfg is the model, nil without workers or when the section has an
	// error.
	cfg    *backend.Config
	faults []backendFaultRef
}

// backendFaultRef is one valid fault and where it was written.
type backendFaultRef struct {
	v  val // the fault's mapping
	at val
	f  backend.Fault
}

// backend reads the backend section: without workers only service, a
// duration >= 0 (default 0), the pure delay of docs/scenario-file.md; with
// workers the model of docs/backend.md, with its defaults filled in (see
// docs/scenario-file.md).
func (d *decoder) backend(v val, b *Backend) backendInfo {
	var bi backendInfo
	if !v.set {
		return bi
	}
	m, ok := d.mapping(v, "a mapping {workers, service, queue, discipline, timeout, drop-expired, errors, faults, latency}", b)
	if !ok {
		return bi
	}
	wv := m.get("workers", b.Workers.Value)
	bi.workers = wv.set
	if !wv.set {
		d.allow(m, []string{"service"}, func(k string) string {
			if slices.Contains(backendFields, k) {
				return "needs workers (add backend.workers: the number of servers; without workers the backend is a pure delay and takes only service)"
			}
			return unknownField(backendFields)(k)
		})
		sv := m.get("service", b.Service.written())
		if sv.ok() {
			if isMap(sv.n) {
				d.errAt(sv.pos, sv.path, "a distribution needs workers (add backend.workers, or write the pure delay as a duration like 20ms)")
				return bi
			}
		}
		dur, _ := d.duration(sv, false)
		bi.svc = service{dur, sv}
		return bi
	}
	d.allow(m, backendFields, unknownField(backendFields))
	cfg := &backend.Config{Queue: backend.Unbounded, Discipline: backend.FIFO}
	good := true
	n, ok := d.integer(wv, 1, maxWorkers, wantWorkers)
	cfg.Workers, good = int(n), good && ok
	workers := 0 // when valid, for the faults' count
	if ok {
		workers = int(n)
	}

	sv := m.get("service", b.Service.written())
	if !sv.set {
		d.missing(sv, wantService)
		good = false
	} else {
		s, mean, ok := d.serviceDist(sv, b.Service)
		cfg.Service, good = s, good && ok
		bi.svc = service{s.Mean, mean}
	}
	if qv := m.get("queue", b.Queue.Value); qv.set {
		if isString(qv.n) && qv.n.Text == "unbounded" {
			cfg.Queue = backend.Unbounded
		} else {
			q, ok := d.integer(qv, 0, math.MaxInt, wantQueue)
			cfg.Queue, good = int(q), good && ok
		}
	}
	if dv := m.get("discipline", b.Discipline.Value); dv.set {
		s, ok := d.choice(dv, "discipline", disciplines)
		cfg.Discipline, good = backend.Discipline(s), good && ok
	}
	timeoutOK := true
	if tv := m.get("timeout", b.Timeout.Value); tv.set {
		cfg.Timeout, timeoutOK = d.duration(tv, false)
		good = good && timeoutOK
	}
	if xv := m.get("drop-expired", b.DropExpired.Value); xv.set {
		b, ok := d.boolean(xv)
		if ok && b && timeoutOK && cfg.Timeout == 0 {
			d.errAt(xv.pos, xv.path, "true: applies only with a timeout > 0 (without one no client gives up, and nothing expires)")
			ok = false
		}
		cfg.DropExpired, good = b, good && ok
	}
	if ev := m.get("errors", b.Errors.Value); ev.set {
		x, ok := d.number(ev, wantErrors)
		if ok && !(x >= 0 && x <= 1) {
			d.errAt(ev.pos, ev.path, "%s: outside [0, 1] (want %s)", ev.found(), wantErrors)
			ok = false
		}
		cfg.Errors, good = x, good && ok
	}
	if lv := m.get("latency", b.Latency.Value); lv.set {
		l, ok := d.duration(lv, false)
		cfg.Latency, good = l, good && ok
	}
	faults, faultsOK := d.backendFaults(m.get("faults", listOf(b.Faults)), b.Faults, workers)
	bi.faults = faults
	for _, f := range bi.faults {
		cfg.Faults = append(cfg.Faults, f.f)
	}
	if !good || !faultsOK {
		return bi
	}
	// Every rule above is the backend's own; its validation is the last
	// word (with a placeholder bucket: the report's comes later).
	check := *cfg
	check.Bucket = 1
	if err := check.Validate(); err != nil {
		d.errAt(v.pos, v.path, "%v", err)
		return bi
	}
	bi.cfg = cfg
	return bi
}

// serviceDist reads backend.service with workers: a duration, constant, or
// a mapping {dist, mean, p99}. It returns where the mean was written.
func (d *decoder) serviceDist(v val, sv *Service) (backend.Service, val, bool) {
	if !v.ok() {
		return backend.Service{}, v, false
	}
	switch {
	case isMap(v.n):
	case isScalar(v.n):
		dur, ok := d.duration(v, false)
		return backend.Service{Dist: backend.Constant, Mean: dur}, v, ok
	default:
		d.typeErr(v, wantService)
		return backend.Service{}, v, false
	}
	m, _ := d.mapping(v, wantService, sv)
	d.allow(m, serviceFields, unknownField(serviceFields))
	dv, mv, pv := m.get("dist", sv.Dist.Value), m.get("mean", sv.Mean.Value), m.get("p99", sv.P99.Value)
	if !dv.set {
		d.missing(dv, orList(dists))
		return backend.Service{}, mv, false
	}
	s, ok := d.choice(dv, "distribution", dists)
	if !ok {
		return backend.Service{}, mv, false
	}
	svc := backend.Service{Dist: backend.Dist(s)}
	good := true
	if !mv.set {
		what := "a duration > 0: the mean service time"
		if svc.Dist == backend.Constant {
			what = "a duration >= 0: the service time"
		}
		d.missing(mv, what)
		good = false
	} else {
		dur, ok := d.duration(mv, svc.Dist != backend.Constant)
		svc.Mean, good = dur, good && ok
	}
	if svc.Dist != backend.Lognormal {
		if pv.set {
			d.errAt(m.keyPos["p99"], pv.path, "applies only to dist: lognormal (%s %s distribution is given by its mean)", article(string(svc.Dist)), svc.Dist)
			good = false
		}
		return svc, mv, good
	}
	if !pv.set {
		d.missing(pv, "a duration >= the mean: the lognormal's 99th percentile")
		return svc, mv, false
	}
	p99, ok := d.duration(pv, true)
	svc.P99, good = p99, good && ok
	if !good {
		return svc, mv, false
	}
	// the lognormal's own rule: a p99 from the mean to exp(z99^2/2) times it
	check := backend.Config{Workers: 1, Bucket: 1, Service: svc}
	if err := check.Validate(); err != nil {
		d.errAt(pv.pos, pv.path, "%s", strings.TrimPrefix(err.Error(), "service: "))
		return svc, mv, false
	}
	return svc, mv, true
}

// backendFaults reads backend.faults for a backend of workers (0 when
// workers is invalid); faults of one type may not overlap.
func (d *decoder) backendFaults(v val, fs []BackendFault, workers int) ([]backendFaultRef, bool) {
	if !v.set {
		return nil, true
	}
	items, ok := d.list(v, wantBackendFaults, len(fs), func(int) Value { return Value{Kind: Mapping} })
	if !ok {
		return nil, false
	}
	var out []backendFaultRef
	good := true
	for i, it := range items {
		f, ok := d.backendFault(it, &fs[i], workers)
		if ok {
			out = append(out, f)
		}
		good = good && ok
	}
	return out, d.backendOverlaps(out) && good
}

// backendFault reads one fault.
func (d *decoder) backendFault(it val, bf *BackendFault, workers int) (backendFaultRef, bool) {
	m, s, good, ok := d.faultHead(it, bf, bf.Type.Value, names(backendFaultTypes), backendFaultFields,
		func(typ string) []string { return backendFaultApplies[backend.FaultType(typ)] }, nil)
	if !ok {
		return backendFaultRef{}, false
	}
	typ := backend.FaultType(s)
	at, start, atOK := d.faultStart(m.get("at", bf.At.Value))
	f := backendFaultRef{v: it, at: at, f: backend.Fault{Type: typ, At: start}}
	var forOK bool
	f.f.For, forOK = d.faultLength(m.get("for", bf.For.Value), at, start, atOK)
	good = good && atOK && forOK
	switch typ {
	case backend.Slow:
		const want = "a number > 0 like 5: the service times' multiplier"
		xv := m.get("factor", bf.Factor.Value)
		if !xv.set {
			d.missing(xv, want)
			return f, false
		}
		x, ok := d.number(xv, want)
		if ok && !(x > 0) {
			d.errAt(xv.pos, xv.path, "%s: want %s", xv.found(), want)
			ok = false
		}
		f.f.Factor, good = x, good && ok
	case backend.Workers:
		want := fmt.Sprintf("an integer from 0 to %d: the workers left, fewer than the %d of the backend", workers-1, workers)
		hi := int64(workers - 1)
		if workers == 0 { // workers is invalid, and reported
			want, hi = "an integer >= 0: the workers left", maxWorkers-1
		}
		cv := m.get("count", bf.Count.Value)
		if !cv.set {
			d.missing(cv, want)
			return f, false
		}
		n, ok := d.integer(cv, 0, hi, want)
		f.f.Count, good = int(n), good && ok
	}
	return f, good
}

// describeBackendFault writes a fault for a message about overlaps.
func describeBackendFault(f backend.Fault) string {
	return fmt.Sprintf("%s fault over [%v, %v)", f.Type, f.At, f.End())
}

// backendOverlaps reports faults of one type whose windows overlap
// (windows are half-open: one may start where another ends).
func (d *decoder) backendOverlaps(fs []backendFaultRef) bool {
	good := true
	for _, typ := range backendFaultTypes {
		var g []backendFaultRef
		for _, f := range fs {
			if f.f.Type == typ {
				g = append(g, f)
			}
		}
		overlapping(g, func(f backendFaultRef) (time.Duration, time.Duration) { return f.f.At, f.f.End() },
			func(f, last backendFaultRef) {
				d.errAt(f.v.pos, f.v.path, "%s overlaps the %s of %s at %d:%d (want the faults of one type apart: merge them into one)",
					describeBackendFault(f.f), describeBackendFault(last.f), last.v.path, last.v.pos.line, last.v.pos.col)
				good = false
			})
	}
	return good
}

// backendFaultsInRun reports the faults that start at or after the
// scenario's end dur: they would never happen.
func (d *decoder) backendFaultsInRun(bi backendInfo, dur time.Duration) {
	for _, f := range bi.faults {
		if f.f.At >= dur {
			d.errAt(f.at.pos, f.at.path, "%s: at or after the scenario's end %v, so the fault never happens", f.at.found(), dur)
		}
	}
}

// retryOn reads a retry policy's on: a non-empty list of distinct causes.
// Only a backend with workers sheds, times out or fails requests.
func (d *decoder) retryOn(v val, on []String) (traffic.RetryOn, bool) {
	want := "a list of causes: " + orList(causeNames)
	items, ok := d.list(v, want, len(on), func(i int) Value { return on[i].Value })
	if !ok {
		return 0, false
	}
	if len(items) == 0 {
		d.errAt(v.pos, v.path, "empty list (want at least one of %s; policy none retries nothing)", orList(causeNames))
		return 0, false
	}
	var causes []traffic.Cause
	seen := map[traffic.Cause]string{}
	good := true
	for _, it := range items {
		s, ok := d.choice(it, "cause", causeNames)
		if !ok {
			good = false
			continue
		}
		c, _ := traffic.ParseCause(s)
		if first, dup := seen[c]; dup {
			d.errAt(it.pos, it.path, "%s: listed twice (also %s)", quote(s), first)
			good = false
			continue
		}
		seen[c] = it.path
		if c != traffic.CauseReject && !d.workers {
			d.errAt(it.pos, it.path, "%s: only a backend with workers sheds, times out or fails requests (add backend.workers, or retry on reject only)", quote(s))
			good = false
			continue
		}
		causes = append(causes, c)
	}
	return traffic.RetryOnOf(causes...), good
}
