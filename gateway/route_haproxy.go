package gateway

import (
	"fmt"
	"math/bits"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// HAProxy's static conditions on a track-scN, as its configuration manual
// says (section 7, "Using ACLs and fetching samples"; 7.2, "Using ACLs to
// form conditions"): the words after if (or unless) are ACLs, each a
// name (several acl lines of one name are any of them) or an anonymous
// { CRITERION VALUES... }; consecutive ACLs all hold, || (or "or")
// separates alternatives, ! negates. The criteria read from a log: path
// (exact), path_beg, path_end, path_sub, path_reg, method, and the host
// header, hdr(host) or req.hdr(host) (exact) with hdr_beg, hdr_end,
// hdr_sub, hdr_reg, hdr_dom; -i ignores case, -m str|beg|end|sub|reg|dom
// chooses the match. Any other criterion is an error at its column. A
// request the condition does not hold for is not tracked: its counter is
// not counted, and sc_http_req_rate of an untracked counter denies
// nothing, so the row does not take it.

// haCond is a condition: alternatives, each all of its terms.
type haCond struct {
	alts   [][]haTerm
	negate bool // unless
	needs  traffic.RequestFields
}

// haTerm is one ACL of a condition, negated or not: any of its
// definitions holds.
type haTerm struct {
	not  bool
	defs []*haACL
}

// haACL is one ACL definition: a criterion and its values.
type haACL struct {
	field  traffic.RequestFields // NeedPath, NeedMethod or NeedHost
	method string                // str, beg, end, sub, reg, dom
	fold   bool
	values []string
	res    []*regexp.Regexp
}

func (c *haCond) holds(req *traffic.Request) bool {
	any := false
	for _, alt := range c.alts {
		all := true
		for _, t := range alt {
			h := false
			for _, d := range t.defs {
				if d.match(req) {
					h = true
					break
				}
			}
			if h == t.not {
				all = false
				break
			}
		}
		if all {
			any = true
			break
		}
	}
	return any != c.negate
}

func (a *haACL) match(req *traffic.Request) bool {
	var v string
	switch a.field {
	case traffic.NeedPath:
		v = string(req.Path)
	case traffic.NeedMethod:
		v = string(req.Method)
	default:
		v = string(req.Host)
	}
	if a.fold {
		v = strings.ToLower(v)
	}
	for i, w := range a.values {
		var ok bool
		switch a.method {
		case "str":
			ok = v == w
		case "beg":
			ok = strings.HasPrefix(v, w)
		case "end":
			ok = strings.HasSuffix(v, w)
		case "sub":
			ok = strings.Contains(v, w)
		case "reg":
			ok = a.res[i].MatchString(v)
		case "dom":
			// w delimited by dots or slashes in v
			for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '/' }) {
				ok = ok || part == w
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// haCriteria are the criteria a condition may read: the request field
// and the default match.
var haCriteria = map[string]struct {
	field  traffic.RequestFields
	method string
}{
	"path": {traffic.NeedPath, "str"}, "path_beg": {traffic.NeedPath, "beg"}, "path_end": {traffic.NeedPath, "end"},
	"path_sub": {traffic.NeedPath, "sub"}, "path_reg": {traffic.NeedPath, "reg"}, "method": {traffic.NeedMethod, "str"},
	"hdr(host)": {traffic.NeedHost, "str"}, "req.hdr(host)": {traffic.NeedHost, "str"}, "hdr_beg(host)": {traffic.NeedHost, "beg"},
	"hdr_end(host)": {traffic.NeedHost, "end"}, "hdr_sub(host)": {traffic.NeedHost, "sub"}, "hdr_reg(host)": {traffic.NeedHost, "reg"},
	"hdr_dom(host)": {traffic.NeedHost, "dom"},
}

// trackCond reads the condition of a track-sc line, from its if or
// unless (word i).
func (r *haproxyReader) trackCond(l hline, i int, acls map[string][]acl) (*haCond, error) {
	c := &haCond{negate: l.arg(i) == "unless", alts: [][]haTerm{nil}}
	ws := l.words[i+1:]
	if len(ws) == 0 {
		return nil, r.errAt(l, i, "%s without a condition", l.arg(i))
	}
	for j := 0; j < len(ws); j++ {
		w := ws[j]
		if w.s == "||" || w.s == "or" {
			c.alts = append(c.alts, nil)
			continue
		}
		t := haTerm{}
		name := w.s
		if strings.HasPrefix(name, "!") {
			t.not, name = true, name[1:]
			if name == "" && j+1 < len(ws) {
				j++
				w, name = ws[j], ws[j].s
			}
		}
		if name == "{" {
			end := j + 1
			for end < len(ws) && ws[end].s != "}" {
				end++
			}
			if end >= len(ws) {
				return nil, r.errCol(l, w.col, "no } closing the anonymous ACL")
			}
			d, err := r.aclDef(l, ws[j+1:end])
			if err != nil {
				return nil, err
			}
			t.defs = []*haACL{d}
			j = end
		} else {
			defs := acls[name]
			if len(defs) == 0 {
				return nil, r.errCol(l, w.col, "acl %s is not defined in this section", name)
			}
			for _, a := range defs {
				d, err := r.aclDef(a.l, a.args)
				if err != nil {
					return nil, err
				}
				t.defs = append(t.defs, d)
			}
		}
		for _, d := range t.defs {
			c.needs |= d.field
		}
		c.alts[len(c.alts)-1] = append(c.alts[len(c.alts)-1], t)
	}
	return c, nil
}

// aclDef reads a criterion, its flags and its values.
func (r *haproxyReader) aclDef(l hline, ws []hword) (*haACL, error) {
	if len(ws) == 0 {
		return nil, r.errAt(l, 0, "an ACL without a criterion")
	}
	crit, ok := haCriteria[strings.ToLower(ws[0].s)]
	if !ok {
		return nil, r.errCol(l, ws[0].col, "%s: a criterion replay cannot read from a log (it reads path, path_beg, path_end, path_sub, path_reg, method and hdr(host) and its hdr_* forms)", ws[0].s)
	}
	a := &haACL{field: crit.field, method: crit.method}
	k := 1
	for ; k < len(ws) && strings.HasPrefix(ws[k].s, "-"); k++ {
		switch ws[k].s {
		case "-i":
			a.fold = true
		case "-m":
			if k+1 >= len(ws) {
				return nil, r.errCol(l, ws[k].col, "-m needs a match method")
			}
			k++
			switch m := ws[k].s; m {
			case "str", "beg", "end", "sub", "reg", "dom":
				a.method = m
			default:
				return nil, r.errCol(l, ws[k].col, "-m %s: a match replay does not read (str, beg, end, sub, reg, dom)", m)
			}
		case "--":
			k++
			goto values
		default:
			return nil, r.errCol(l, ws[k].col, "%s: a flag replay does not read (-i, -m)", ws[k].s)
		}
	}
values:
	for ; k < len(ws); k++ {
		v := ws[k].s
		if a.fold && a.method != "reg" {
			v = strings.ToLower(v)
		}
		if a.method == "reg" {
			expr := v
			if a.fold {
				expr = "(?i)" + expr
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, r.errCol(l, ws[k].col, "%q: a regular expression RE2 cannot read (%v)", v, err)
			}
			a.res = append(a.res, re)
		}
		a.values = append(a.values, v)
	}
	if len(a.values) == 0 {
		return nil, r.errCol(l, ws[0].col, "%s without a value", ws[0].s)
	}
	return a, nil
}

// Routes returns the routing of the sections' frontends and track
// conditions (Router). Several sections' rows: a log that HAProxy wrote
// for several frontends says which took each request by the frontend's
// name (%f), and a frontend or listen section that no limit reads is a
// route without a limit; a name that no section has takes no route.
// Within a section, a row takes the requests its track's condition holds
// for; when the section's denies are rows apart (HAProxyLimit.Split),
// each set of counters that a request may be counted by is a route, which
// every row of those counters takes. nil when one section has no
// condition.
//
// With --scope keeping one section of a config of several frontends, a
// log that names each line's frontend still routes by it: the lines of
// the other frontends go to routes without a row, as the other locations
// of an nginx config do. A log that does not name it (no %f) is read as
// the kept section's alone, as before (Routing.loose).
func (h *HAProxy) Routes(o Options) (*Routing, error) {
	lims, err := h.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	one := len(lims) == 0 || lims[len(lims)-1].Name == lims[0].Name
	rt := h.routes(lims, !one)
	if o.Scope == "" || !one || len(h.Frontends) < 2 {
		return rt, nil
	}
	scoped := h.routes(lims, true)
	scoped.loose, scoped.hasLoose = rt, true
	scoped.looseNote = fmt.Sprintf("%s %s, the one section --scope kept, takes every line (add %%f to the log-format to leave the other frontends' lines out)", lims[0].Kind, lims[0].Name)
	return scoped, nil
}

// routes is the routing of the sections of lims, by the frontend's name
// when byFrontend (else every request is the one section's).
func (h *HAProxy) routes(lims []*HAProxyLimit, byFrontend bool) *Routing {
	// the sections, in order, with their rows
	type section struct {
		name string
		rows []*HAProxyLimit
		// routes by the set of rows whose conditions hold (bit i for
		// rows[i]); -1 for none
		routes []int
		all    int // the rows without a condition
	}
	var secs []*section
	conds := false
	for _, l := range lims {
		if l.Track.Cond != nil {
			conds = true
		}
		if n := len(secs); n > 0 && secs[n-1].name == l.Name {
			secs[n-1].rows = append(secs[n-1].rows, l)
			continue
		}
		secs = append(secs, &section{name: l.Name, rows: []*HAProxyLimit{l}})
	}
	if !byFrontend && !conds {
		return nil
	}
	rt := &Routing{}
	if byFrontend {
		rt.needs |= traffic.NeedFrontend
	}
	byName := map[string]*section{}
	var shared []string // the sections with routes of several rows
	for _, s := range secs {
		byName[s.name] = s
		s.routes = make([]int, 1<<len(s.rows))
		s.routes[0] = -1
		for i, l := range s.rows {
			if l.Track.Cond == nil {
				s.all |= 1 << i
			} else {
				rt.needs |= l.Track.Cond.needs
			}
		}
		for set := 1; set < len(s.routes); set++ {
			s.routes[set] = -1
			if set&s.all != s.all {
				continue // a row without a condition counts every request
			}
			var in []string
			for i, l := range s.rows {
				if set&(1<<i) != 0 {
					in = append(in, fmt.Sprintf("sc%d", l.Track.SC))
				}
			}
			name := s.name + " " + strings.Join(in, "+")
			if len(in) == 1 {
				name = s.rows[bits.TrailingZeros(uint(set))].Label
			}
			s.routes[set] = rt.add(name, true)
			if len(in) > 1 && !slices.Contains(shared, s.name) {
				shared = append(shared, s.name)
				rt.notes = append(rt.notes, fmt.Sprintf("%s %s: a request that several of its tracks count (a route such as %s) goes to each of their rows; each row says whether its own deny fires, and HAProxy denies the request when any does: with --check-field, a row disagrees where another row's deny fired", s.rows[0].Kind, s.name, name))
			}
			first := true
			for i, l := range s.rows {
				if set&(1<<i) == 0 {
					continue
				}
				if len(in) == 1 && first {
					rt.row(l.Label, s.routes[set])
				} else {
					rt.also(l.Label, s.routes[set])
				}
				first = false
			}
		}
	}
	// each row's own route is the one of its counter alone, when its
	// condition may hold alone; else the first that it takes
	for _, s := range secs {
		for _, l := range s.rows {
			if _, ok := rt.rows[l.Label]; ok {
				continue
			}
			more := rt.more[l.Label]
			rt.row(l.Label, more[0])
			rt.more[l.Label] = more[1:]
		}
	}
	var how []string
	if rt.needs&traffic.NeedFrontend != 0 {
		how = append(how, "%f (the frontend's name)")
	}
	if rt.needs&traffic.NeedMethod != 0 {
		how = append(how, "%HM (the method)")
	}
	if rt.needs&traffic.NeedPath != 0 {
		how = append(how, "%HP (the path)")
	}
	if rt.needs&traffic.NeedHost != 0 {
		how = append(how, "%[capture.req.hdr(N)] of a capture of the Host header")
	}
	rt.how = "add " + strings.Join(how, ", ") + " to the log-format"
	var unlimited map[string]int
	if byFrontend {
		unlimited = map[string]int{}
		for _, f := range h.Frontends {
			if byName[f] == nil {
				unlimited[f] = rt.add(f, false)
			}
		}
	}
	one := secs[0]
	rt.match = func(req *traffic.Request) int {
		s := one
		if byFrontend {
			s = byName[string(req.Frontend)]
			if s == nil {
				if i, ok := unlimited[string(req.Frontend)]; ok {
					return i
				}
				return -1
			}
		}
		set := s.all
		for i, l := range s.rows {
			if l.Track.Cond != nil && l.Track.Cond.holds(req) {
				set |= 1 << i
			}
		}
		return s.routes[set]
	}
	return rt
}

var _ Router = (*HAProxy)(nil)
