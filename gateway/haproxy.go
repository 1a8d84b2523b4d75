package gateway

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// HAProxyTable is one stick-table: the table of the proxy section that
// declares it, named after that section.
type HAProxyTable struct {
	Name   string // the section's name
	Type   string // ip, ipv6, integer, string or binary
	Size   string // as written; not modelled
	Expire time.Duration
	// HasExpire: an expire is set (without one, entries live until the
	// table is full).
	HasExpire bool
	// Period is http_req_rate's period; 0 when the table does not store
	// http_req_rate.
	Period time.Duration
	Store  string // the store list as written
	Text   string // the line as written
	Where  Pos
}

// HAProxyTrack is one http-request track-scN.
type HAProxyTrack struct {
	SC    int
	Fetch string // the key's sample fetch as written (src, req.hdr(X-Client))
	Key   Key
	Table *HAProxyTable
	Text  string
	Where Pos
	// Cond is the track's if or unless, when it has one: only the
	// requests it holds for are counted (route_haproxy.go)
	Cond *haCond
}

// HAProxyLimit is one frontend or listen section whose http-request deny
// reads the http_req_rate of a tracked counter: the row of that section.
type HAProxyLimit struct {
	Kind string // frontend or listen
	Name string // the section's name
	// Label is the row's label: the section's name
	Label string
	Where Pos // the section's line
	Track *HAProxyTrack
	// Limit is L of the deny's test: a request is denied when the rate
	// read after counting it is > Limit (gt L; ge L is gt L-1).
	Limit  int64
	Status int    // deny_status, default 403
	Deny   string // the deny rule as written
	// Cond is the deny's rate test as written (an anonymous ACL's
	// content, or the named ACL's definition).
	Cond      string
	CondWhere Pos // where Cond is: the deny's line, or the acl's
	DenyWhere Pos
	// Log is the section's log-format (or its defaults'), "" when none;
	// LogWhere is where it is written.
	Log      string
	LogWhere Pos
	// Captures are the request headers the section captures, in order
	// (lower case): what %[capture.req.hdr(N)] logs.
	Captures []string
	// SharedWith are the other sections that count in the same table
	// ("frontend www"): HAProxy counts their requests in the same
	// entries, which the row, fed with this section's requests, does not.
	SharedWith []string
	// Also are the section's further rate denies, in the order of the
	// file, each reading another tracked counter (their Track, Limit,
	// Status and Deny fields are set): the row is then an all-of of this
	// limit and those, with Commit.
	Also []*HAProxyLimit
	// Commit is that all-of's commit: every-hit when every track comes
	// before the first deny (each counter counts every request its track
	// holds for), in-order when each counter's track comes after the
	// previous counter's deny (a denied request runs no later rule, so is
	// not counted further).
	Commit string
}

// denies returns l's rate denies: l, then Also.
func (l *HAProxyLimit) denies() []*HAProxyLimit {
	return append([]*HAProxyLimit{l}, l.Also...)
}

// HAProxy is what an haproxy.cfg limits: its stick tables and, per
// frontend or listen section that denies on a rate, its limit, in the
// order of the file.
type HAProxy struct {
	File   string
	Tables []*HAProxyTable
	Limits []*HAProxyLimit
	// Frontends are the names of the frontend and listen sections, in
	// order: what a log's %f names (route_haproxy.go)
	Frontends []string
}

// hsection is one section of an haproxy.cfg with its lines.
type hsection struct {
	kind, name string
	head       hline
	lines      []hline
	defaults   *hsection // the defaults section before it (a proxy's)
}

// haproxySections are the section keywords of HAProxy 2.6 (cfgparse.c's
// registered sections): a line starting with one starts a new section.
var haproxySections = []string{"global", "defaults", "frontend", "backend", "listen", "peers", "resolvers",
	"userlist", "mailers", "program", "http-errors", "ring", "cache", "fcgi-app", "log-forward", "dynamic-update"}

// ReadHAProxy reads the rate limits of an haproxy.cfg: in each frontend and
// listen section, an http-request deny whose condition tests a tracked
// counter's http_req_rate, the http-request track-scN before it that
// counts each request, and the stick-table (the section's own, or another
// proxy's named by table) that stores http_req_rate(PERIOD). See
// docs/gateways.md for what is read and what is refused.
func ReadHAProxy(file string, data []byte) (*HAProxy, error) {
	lines, err := splitHAProxy(file, data)
	if err != nil {
		return nil, err
	}
	r := &haproxyReader{h: &HAProxy{File: file}, tables: map[string]*HAProxyTable{}, counters: map[*HAProxyTable][]string{}}
	var secs []*hsection
	var defaults *hsection
	for _, l := range lines {
		if slices.Contains(haproxySections, l.arg(0)) {
			s := &hsection{kind: l.arg(0), name: l.arg(1), head: l}
			if s.kind == "frontend" || s.kind == "backend" || s.kind == "listen" {
				if s.name == "" {
					return nil, r.errAt(l, 0, "want a name after %s", s.kind)
				}
				s.defaults = defaults
				if s.kind != "backend" {
					r.h.Frontends = append(r.h.Frontends, s.name)
				}
			}
			if s.kind == "defaults" {
				defaults = s
			}
			secs = append(secs, s)
			continue
		}
		if len(secs) == 0 {
			return nil, r.errAt(l, 0, "outside any section (want global, defaults, frontend, backend or listen first)")
		}
		s := secs[len(secs)-1]
		s.lines = append(s.lines, l)
	}
	// Tables first: a track-sc may name a table declared further down.
	for _, s := range secs {
		if err := r.collectTable(s); err != nil {
			return nil, err
		}
	}
	for _, s := range secs {
		if err := r.proxy(s); err != nil {
			return nil, err
		}
	}
	for _, l := range r.h.Limits {
		for _, name := range r.counters[l.Track.Table] {
			if name != l.Kind+" "+l.Name {
				l.SharedWith = append(l.SharedWith, name)
			}
		}
	}
	if len(r.h.Limits) == 0 {
		return nil, &Error{File: file, Msg: "no limits at all: no frontend or listen section has an http-request deny on a tracked sc_http_req_rate"}
	}
	return r.h, nil
}

type haproxyReader struct {
	h      *HAProxy
	tables map[string]*HAProxyTable
	// counters lists, per table, the sections that count in it
	// (track-sc), each once, in order.
	counters map[*HAProxyTable][]string
}

func (r *haproxyReader) pos(l hline, w int) Pos {
	col := 1
	if w < len(l.words) {
		col = l.words[w].col
	}
	return Pos{File: r.h.File, Line: l.line, Col: col}
}

// errAt is an Error at word w of l, naming the directive (the line's
// first words: "http-request deny", "stick-table").
func (r *haproxyReader) errAt(l hline, w int, format string, args ...any) error {
	p := r.pos(l, w)
	return &Error{File: p.File, Line: p.Line, Col: p.Col, Path: directiveName(l), Msg: fmt.Sprintf(format, args...)}
}

// errCol is errAt at column col of l.
func (r *haproxyReader) errCol(l hline, col int, format string, args ...any) error {
	return &Error{File: r.h.File, Line: l.line, Col: col, Path: directiveName(l), Msg: fmt.Sprintf(format, args...)}
}

func directiveName(l hline) string {
	name := l.arg(0)
	switch name {
	case "http-request", "tcp-request", "http-response", "http-after-response":
		if a := l.arg(1); a != "" {
			name += " " + a
		}
		if l.arg(0) == "tcp-request" && l.arg(2) != "" {
			name += " " + l.arg(2)
		}
	}
	return name
}

// collectTable reads the stick-table of a frontend, backend or listen
// section: stick-table type T [len N] size N [expire T] [nopurge] [peers P]
// [srvkey K] [write-to T] [store DATA[,DATA...]].
func (r *haproxyReader) collectTable(s *hsection) error {
	for _, l := range s.lines {
		if l.arg(0) != "stick-table" {
			continue
		}
		if s.kind != "frontend" && s.kind != "backend" && s.kind != "listen" {
			return r.errAt(l, 0, "in a %s section: stick-table belongs in a frontend, backend or listen section", s.kind)
		}
		if prev, dup := r.tables[s.name]; dup {
			return r.errAt(l, 0, "a second stick-table in %s %s (the first at line %d)", s.kind, s.name, prev.Where.Line)
		}
		t := &HAProxyTable{Name: s.name, Text: l.text(), Where: r.pos(l, 0)}
		for i := 1; i < len(l.words); i++ {
			kw := l.arg(i)
			val := l.arg(i + 1)
			needs := func(what string) error {
				if val == "" {
					return r.errAt(l, i, "%s needs %s", kw, what)
				}
				i++
				return nil
			}
			switch kw {
			case "type":
				if err := needs("a type (ip, ipv6, integer, string or binary)"); err != nil {
					return err
				}
				if !slices.Contains([]string{"ip", "ipv6", "integer", "string", "binary"}, val) {
					return r.errAt(l, i, "unknown type %q (want ip, ipv6, integer, string or binary)", val)
				}
				t.Type = val
			case "len":
				if err := needs("a length"); err != nil {
					return err
				}
			case "size":
				if err := needs("a size"); err != nil {
					return err
				}
				if !haproxySize(val) {
					return r.errAt(l, i, "invalid size %q (want a number, optionally with k, m or g)", val)
				}
				t.Size = val
			case "expire":
				if err := needs("a time"); err != nil {
					return err
				}
				d, ok := haproxyDuration(val, time.Millisecond)
				if !ok {
					return r.errAt(l, i, "invalid expire %q (want a time such as 30s, 10m or 500ms)", val)
				}
				t.Expire, t.HasExpire = d, true
			case "peers":
				return r.errAt(l, i, "peers (the table synchronised with other HAProxy processes) is not modelled: each ratesim row counts on one node; remove it to import")
			case "srvkey", "write-to":
				if err := needs("a value"); err != nil {
					return err
				}
			case "nopurge":
			case "store":
				if err := needs("a data list"); err != nil {
					return err
				}
				t.Store = val
				if err := r.store(t, l, i); err != nil {
					return err
				}
			default:
				return r.errAt(l, i, "unknown stick-table argument %q (want type, size, expire, nopurge, peers or store)", kw)
			}
		}
		if t.Type == "" {
			return r.errAt(l, 0, "no type (want type ip, ipv6, integer, string or binary)")
		}
		if t.Size == "" {
			return r.errAt(l, 0, "no size (want size N)")
		}
		r.tables[s.name] = t
		r.h.Tables = append(r.h.Tables, t)
	}
	return nil
}

var storeItem = regexp.MustCompile(`^([a-z0-9_]+)(?:\(([^()]*)\))?$`)

// store reads a store list, word i of l: http_req_rate(PERIOD) sets the
// table's period; the other data types count what ratesim does not read.
func (r *haproxyReader) store(t *HAProxyTable, l hline, i int) error {
	for _, item := range strings.Split(l.arg(i), ",") {
		m := storeItem.FindStringSubmatch(item)
		if m == nil {
			return r.errAt(l, i, "invalid store item %q (want a data type such as http_req_rate(10s) or gpc0)", item)
		}
		if m[1] != "http_req_rate" {
			continue
		}
		if m[2] == "" {
			return r.errAt(l, i, "http_req_rate needs a period, e.g. http_req_rate(10s)")
		}
		d, ok := haproxyDuration(m[2], time.Millisecond)
		if !ok || d < time.Millisecond || d%time.Millisecond != 0 || d > (1<<31-1)*time.Millisecond {
			return r.errAt(l, i, "invalid http_req_rate period %q (want whole milliseconds from 1ms to 2147483647ms, e.g. 10s)", m[2])
		}
		t.Period = d
	}
	return nil
}

// rateFetch matches the fetches of a tracked counter's http_req_rate:
// sc_http_req_rate(N[,TABLE]), scN_http_req_rate[(TABLE)] and
// src_http_req_rate[(TABLE)].
var rateFetch = regexp.MustCompile(`^(?:sc_http_req_rate\((\d+)(?:,([^(),]*))?\)|sc(\d+)_http_req_rate(?:\(([^(),]*)\))?|src_http_req_rate(?:\(([^(),]*)\))?)$`)

// acl is one named acl line.
type acl struct {
	l    hline
	args []hword
}

// proxy reads the http-request rules of one section, in order.
func (r *haproxyReader) proxy(s *hsection) error {
	isProxy := s.kind == "frontend" || s.kind == "backend" || s.kind == "listen"
	acls := map[string][]acl{}
	tracks := map[int]*HAProxyTrack{}
	tcpTracks := map[int]int{} // sc -> the line of a tcp-request track-sc
	var lim *HAProxyLimit
	var also []*HAProxyLimit
	logFormat, logWhere := "", Pos{}
	if s.defaults != nil {
		for _, l := range s.defaults.lines {
			if l.arg(0) == "log-format" {
				logFormat, logWhere = l.arg(1), r.pos(l, 1)
			}
		}
	}
	var captures []string
	for _, l := range s.lines {
		switch {
		case l.arg(0) == "capture" && l.arg(1) == "request" && l.arg(2) == "header":
			captures = append(captures, strings.ToLower(l.arg(3)))
		case l.arg(0) == "http-request" && l.arg(1) == "capture":
			h := ""
			if m := fetchCall.FindStringSubmatch(l.arg(2)); m != nil && (m[1] == "req.hdr" || m[1] == "hdr") {
				h = strings.ToLower(m[2])
			}
			captures = append(captures, h)
		}
		if l.arg(0) == "acl" && len(l.words) >= 3 {
			acls[l.arg(1)] = append(acls[l.arg(1)], acl{l, l.words[2:]})
		}
		if l.arg(0) == "log-format" {
			logFormat, logWhere = l.arg(1), r.pos(l, 1)
		}
	}
	for _, l := range s.lines {
		mentions := strings.Contains(l.text(), "http_req_rate")
		switch l.arg(0) {
		case "http-request":
		case "acl", "stick-table", "log-format":
			continue // acls are read where a rule uses them; logging decides nothing
		case "tcp-request":
			if n, err := strconv.Atoi(strings.TrimPrefix(l.arg(2), "track-sc")); err == nil && strings.HasPrefix(l.arg(2), "track-sc") {
				tcpTracks[n] = l.line
				// Its entry counts the section's HTTP requests too
				// (stream_inc_http_req_ctr), in the table named or
				// the section's own.
				table := s.name
				if i := slices.IndexFunc(l.words, func(w hword) bool { return w.s == "table" }); i > 0 && i+1 < len(l.words) {
					table = l.arg(i + 1)
				}
				if t, ok := r.tables[table]; ok {
					if name := s.kind + " " + s.name; !slices.Contains(r.counters[t], name) {
						r.counters[t] = append(r.counters[t], name)
					}
				}
			}
			if mentions {
				return r.errAt(l, 0, "a rate test in a tcp-request rule is not mapped (only http-request deny)")
			}
			continue
		default:
			if mentions {
				return r.errAt(l, 0, "http_req_rate outside an http-request rule is not mapped (only http-request deny)")
			}
			continue
		}
		action := l.arg(1)
		if !isProxy {
			if mentions || strings.HasPrefix(action, "track-sc") {
				return r.errAt(l, 1, "in a %s section: ratesim maps the limits of frontend and listen sections (write them there)", s.kind)
			}
			continue
		}
		if strings.HasPrefix(action, "track-sc") {
			tr, err := r.track(l, s, acls)
			if err != nil {
				return err
			}
			if _, dup := tracks[tr.SC]; dup {
				return r.errAt(l, 1, "sc%d is tracked twice in %s %s: HAProxy keeps the first and ignores this one; remove one to import", tr.SC, s.kind, s.name)
			}
			tracks[tr.SC] = tr
			if name := s.kind + " " + s.name; !slices.Contains(r.counters[tr.Table], name) {
				r.counters[tr.Table] = append(r.counters[tr.Table], name)
			}
			continue
		}
		cond, cw, ok := condition(l)
		var test []hword
		var testLine hline
		if ok && len(cond) >= 2 && cond[0].s == "{" && slices.IndexFunc(cond, func(w hword) bool { return w.s == "}" }) == len(cond)-1 {
			test, testLine = cond[1:len(cond)-1], l
		} else if ok && len(cond) == 1 {
			if defs := acls[cond[0].s]; len(defs) == 1 {
				test, testLine = defs[0].args, defs[0].l
			} else if len(defs) > 1 && aclMentions(defs) {
				return r.errAt(l, cw, "acl %s is defined %d times (HAProxy ORs them): not mapped", cond[0].s, len(defs))
			}
		}
		readsRate := mentions || (len(test) > 0 && strings.Contains(wordsText(test), "http_req_rate"))
		if !readsRate {
			if ok && aclsMention(acls, cond) {
				return r.errAt(l, cw, "a condition that combines a rate test with anything else is not mapped (want if { sc_http_req_rate(N) gt L } or if ACL, alone)")
			}
			continue
		}
		if action != "deny" {
			return r.errAt(l, 1, "only http-request deny is mapped on a rate test (found %s)", action)
		}
		if s.kind == "backend" {
			return r.errAt(l, 1, "in backend %s: ratesim maps the limits of frontend and listen sections (a backend's rules run after its frontend's)", s.name)
		}
		if !ok || l.arg(cw-1) != "if" {
			return r.errAt(l, 1, "want deny ... if { sc_http_req_rate(N) gt L } (unless, and a rule without a condition, are not mapped)")
		}
		if len(test) == 0 {
			return r.errAt(l, cw, "a condition that combines a rate test with anything else is not mapped (want if { sc_http_req_rate(N) gt L } or if ACL, alone)")
		}
		sc, table, limit, err := r.rateTest(testLine, test)
		if err != nil {
			return err
		}
		status, err := r.denyStatus(l, cw)
		if err != nil {
			return err
		}
		if line, ok := tcpTracks[sc]; ok {
			return r.errAt(l, 1, "sc%d is tracked by tcp-request (line %d), whose counters count otherwise: not mapped (track with http-request track-sc%d)", sc, line, sc)
		}
		tr := r.trackerFor(tracks, sc, table)
		if tr == nil {
			if sc < 0 {
				return r.errCol(testLine, test[0].col, "src_http_req_rate reads a table without counting: no http-request track-scN src on that table comes before this rule")
			}
			return r.errAt(l, 1, "sc%d is not tracked before this rule (HAProxy runs the rules in order: want an http-request track-sc%d before it)", sc, sc)
		}
		if table != "" && table != tr.Table.Name {
			return r.errCol(testLine, test[0].col, "reads table %s, but sc%d tracks table %s", table, tr.SC, tr.Table.Name)
		}
		if tr.Table.Period == 0 {
			return r.errAt(l, 1, "table %s (at line %d) stores no http_req_rate(PERIOD) (its store: %q): sc_http_req_rate reads nothing there", tr.Table.Name, tr.Table.Where.Line, tr.Table.Store)
		}
		if tr.Table.HasExpire && tr.Table.Expire < 2*tr.Table.Period {
			return r.errCol(hline{line: tr.Table.Where.Line, words: []hword{{s: "stick-table"}}}, tr.Table.Where.Col,
				"expire %v is shorter than twice the http_req_rate period %v: an entry can expire while its counter still counts, which ratesim does not model (want expire >= %v)",
				tr.Table.Expire, tr.Table.Period, 2*tr.Table.Period)
		}
		if limit < 1 {
			return r.errCol(testLine, test[0].col, "the test denies every request (the rate read includes the request, so it is at least 1): want gt 1 or more (ge 2 or more)")
		}
		if limit > 1<<32-2 {
			return r.errCol(testLine, test[0].col, "threshold %d is beyond HAProxy's 32-bit rate: it denies nothing", limit)
		}
		d := &HAProxyLimit{Kind: s.kind, Name: s.name, Where: r.pos(s.head, 0), Track: tr, Limit: limit,
			Status: status, Deny: l.text(), Cond: wordsText(test), CondWhere: Pos{File: r.h.File, Line: testLine.line, Col: test[0].col}, DenyWhere: r.pos(l, 0)}
		if lim == nil {
			lim = d
			continue
		}
		if err := r.alsoDeny(l, lim, also, d); err != nil {
			return err
		}
		also = append(also, d)
	}
	if lim == nil {
		return nil
	}
	lim.Log, lim.LogWhere, lim.Captures, lim.Label = logFormat, logWhere, captures, lim.Name
	if len(also) == 0 {
		r.h.Limits = append(r.h.Limits, lim)
		return nil
	}
	lim.Also = also
	lim.Commit = haproxyCommit(lim.denies())
	ds := lim.denies()
	if !slices.ContainsFunc(ds, func(d *HAProxyLimit) bool { return d.Track.Cond != nil }) {
		r.h.Limits = append(r.h.Limits, lim)
		return nil
	}
	// Some tracks have a condition: a request is counted by the counters
	// whose tracks hold for it, and each deny reads its own (an untracked
	// counter's sc_http_req_rate fetches nothing and denies nothing), so
	// the row is an all-of whose conditional counters count by a key that
	// a request carries only where its track's condition holds (Key.cond;
	// a member whose key a request lacks is neither asked nor charged).
	// That holds when every track runs before the first deny; after a
	// deny, a track would not count the requests it stopped.
	if lim.Commit != "every-hit" {
		for _, d := range ds[1:] {
			if d.Track.Where.Line > lim.DenyWhere.Line {
				w := d.Track.Where
				return &Error{File: w.File, Line: w.Line, Col: w.Col, Path: "http-request track-sc" + strconv.Itoa(d.Track.SC),
					Msg: fmt.Sprintf("%s %s has tracks with a condition, and this one comes after the deny at line %d: not mapped (a denied request is not counted by a later track; move every track before the first deny)", s.kind, s.name, lim.DenyWhere.Line)}
			}
		}
	}
	r.h.Limits = append(r.h.Limits, lim)
	return nil
}

// alsoDeny checks d, the rate deny at l after lim's and also's in one
// section: each deny reads its own counter, without a track condition
// beside the others, and the tracks and denies come in an order that
// every-hit or in-order models (haproxyCommit).
func (r *haproxyReader) alsoDeny(l hline, lim *HAProxyLimit, also []*HAProxyLimit, d *HAProxyLimit) error {
	prev := append([]*HAProxyLimit{lim}, also...)
	for _, p := range prev {
		if p.Track.SC == d.Track.SC {
			return r.errAt(l, 1, "a second rate deny on sc%d in %s %s (the first at line %d): ratesim maps one deny per tracked counter", d.Track.SC, d.Kind, d.Name, p.DenyWhere.Line)
		}
	}
	if haproxyCommit(append(prev, d)) == "" {
		return r.errAt(l, 1, "the tracks and rate denies of %s %s interleave otherwise than all tracks first, or each track after the previous deny: not mapped (which counters count a denied request depends on it)", d.Kind, d.Name)
	}
	return nil
}

// haproxyCommit is the all-of commit that HAProxy's rule order gives the
// denies ds of one section (HTTP rules run in order, a deny stops them,
// and a track-sc counts the request when it runs: src/http_ana.c,
// http_req_get_intercept_rule): every-hit when every track is before the
// first deny, in-order when each deny's track is after the previous deny,
// "" otherwise.
func haproxyCommit(ds []*HAProxyLimit) string {
	first, last := ds[0].DenyWhere.Line, 0
	inOrder := true
	for i, d := range ds {
		last = max(last, d.Track.Where.Line)
		if i > 0 && d.Track.Where.Line < ds[i-1].DenyWhere.Line {
			inOrder = false
		}
	}
	switch {
	case last < first:
		return "every-hit"
	case inOrder:
		return "in-order"
	}
	return ""
}

func wordsText(ws []hword) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.s
	}
	return strings.Join(s, " ")
}

func aclMentions(defs []acl) bool {
	for _, d := range defs {
		if strings.Contains(wordsText(d.args), "http_req_rate") {
			return true
		}
	}
	return false
}

// aclsMention reports whether any word of cond names an acl that tests a
// rate.
func aclsMention(acls map[string][]acl, cond []hword) bool {
	for _, w := range cond {
		if aclMentions(acls[strings.TrimPrefix(w.s, "!")]) {
			return true
		}
	}
	return false
}

// condition returns the words after a rule's if or unless, and the index
// of the first of them.
func condition(l hline) ([]hword, int, bool) {
	for i, w := range l.words {
		if i >= 2 && (w.s == "if" || w.s == "unless") {
			return l.words[i+1:], i + 1, true
		}
	}
	return nil, 0, false
}

// track reads http-request track-scN KEY [table NAME] (HAProxy's
// parse_trk_action): without table, the section's own table.
func (r *haproxyReader) track(l hline, s *hsection, acls map[string][]acl) (*HAProxyTrack, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(l.arg(1), "track-sc"))
	if err != nil || n < 0 || n > 2 {
		return nil, r.errAt(l, 1, "unknown action %q (want track-sc0, track-sc1 or track-sc2)", l.arg(1))
	}
	tr := &HAProxyTrack{SC: n, Fetch: l.arg(2), Text: l.text(), Where: r.pos(l, 0)}
	if tr.Fetch == "" {
		return nil, r.errAt(l, 1, "want a key after %s (e.g. src or req.hdr(X-Client))", l.arg(1))
	}
	key, err := r.trackKey(l, 2)
	if err != nil {
		return nil, err
	}
	tr.Key = key
	i := 3
	table := ""
	if l.arg(i) == "table" {
		table = l.arg(i + 1)
		if table == "" {
			return nil, r.errAt(l, i, "table needs a name")
		}
		i += 2
	}
	if i < len(l.words) {
		if w := l.arg(i); w == "if" || w == "unless" {
			// a static condition (route_haproxy.go): the row takes the
			// requests it tracks
			c, err := r.trackCond(l, i, acls)
			if err != nil {
				return nil, err
			}
			tr.Cond = c
			l.words = l.words[:i]
		}
	}
	if i < len(l.words) {
		return nil, r.errAt(l, i, "unexpected %q (want %s KEY [table NAME])", l.arg(i), l.arg(1))
	}
	if table == "" {
		t, ok := r.tables[s.name]
		if !ok {
			return nil, r.errAt(l, 1, "%s %s has no stick-table and the rule names none (want table NAME)", s.kind, s.name)
		}
		tr.Table = t
		return tr, nil
	}
	t, ok := r.tables[table]
	if !ok {
		return nil, r.errAt(l, i-1, "no stick-table in a section named %q", table)
	}
	tr.Table = t
	return tr, nil
}

// knownKeyFetches are the sample fetches a track-sc key may be, besides
// src and the header fetches: replay cannot take them from a log.
var knownKeyFetches = []string{"base", "base32", "base32+src", "path", "url", "url_param", "urlp", "req.cook", "cook", "hdr_ip", "req.hdr_ip", "ssl_fc_sni", "req.ssl_sni", "http_auth_user", "var"}

var fetchCall = regexp.MustCompile(`^([a-z0-9_.+]+)(?:\(([^()]*)\))?$`)

// trackKey reads a track-sc key, word i of l: src is the client address;
// req.hdr(NAME), hdr(NAME) and req.fhdr(NAME) a header; a few other
// fetches a key replay cannot find in a log; converters and unknown
// fetches are errors.
func (r *haproxyReader) trackKey(l hline, i int) (Key, error) {
	w := l.arg(i)
	if strings.Contains(w, ",") && !fetchCall.MatchString(w) {
		return Key{}, r.errAt(l, i, "converters on a track-sc key are not mapped (found %q)", w)
	}
	m := fetchCall.FindStringSubmatch(w)
	if m == nil {
		return Key{}, r.errAt(l, i, "unknown sample fetch %q (want src, req.hdr(NAME) or another fetch)", w)
	}
	where := r.pos(l, i)
	switch m[1] {
	case "src":
		if m[2] != "" {
			return Key{}, r.errAt(l, i, "src takes no argument")
		}
		return Key{Kind: KeyAddr, Name: "src", Where: where}, nil
	case "req.hdr", "hdr", "req.fhdr", "fhdr":
		if m[2] == "" || strings.Contains(m[2], ",") {
			return Key{}, r.errAt(l, i, "%s: want one header name, e.g. %s(X-Client)", m[1], m[1])
		}
		return Key{Kind: KeyHeader, Name: strings.ToLower(m[2]), Where: where}, nil
	}
	if slices.Contains(knownKeyFetches, m[1]) {
		return Key{Kind: KeyOther, Name: w, Where: where}, nil
	}
	return Key{}, r.errAt(l, i, "unknown sample fetch %q (want src, req.hdr(NAME) or another fetch)", m[1])
}

// rateTest reads FETCH OP VALUE, a tracked counter's http_req_rate
// compared with gt or ge: it returns the sc (-1 for src_http_req_rate),
// the table named in the fetch ("" for the tracked one) and L (gt L; ge L
// is gt L-1 on HAProxy's integer rate).
func (r *haproxyReader) rateTest(l hline, test []hword) (sc int, table string, limit int64, err error) {
	at := func(k int) int {
		if k < len(test) {
			return test[k].col
		}
		return test[0].col
	}
	if len(test) != 3 {
		return 0, "", 0, r.errCol(l, at(0), "want one test FETCH gt L (found %q)", wordsText(test))
	}
	m := rateFetch.FindStringSubmatch(test[0].s)
	if m == nil {
		return 0, "", 0, r.errCol(l, at(0), "unknown fetch %q in a rate test (want sc_http_req_rate(N), scN_http_req_rate or src_http_req_rate)", test[0].s)
	}
	switch {
	case m[1] != "":
		sc, _ = strconv.Atoi(m[1])
		table = m[2]
	case m[3] != "":
		sc, _ = strconv.Atoi(m[3])
		table = m[4]
	default:
		sc, table = -1, m[5]
	}
	if sc > 2 {
		return 0, "", 0, r.errCol(l, at(0), "sc%d: HAProxy 2.6 has sc0, sc1 and sc2", sc)
	}
	v, perr := strconv.ParseInt(test[2].s, 10, 64)
	if perr != nil || v < 0 {
		return 0, "", 0, r.errCol(l, at(2), "want a whole number after %s (found %q)", test[1].s, test[2].s)
	}
	switch test[1].s {
	case "gt":
		limit = v
	case "ge":
		limit = v - 1
	default:
		return 0, "", 0, r.errCol(l, at(1), "operator %q is not a limit (want gt or ge)", test[1].s)
	}
	return sc, table, limit, nil
}

// trackerFor returns the tracker a rate fetch reads: scN's, or for
// src_http_req_rate (sc -1) a tracker of src on table (or on any table
// when table is "").
func (r *haproxyReader) trackerFor(tracks map[int]*HAProxyTrack, sc int, table string) *HAProxyTrack {
	if sc >= 0 {
		return tracks[sc]
	}
	for n := 0; n <= 2; n++ {
		if tr := tracks[n]; tr != nil && tr.Key.Kind == KeyAddr && (table == "" || tr.Table.Name == table) {
			return tr
		}
	}
	return nil
}

// denyStatus reads deny's deny_status N (default 403) among the words
// before its condition at cw.
func (r *haproxyReader) denyStatus(l hline, cw int) (int, error) {
	status := 403
	for i := 2; i < cw-1; i++ {
		if l.arg(i) == "deny_status" {
			n, err := strconv.Atoi(l.arg(i + 1))
			if err != nil || n < 200 || n > 599 {
				return 0, r.errAt(l, i, "invalid deny_status %q (want an HTTP status from 200 to 599)", l.arg(i+1))
			}
			status = n
			i++
		}
	}
	return status, nil
}

// Scenario makes the limits a ratesim scenario: one haproxy row per
// frontend or listen section, labelled by its name, with comments naming
// the lines of the section, its track-sc, its table and its deny. The
// scenario's limit is the first row's; its traffic a placeholder at twice
// that rate.
func (h *HAProxy) Scenario(o Options) (*Import, error) {
	lims, err := h.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(h.File)
	im := newImport(base, "The http_req_rate limits of "+base+".",
		"Imported from "+base+" by ratesim import --from haproxy: one row per frontend or",
		"listen section whose http-request deny tests a tracked http_req_rate. HAProxy",
		"counts every request, denied ones too, before the deny reads the rate.")
	keys, err := h.Keys(o)
	if err != nil {
		return nil, err
	}
	primary, hasPrimary := primaryOf(keys)
	first := lims[0]
	im.File.Limit = limit(first.Limit, scenarios.DurationText(first.Track.Table.Period))
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(max(10*time.Second, 3*first.Track.Table.Period)))
	for _, l := range lims {
		t, tr := l.Track.Table, l.Track
		by := byOf(tr.Key, primary, hasPrimary)
		if len(l.Also) > 0 || (by != "" && o.LimitLabels) {
			h.allOf(im, l, base, primary, hasPrimary, o)
			continue
		}
		im.note(fmt.Sprintf("%s:%d: %s %s; denies with %d", base, l.Where.Line, l.Kind, l.Name, l.Status))
		im.note(haproxyComment(base, l)...)
		if tr.Cond != nil {
			im.note("NOTE: the track counts only the requests its condition holds for: the row counts all",
				"of the scenario's traffic; replay --gateway gives it only those (docs/gateways.md, Routing)")
		}
		if len(l.SharedWith) > 0 {
			im.note(fmt.Sprintf("NOTE: table %s also counts the requests of %s, in the same entries;", t.Name, strings.Join(l.SharedWith, ", ")),
				"this row counts only the requests of its own section.")
		}
		im.row(scenarios.AlgEntry{Name: str("haproxy"), Label: str(l.Label), Rate: scenarios.IntOf(l.Limit), Per: scenarios.DurationOf(scenarios.DurationText(t.Period))})
	}
	im.placeholderTraffic(2*first.Limit, scenarios.DurationText(first.Track.Table.Period))
	im.attributes()
	return im, nil
}

// haproxyComment are the comment lines of one rate deny: its track, its
// table and its test.
func haproxyComment(base string, l *HAProxyLimit) []string {
	t, tr := l.Track.Table, l.Track
	deny := fmt.Sprintf("%s:%d: %s", base, l.DenyWhere.Line, l.Deny)
	if l.CondWhere.Line != l.DenyWhere.Line {
		deny += fmt.Sprintf("; acl at %s:%d: %s", base, l.CondWhere.Line, l.Cond)
	}
	return []string{fmt.Sprintf("%s:%d: %s; key %s", base, tr.Where.Line, tr.Text, tr.Key.String()),
		fmt.Sprintf("%s:%d: table %s: %s (its size is not modelled)", base, t.Where.Line, t.Name, t.Text),
		deny + fmt.Sprintf(": denied when the rate including the request is > %d", l.Limit)}
}

// allOf writes the row of section l as an all-of of its rate denies, in
// order, each counting by its tracked key (by:), with l.Commit; a section
// with one deny whose key is not the request's is an all-of of that one.
func (h *HAProxy) allOf(im *Import, l *HAProxyLimit, base string, primary Key, hasPrimary bool, o Options) {
	commit := l.Commit
	if commit == "" {
		commit = "every-hit"
	}
	im.note(fmt.Sprintf("%s:%d: %s %s; denies with %d", base, l.Where.Line, l.Kind, l.Name, l.Status))
	if len(l.Also) > 0 {
		why := "every track comes before the first deny: each counter counts every request"
		if commit == "in-order" {
			why = "each counter's track comes after the previous deny: a denied request is not counted further"
		}
		im.note(fmt.Sprintf("HAProxy runs the rules in order and a deny stops them; %s (commit %s)", why, commit))
	}
	if len(l.SharedWith) > 0 {
		im.note(fmt.Sprintf("NOTE: table %s also counts the requests of %s, in the same entries;", l.Track.Table.Name, strings.Join(l.SharedWith, ", ")),
			"this row counts only the requests of its own section.")
	}
	row := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str(l.Label), Commit: str(commit)})
	for _, d := range l.denies() {
		e := scenarios.AlgEntry{Name: str("haproxy"), Rate: scenarios.IntOf(d.Limit), Per: scenarios.DurationOf(scenarios.DurationText(d.Track.Table.Period))}
		lines := haproxyComment(base, d)
		k := haproxyKey(d, len(l.Also) > 0)
		if by := byOf(k, primary, hasPrimary); by != "" {
			e.By = str(by)
			if k.cond != nil {
				lines = append(lines, fmt.Sprintf("counts only the requests its track's condition holds for, by %s: a request it does not hold for is neither counted nor denied by it (by: %s)", d.Track.Key, by))
			} else {
				lines = append(lines, byNote(by))
			}
		}
		if o.LimitLabels {
			e.Label = str(fmt.Sprintf("sc%d %s (%s:%d)", d.Track.SC, d.Track.Fetch, base, d.DenyWhere.Line))
		}
		if d.Status != l.Status {
			lines = append(lines, fmt.Sprintf("denies with %d", d.Status))
		}
		im.member(row, e, lines...)
	}
}

// pick returns the limits that scope names: all of them when it is "",
// else the rows of the section of that name, or the row of that label.
func (h *HAProxy) pick(scope string) ([]*HAProxyLimit, error) {
	if scope == "" {
		return h.Limits, nil
	}
	var out []*HAProxyLimit
	for _, l := range h.Limits {
		if l.Name == scope || l.Label == scope {
			out = append(out, l)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	var names []string
	for _, l := range h.Limits {
		names = append(names, strconv.Quote(l.Label))
	}
	return nil, fmt.Errorf("--scope %q: no scope of %s has that name (its scopes: %s)", scope, h.File, strings.Join(names, ", "))
}

// Keys returns the tracked keys of the limits scope picks, each once.
func (h *HAProxy) Keys(o Options) ([]Key, error) {
	lims, err := h.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	add := func(k Key) {
		if !slices.ContainsFunc(keys, func(x Key) bool { return sameKey(x, k) }) {
			keys = append(keys, k)
		}
	}
	for _, l := range lims {
		multi := len(l.Also) > 0
		for _, d := range l.denies() {
			if k := haproxyKey(d, multi); k.cond != nil {
				// the tracked key itself comes first: the request's
				// key, where no counter counts every request
				add(d.Track.Key)
				add(k)
				continue
			}
			add(d.Track.Key)
		}
	}
	return keys, nil
}

// haproxyKey is the key counter d counts by: its track's key, which, in a
// row of several denies (multi) whose track has a condition, is a key of
// its own that a request carries only where the condition holds (Key.cond,
// haproxyDeriver). A lone deny's condition routes its section's requests
// instead (route_haproxy.go).
func haproxyKey(d *HAProxyLimit, multi bool) Key {
	k := d.Track.Key
	if multi && d.Track.Cond != nil {
		k.cond, k.sc = d.Track.Cond, d.Track.SC
		k.Where = d.Track.Where
	}
	return k
}

// keyedLimits: an all-of row's counters count by their own tracked keys
// (docs/gateways.md, "Keys, gateway by gateway").
func (*HAProxy) keyedLimits() {}

func guessHAProxy(_ string, data []byte) bool {
	s := string(data)
	return slices.ContainsFunc([]string{"stick-table", "http-request", "\nfrontend ", "\nbackend ", "\nlisten "}, func(w string) bool {
		return strings.Contains(s, w)
	}) || strings.HasPrefix(s, "frontend ") || strings.HasPrefix(s, "global")
}
