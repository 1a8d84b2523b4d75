package gateway

import (
	"fmt"
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
// Within a section of one rate deny, its row takes the requests its
// track's condition holds for; in a section of several, each counter
// whose track has a condition counts by a key of its own (haproxyKey),
// and the row takes every request. nil when one section has no routing
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

// routes is the routing of the sections of lims (one row each), by the
// frontend's name when byFrontend (else every request is the one
// section's); nil when that is all and no row's condition routes.
func (h *HAProxy) routes(lims []*HAProxyLimit, byFrontend bool) *Routing {
	conds := slices.ContainsFunc(lims, routedCond)
	if !byFrontend && !conds {
		return nil
	}
	rt := &Routing{}
	if byFrontend {
		rt.needs |= traffic.NeedFrontend
	}
	byName := map[string]*HAProxyLimit{}
	route := map[string]int{}
	for _, l := range lims {
		byName[l.Name] = l
		route[l.Name] = rt.add(l.Label, true)
		rt.row(l.Label, route[l.Name])
		if routedCond(l) {
			rt.needs |= l.Track.Cond.needs
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
	unlimited := map[string]int{}
	if byFrontend {
		for _, f := range h.Frontends {
			if byName[f] == nil {
				unlimited[f] = rt.add(f, false)
			}
		}
	}
	one := lims[0]
	rt.match = func(req *traffic.Request) int {
		l := one
		if byFrontend {
			if l = byName[string(req.Frontend)]; l == nil {
				if i, ok := unlimited[string(req.Frontend)]; ok {
					return i
				}
				return -1
			}
		}
		if routedCond(l) && !l.Track.Cond.holds(req) {
			return -1 // its counter is not tracked: the deny reads nothing
		}
		return route[l.Name]
	}
	return rt
}

var _ Router = (*HAProxy)(nil)

// routedCond reports whether row l's track condition routes the
// section's requests: a lone deny's; in a row of several denies each
// condition gives its counter's key instead (haproxyKey).
func routedCond(l *HAProxyLimit) bool { return l.Track.Cond != nil && len(l.Also) == 0 }

// haproxyDeriver gives a request the key of an HAProxy counter whose
// track has a condition (Key.cond), in a section of several denies (an
// all-of row): the track's key where its condition holds for the request,
// read from the log as a router reads the request's method, host and
// path (traffic.RequestOfVars), else no value, so that the counter is
// neither counted nor read for it, as HAProxy leaves an untracked counter.
type haproxyDeriver struct {
	cond *haCond
	vars []string // the key's variable, then the request's
}

func (d *haproxyDeriver) Vars() []string { return d.vars }

func (d *haproxyDeriver) Derive(vals []string) string {
	req := traffic.RequestOfVars(d.vars[1:], vals[1:])
	if !d.cond.holds(&req) {
		return ""
	}
	return vals[0]
}

// haproxyDeriverOf is the deriver of the key of a track with condition
// c, whose key the log holds in the variable key of tmpl; missing names
// the request fields c reads that tmpl does not log (how says what to
// add), when it lacks one.
func haproxyDeriverOf(c *haCond, key string, tmpl *traffic.LogTemplate) (d *haproxyDeriver, missing, how string) {
	d = &haproxyDeriver{cond: c, vars: []string{key}}
	var lack []string
	var add []string
	for _, f := range []struct {
		need  traffic.RequestFields
		names []string
		what  string
		log   string
	}{
		{traffic.NeedMethod, []string{"request_method", "request"}, "method", "%HM"},
		{traffic.NeedPath, []string{"uri", "document_uri", "request_uri", "request"}, "path", "%HP"},
		{traffic.NeedHost, []string{"host", "http_host", "server_name"}, "host", "%[capture.req.hdr(N)] of a capture of the Host header"},
	} {
		found := false
		for _, n := range f.names {
			if tmpl.Index(n) >= 0 {
				found = true
				if !slices.Contains(d.vars, n) {
					d.vars = append(d.vars, n)
				}
			}
		}
		if !found && c.needs&f.need != 0 {
			lack, add = append(lack, f.what), append(add, f.log)
		}
	}
	return d, strings.Join(lack, " and "), strings.Join(add, " and ")
}
