package gateway

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// Kong's routing in its default router since 3.0, traditional_compat
// (https://developer.konghq.com/gateway/routing/traditional/ and its
// "Matching priorities"): a route matches a request when every field it
// sets matches, each field by any of its values: methods exactly, hosts
// ignoring case, exactly or by a wildcard at either end (*.example.com,
// example.*), paths as a prefix, or, written ~..., as a regular
// expression anchored at the path's start. Among the routes that match,
// Kong takes the one of highest priority, in order of significance: a
// point for each of methods, hosts, headers and snis set; plain hosts
// before wildcard ones; more headers first; then by path, each path of a
// route ranked on its own: regular expressions first, by regex_priority
// (highest first), then prefixes, longest first. The order of routes of
// equal priority is not defined by Kong: here the file's. A route that
// matches on headers or snis is an error (a log says neither).

// kongEntry is one path of one route (or the route, without paths), as
// the router ranks it.
type kongEntry struct {
	route    int
	order    int // the route's place in the file
	points   int
	plain    bool // every host is plain (no wildcard)
	methods  []string
	hosts    []string
	prefix   string         // a prefix path, or "" with re nil: any path
	re       *regexp.Regexp // a regex path
	priority int64          // regex_priority
}

func (e *kongEntry) match(req *traffic.Request) bool {
	if len(e.methods) > 0 && !slices.Contains(e.methods, string(req.Method)) {
		return false
	}
	if len(e.hosts) > 0 && !slices.ContainsFunc(e.hosts, func(h string) bool { return kongHost(h, string(req.Host)) }) {
		return false
	}
	switch {
	case e.re != nil:
		return e.re.Match(req.Path)
	case e.prefix != "":
		return strings.HasPrefix(string(req.Path), e.prefix)
	}
	return true
}

// kongHost matches a route's host (lower case) against a request's.
func kongHost(h, host string) bool {
	switch {
	case strings.HasPrefix(h, "*"):
		return strings.HasSuffix(host, h[1:])
	case strings.HasSuffix(h, "*"):
		return strings.HasPrefix(host, h[:len(h)-1])
	}
	return h == host
}

// Routes returns Kong's routing of the file's routes (Router): each route
// is a route named after it; the rows of a route (and of its consumers)
// take its requests; a service without routes takes none. nil when the
// file has no route (every request meets the global or service limit).
func (k *Kong) Routes(o Options) (*Routing, error) {
	scopes, err := k.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	if len(k.routes) == 0 {
		return nil, nil
	}
	rt := &Routing{}
	var entries []*kongEntry
	for i, r := range k.routes {
		idx := rt.add(r.name, false)
		es, needs, err := kongEntries(r, idx, i)
		if err != nil {
			return nil, err
		}
		rt.needs |= needs
		entries = append(entries, es...)
	}
	slices.SortStableFunc(entries, func(a, b *kongEntry) int {
		if c := cmp.Compare(b.points, a.points); c != 0 {
			return c
		}
		if a.plain != b.plain {
			if a.plain {
				return -1
			}
			return 1
		}
		// regexes before prefixes before no path
		rank := func(e *kongEntry) int {
			switch {
			case e.re != nil:
				return 0
			case e.prefix != "":
				return 1
			}
			return 2
		}
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		if a.re != nil {
			return cmp.Compare(b.priority, a.priority)
		}
		return cmp.Compare(len(b.prefix), len(a.prefix))
	})
	var plugins []string
	users := map[string][]string{}
	for _, s := range scopes {
		p := s.Plugin
		if p.Route != "" || s.Route == "" {
			continue // a route's own plugin counts for that route alone
		}
		name := fmt.Sprintf("the %s plugin of %s (%s:%d)", p.Name, p.scopeText(), filepath.Base(k.File), p.Where.Line)
		if !slices.Contains(plugins, name) {
			plugins = append(plugins, name)
		}
		users[name] = append(users[name], s.Name())
	}
	rt.shared(plugins, users, "Kong keys its counters by the plugin's own service and route (get_local_key, kong/plugins/rate-limiting/policies/init.lua), empty for a service's or a global plugin, so its routes count together",
		"with one counter per key, as Kong keeps a service's or a global plugin's for all its routes")
	for _, s := range scopes {
		i := -1
		if s.Route != "" {
			i = slices.IndexFunc(rt.routes, func(r traffic.Route) bool { return r.Name == s.Route })
		}
		rt.row(s.Name(), i)
	}
	rt.match = func(req *traffic.Request) int {
		for _, e := range entries {
			if e.match(req) {
				return e.route
			}
		}
		return -1
	}
	return rt, nil
}

// kongEntries reads a route's matching fields: its entries, one per path,
// and the request fields they read.
func kongEntries(r kongRoute, idx, order int) ([]*kongEntry, traffic.RequestFields, error) {
	var needs traffic.RequestFields
	strs := func(key string) ([]string, error) {
		v := r.t.get(key)
		if v == nil || v.isNull() {
			return nil, nil
		}
		items, err := v.listOf("a list of " + key)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, it := range items {
			s, err := it.str()
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	base := kongEntry{route: idx, order: order}
	var err error
	if base.methods, err = strs("methods"); err != nil {
		return nil, 0, err
	}
	for i, m := range base.methods {
		base.methods[i] = strings.ToUpper(m)
	}
	if base.hosts, err = strs("hosts"); err != nil {
		return nil, 0, err
	}
	base.plain = len(base.hosts) > 0
	for i, h := range base.hosts {
		h = strings.ToLower(h)
		if hh, _, ok := strings.Cut(h, ":"); ok && !strings.HasPrefix(h, "[") {
			h = hh // a port is not matched: the log's host has none
		}
		base.hosts[i] = h
		if strings.Contains(h, "*") {
			base.plain = false
		}
	}
	for _, f := range []string{"headers", "snis"} {
		if v := r.t.get(f); v != nil && !v.isNull() && !(v.kind == treeList && len(v.items) == 0) && !(v.kind == treeMap && len(v.fields) == 0) {
			return nil, 0, v.errAt("route %s matches on %s, which a log does not say: replay cannot route by it", r.name, f)
		}
	}
	if len(base.methods) > 0 {
		base.points++
		needs |= traffic.NeedMethod
	}
	if len(base.hosts) > 0 {
		base.points++
		needs |= traffic.NeedHost
	}
	if v := r.t.get("regex_priority"); v != nil && !v.isNull() {
		if base.priority, err = v.integer(); err != nil {
			return nil, 0, err
		}
	}
	paths, err := strs("paths")
	if err != nil {
		return nil, 0, err
	}
	if len(paths) == 0 {
		e := base
		return []*kongEntry{&e}, needs, nil
	}
	needs |= traffic.NeedPath
	var out []*kongEntry
	for _, p := range paths {
		e := base
		if expr, ok := strings.CutPrefix(p, "~"); ok {
			re, err := regexp.Compile("^(?:" + expr + ")")
			if err != nil {
				return nil, 0, r.t.get("paths").errAt("route %s: path %q: a regular expression ratesim cannot read (%v)", r.name, p, err)
			}
			e.re = re
		} else {
			e.prefix = p
		}
		out = append(out, &e)
	}
	return out, needs, nil
}

var _ Router = (*Kong)(nil)
