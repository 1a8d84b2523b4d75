package gateway

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// Traefik's routing, as its docs say (https://doc.traefik.io/traefik/routing/routers/,
// "Rule" and "Priority"): each router's rule is an expression of matchers
// (Host, HostRegexp, Path, PathPrefix, PathRegexp, Method) joined by &&
// and ||, negated by !, grouped by parentheses; a request goes to the
// router of highest priority whose rule matches, the priority being the
// router's priority field, else the length of its rule. Routers of equal
// priority are tried in the order of the file (Traefik leaves the order
// of equal priorities unspecified). Traefik v2's several arguments
// (Host(`a`, `b`)) are any of them. Matchers of what a log does not say
// (Header, Query, ClientIP) are an error at the rule.

// traefikRoute is one router as the router matches it.
type traefikRoute struct {
	name     string
	priority int64
	rule     traefikExpr
	route    int
}

// traefikExpr is a parsed rule.
type traefikExpr interface {
	match(req *traffic.Request) bool
}

type traefikAnd struct{ a, b traefikExpr }
type traefikOr struct{ a, b traefikExpr }
type traefikNot struct{ a traefikExpr }

// traefikMatcher is one matcher with its arguments (any of them matches).
type traefikMatcher struct {
	name string
	args []string
	res  []*regexp.Regexp // for the *Regexp matchers
}

func (e traefikAnd) match(r *traffic.Request) bool { return e.a.match(r) && e.b.match(r) }
func (e traefikOr) match(r *traffic.Request) bool  { return e.a.match(r) || e.b.match(r) }
func (e traefikNot) match(r *traffic.Request) bool { return !e.a.match(r) }

func (m *traefikMatcher) match(r *traffic.Request) bool {
	for i, a := range m.args {
		switch m.name {
		case "Host":
			if strings.EqualFold(string(r.Host), a) {
				return true
			}
		case "Method":
			if string(r.Method) == strings.ToUpper(a) {
				return true
			}
		case "Path":
			if string(r.Path) == a {
				return true
			}
		case "PathPrefix":
			if strings.HasPrefix(string(r.Path), a) {
				return true
			}
		case "HostRegexp":
			if m.res[i].Match(r.Host) {
				return true
			}
		case "PathRegexp":
			if m.res[i].Match(r.Path) {
				return true
			}
		}
	}
	return false
}

// traefikNeeds are the request fields each matcher reads.
var traefikNeeds = map[string]traffic.RequestFields{
	"Host": traffic.NeedHost, "HostRegexp": traffic.NeedHost, "Method": traffic.NeedMethod,
	"Path": traffic.NeedPath, "PathPrefix": traffic.NeedPath, "PathRegexp": traffic.NeedPath,
}

// Routes returns Traefik's routing of the file's routers (Router): each
// router is a route, named after it; the rows of a router take its
// requests, and a middleware's that no router uses none.
func (t *Traefik) Routes(o Options) (*Routing, error) {
	scopes, err := t.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	rt := &Routing{}
	var routers []*traefikRoute
	if t.routers != nil {
		for _, f := range t.routers.fields {
			rule := f.val.get("rule")
			if rule == nil {
				continue // a router without a rule takes nothing
			}
			text, err := rule.str()
			if err != nil {
				return nil, err
			}
			p := &traefikParser{src: text, at: rule.pos}
			e, err := p.parse()
			if err != nil {
				return nil, err
			}
			rt.needs |= p.needs
			r := &traefikRoute{name: f.key, priority: int64(len(text)), rule: e, route: rt.add(f.key, false)}
			if pr := f.val.get("priority"); pr != nil {
				if r.priority, err = pr.integer(); err != nil {
					return nil, err
				}
			}
			routers = append(routers, r)
		}
	}
	slices.SortStableFunc(routers, func(a, b *traefikRoute) int {
		switch {
		case a.priority > b.priority:
			return -1
		case a.priority < b.priority:
			return 1
		}
		return 0
	})
	var mws []string
	users := map[string][]string{}
	for _, s := range scopes {
		if m := fmt.Sprintf("middleware %s (%s:%d, redis)", s.Limit.Middleware, filepath.Base(t.File), s.Limit.Where.Line); s.Limit.Redis && s.Router != "" {
			if !slices.Contains(mws, m) {
				mws = append(mws, m)
			}
			users[m] = append(users[m], s.Name())
		}
	}
	rt.shared(mws, users, "with redis, Traefik keeps the middleware's buckets in Redis under its own name, shared by its routers (in memory each router has its own, as the rows do)",
		"with one bucket per key, as Traefik keeps the middleware's in Redis (the row's rule is the in-memory limiter's)")
	for _, s := range scopes {
		i := -1
		if s.Router != "" {
			i = slices.IndexFunc(rt.routes, func(r traffic.Route) bool { return r.Name == s.Router })
			if i < 0 {
				return nil, &Error{File: t.File, Line: s.Where.Line, Col: s.Where.Col, Path: "routers." + s.Router,
					Msg: "the router has no rule: no request comes to it, and replay cannot route one there"}
			}
		}
		rt.row(s.Name(), i)
	}
	rt.match = func(req *traffic.Request) int {
		for _, r := range routers {
			if r.rule.match(req) {
				return r.route
			}
		}
		return -1
	}
	return rt, nil
}

// traefikParser reads a rule (Traefik's pkg/rules grammar).
type traefikParser struct {
	src   string
	i     int
	at    Pos // the rule's value
	needs traffic.RequestFields
}

func (p *traefikParser) errf(format string, args ...any) error {
	return &Error{File: p.at.File, Line: p.at.Line, Col: p.at.Col, Path: "rule",
		Msg: fmt.Sprintf("%q: ", p.src) + fmt.Sprintf(format, args...)}
}

func (p *traefikParser) parse() (traefikExpr, error) {
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.src) {
		return nil, p.errf("unexpected %q at column %d of the rule", p.src[p.i:], p.i+1)
	}
	return e, nil
}

func (p *traefikParser) space() {
	for p.i < len(p.src) && (p.src[p.i] == ' ' || p.src[p.i] == '\t' || p.src[p.i] == '\n') {
		p.i++
	}
}

func (p *traefikParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *traefikParser) or() (traefikExpr, error) {
	e, err := p.and()
	for err == nil && p.eat("||") {
		var b traefikExpr
		if b, err = p.and(); err == nil {
			e = traefikOr{e, b}
		}
	}
	return e, err
}

func (p *traefikParser) and() (traefikExpr, error) {
	e, err := p.unary()
	for err == nil && p.eat("&&") {
		var b traefikExpr
		if b, err = p.unary(); err == nil {
			e = traefikAnd{e, b}
		}
	}
	return e, err
}

func (p *traefikParser) unary() (traefikExpr, error) {
	if p.eat("!") {
		e, err := p.unary()
		return traefikNot{e}, err
	}
	if p.eat("(") {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, p.errf("no ) at column %d of the rule", p.i+1)
		}
		return e, nil
	}
	return p.matcher()
}

func (p *traefikParser) matcher() (traefikExpr, error) {
	p.space()
	start := p.i
	for p.i < len(p.src) && (p.src[p.i] >= 'A' && p.src[p.i] <= 'Z' || p.src[p.i] >= 'a' && p.src[p.i] <= 'z') {
		p.i++
	}
	name := p.src[start:p.i]
	if name == "" {
		return nil, p.errf("want a matcher at column %d of the rule", start+1)
	}
	need, ok := traefikNeeds[name]
	if !ok {
		return nil, p.errf("%s: a matcher replay cannot read from a log (it reads Host, HostRegexp, Method, Path, PathPrefix and PathRegexp)", name)
	}
	p.needs |= need
	if !p.eat("(") {
		return nil, p.errf("no ( after %s", name)
	}
	m := &traefikMatcher{name: name}
	for {
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != '`' && p.src[p.i] != '"' {
			return nil, p.errf("want a quoted argument of %s at column %d of the rule", name, p.i+1)
		}
		q := p.src[p.i]
		end := strings.IndexByte(p.src[p.i+1:], q)
		if end < 0 {
			return nil, p.errf("no closing %c after column %d of the rule", q, p.i+1)
		}
		arg := p.src[p.i+1 : p.i+1+end]
		p.i += end + 2
		if strings.HasSuffix(name, "Regexp") {
			re, err := regexp.Compile(arg)
			if err != nil {
				return nil, p.errf("%s(%q): %v", name, arg, err)
			}
			m.res = append(m.res, re)
		}
		m.args = append(m.args, arg)
		if p.eat(")") {
			return m, nil
		}
		if !p.eat(",") {
			return nil, p.errf("want , or ) at column %d of the rule", p.i+1)
		}
	}
}

var _ Router = (*Traefik)(nil)
