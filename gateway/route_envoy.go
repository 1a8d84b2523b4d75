package gateway

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// envoy's routing, as its route configuration says
// (https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route.proto
// and route_components.proto, VirtualHost and RouteMatch): the virtual
// host is the one whose domains hold the request's host exactly, else the
// longest suffix wildcard (*.example.com), else the longest prefix
// wildcard (example.*), else "*"; within it, the first route in order
// whose match takes the request: prefix, path (exact), safe_regex (RE2,
// the whole path), path_separated_prefix (the prefix, then the end or a
// /), each case-sensitive unless case_sensitive is false, and every
// headers matcher of :method (exact). A match on other headers or on
// query parameters is an error: a log says neither. The local_ratelimit
// config that applies is the route's typed_per_filter_config, else its
// virtual host's, else the filter's own: the request goes to that scope's
// rows.

// envoyRouteConfig is a listener's route_config, as read.
type envoyRouteConfig struct {
	listener string
	rc       *tree
}

type envoyVHost struct {
	domains []string
	routes  []*envoyRoute
}

type envoyRoute struct {
	prefix, path, sepPrefix string
	re                      *regexp.Regexp
	fold                    bool
	methods                 []string
	route                   int // the route whose rows take its requests
}

func (r *envoyRoute) match(req *traffic.Request) bool {
	path := string(req.Path)
	if r.fold {
		path = strings.ToLower(path)
	}
	switch {
	case r.re != nil:
		if !r.re.MatchString(path) {
			return false
		}
	case r.path != "":
		if path != r.path {
			return false
		}
	case r.sepPrefix != "":
		if !strings.HasPrefix(path, r.sepPrefix) || len(path) > len(r.sepPrefix) && path[len(r.sepPrefix)] != '/' {
			return false
		}
	default:
		if !strings.HasPrefix(path, r.prefix) {
			return false
		}
	}
	return len(r.methods) == 0 || slices.Contains(r.methods, string(req.Method))
}

// envoyPickVHost picks the virtual host of host.
func envoyPickVHost(vs []*envoyVHost, host string) *envoyVHost {
	for _, v := range vs {
		if slices.Contains(v.domains, host) {
			return v
		}
	}
	var best *envoyVHost
	n := 0
	for _, v := range vs {
		for _, d := range v.domains {
			if len(d) > 1 && strings.HasPrefix(d, "*") && strings.HasSuffix(host, d[1:]) && len(d) > n {
				best, n = v, len(d)
			}
		}
	}
	if best != nil {
		return best
	}
	for _, v := range vs {
		for _, d := range v.domains {
			if len(d) > 1 && strings.HasSuffix(d, "*") && strings.HasPrefix(host, d[:len(d)-1]) && len(d) > n {
				best, n = v, len(d)
			}
		}
	}
	if best != nil {
		return best
	}
	for _, v := range vs {
		if slices.Contains(v.domains, "*") {
			return v
		}
	}
	return nil
}

// envoyListener is a listener of the bootstrap: its name and its
// socket_address.
type envoyListener struct {
	name, addr, port string
}

// takes reports whether a log's listener field v names l: its name, or
// its local address ADDR:PORT as %DOWNSTREAM_LOCAL_ADDRESS% writes it (a
// listener on 0.0.0.0 takes every IPv4 address of its port, one on ::
// every address).
func (l envoyListener) takes(v string) bool {
	if v == l.name {
		return true
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || l.port == "" || port != l.port {
		return false
	}
	ip := net.ParseIP(host)
	switch l.addr {
	case "::":
		return ip != nil
	case "0.0.0.0":
		return ip != nil && ip.To4() != nil
	}
	return host == l.addr
}

// Routes returns envoy's routing of the listeners' route configs (Router):
// each route, virtual host and listener whose local_ratelimit config is a
// scope is a route named after the scope; a route without a config of
// its own goes to its virtual host's, or the listener's. With the rows of
// several listeners, the log says which listener took each request (its
// name, or its local address: %DOWNSTREAM_LOCAL_ADDRESS%), and a listener
// without a local_ratelimit filter is a route without a row. nil when the
// file has no route config (a filter's config read alone).
func (l *EnvoyLocal) Routes(o Options) (*Routing, error) {
	discrete, err := ParseEnvoyVersion(o.EnvoyVersion)
	if err != nil {
		return nil, err
	}
	rows, err := l.pick(o.Scope, discrete)
	if err != nil {
		return nil, err
	}
	if len(l.routeConfigs) == 0 {
		return nil, nil
	}
	// the listeners of the rows
	var cs []envoyRouteConfig
	for _, c := range l.routeConfigs {
		if slices.ContainsFunc(rows, func(r localRow) bool {
			return r.scope.Name == c.listener || strings.HasPrefix(r.scope.Name, c.listener+"/")
		}) {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	rt, err := l.routes(rows, cs, len(cs) > 1)
	if err != nil || o.Scope == "" || len(cs) > 1 || len(l.listeners) < 2 {
		return rt, err
	}
	// --scope kept one listener's scopes: a log whose lines name their
	// listener still routes by it, the other listeners' lines to routes
	// without a row; one that does not is read as that listener's
	scoped, err := l.routes(rows, cs, true)
	if err != nil {
		return nil, err
	}
	scoped.loose, scoped.hasLoose = rt, true
	scoped.looseNote = fmt.Sprintf("the listener %s, whose scopes --scope kept, takes every line (log each line's listener to leave the others' lines out: a field downstream_local_address with %%DOWNSTREAM_LOCAL_ADDRESS%%, or listener with its name)", cs[0].listener)
	return scoped, nil
}

// routes is the routing of the route configs cs of rows, by the listener
// each line names when byListener (else every line is cs[0]'s).
func (l *EnvoyLocal) routes(rows []localRow, cs []envoyRouteConfig, byListener bool) (*Routing, error) {
	scopes := map[string]bool{}
	for _, s := range l.enabledScopes() {
		scopes[s.Name] = true
	}
	rt := &Routing{needs: traffic.NeedPath, how: "log the path (%REQ(:PATH)%) and, with several virtual hosts, the host (%REQ(:AUTHORITY)%)"}
	var each [][]*envoyVHost
	for _, c := range cs {
		vs, err := envoyVHosts(rt, c, scopes)
		if err != nil {
			return nil, err
		}
		each = append(each, vs)
	}
	for _, row := range rows {
		i := slices.IndexFunc(rt.routes, func(r traffic.Route) bool { return r.Name == row.scope.Name })
		rt.row(row.label, i)
	}
	pick := func(vs []*envoyVHost, req *traffic.Request) int {
		v := envoyPickVHost(vs, string(req.Host))
		if v == nil {
			return -1
		}
		for _, r := range v.routes {
			if r.match(req) {
				return r.route
			}
		}
		return -1
	}
	if !byListener {
		rt.match = func(req *traffic.Request) int { return pick(each[0], req) }
		return rt, nil
	}
	// several listeners: the log's listener field picks one; a listener
	// of no row is a route of its own, without a limit
	rt.needs |= traffic.NeedFrontend
	rt.how = "log each request's listener: a JSON field downstream_local_address with %DOWNSTREAM_LOCAL_ADDRESS% (or listener with its name)"
	type known struct {
		l     envoyListener
		vs    []*envoyVHost // nil: a listener of no row
		route int
	}
	var ls []known
	for _, el := range l.listeners {
		k := known{l: el, route: -1}
		if i := slices.IndexFunc(cs, func(c envoyRouteConfig) bool { return c.listener == el.name }); i >= 0 {
			k.vs = each[i]
		} else {
			k.route = rt.add(el.name, false)
		}
		ls = append(ls, k)
	}
	rt.match = func(req *traffic.Request) int {
		v := string(req.Frontend)
		for _, k := range ls {
			if k.l.takes(v) {
				if k.vs == nil {
					return k.route
				}
				return pick(k.vs, req)
			}
		}
		return -1
	}
	return rt, nil
}

// envoyVHosts reads the virtual hosts of c, adding the routes of their
// scopes to rt.
func envoyVHosts(rt *Routing, c envoyRouteConfig, scopes map[string]bool) ([]*envoyVHost, error) {
	vhosts, err := c.rc.at("virtual_hosts").listOf("a list of virtual hosts")
	if err != nil {
		return nil, err
	}
	if len(vhosts) > 1 {
		rt.needs |= traffic.NeedHost
	}
	// the scope a request meets: the most specific one that has a config
	scopeOf := func(names ...string) string {
		for i := len(names) - 1; i >= 0; i-- {
			if scopes[names[i]] {
				return names[i]
			}
		}
		return names[len(names)-1]
	}
	var vs []*envoyVHost
	for i, vm := range vhosts {
		vname, err := vm.at("name").scalarText()
		if err != nil {
			return nil, err
		}
		if vname == "" {
			vname = fmt.Sprintf("virtual_hosts[%d]", i)
		}
		v := &envoyVHost{}
		if ds := vm.get("domains"); ds != nil {
			items, err := ds.listOf("a list of domains")
			if err != nil {
				return nil, err
			}
			for _, d := range items {
				s, err := d.scalarText()
				if err != nil {
					return nil, err
				}
				if h, _, ok := strings.Cut(s, ":"); ok && !strings.HasPrefix(s, "[") {
					s = h
				}
				v.domains = append(v.domains, strings.ToLower(s))
			}
		}
		routes, err := vm.at("routes").listOf("a list of routes")
		if err != nil {
			return nil, err
		}
		for j, rm := range routes {
			rname, err := routeName(rm, j)
			if err != nil {
				return nil, err
			}
			name := scopeOf(c.listener, c.listener+"/"+vname, c.listener+"/"+vname+"/"+rname)
			r, needs, err := envoyMatch(rm.get("match"))
			if err != nil {
				return nil, err
			}
			rt.needs |= needs
			r.route = rt.add(name, false)
			v.routes = append(v.routes, r)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// envoyMatch reads a route's match.
func envoyMatch(m *tree) (*envoyRoute, traffic.RequestFields, error) {
	r := &envoyRoute{}
	if m.isNull() {
		return nil, 0, fmt.Errorf("a route without a match")
	}
	var needs traffic.RequestFields
	if cs := m.get("case_sensitive"); !cs.isNull() {
		on, err := cs.boolean()
		if err != nil {
			return nil, 0, err
		}
		r.fold = !on
	}
	text := func(k string) (string, bool, error) {
		v := m.get(k)
		if v.isNull() {
			return "", false, nil
		}
		s, err := v.scalarText()
		return s, true, err
	}
	var err error
	var ok bool
	switch {
	case m.get("safe_regex") != nil:
		sr := m.get("safe_regex")
		expr, err := sr.at("regex").scalarText()
		if err != nil {
			return nil, 0, err
		}
		if r.fold {
			expr = "(?i)" + expr
		}
		if r.re, err = regexp.Compile("^(?:" + expr + ")$"); err != nil {
			return nil, 0, sr.errAt("%q: a regular expression RE2 cannot read (%v)", expr, err)
		}
	default:
		if r.path, ok, err = text("path"); err != nil || ok {
			break
		}
		if r.sepPrefix, ok, err = text("path_separated_prefix"); err != nil || ok {
			break
		}
		if r.prefix, ok, err = text("prefix"); err != nil || ok {
			break
		}
		return nil, 0, m.errAt("a route match replay cannot read (it reads prefix, path, safe_regex and path_separated_prefix)")
	}
	if err != nil {
		return nil, 0, err
	}
	if r.fold {
		r.prefix, r.path, r.sepPrefix = strings.ToLower(r.prefix), strings.ToLower(r.path), strings.ToLower(r.sepPrefix)
	}
	if q := m.get("query_parameters"); q != nil && !q.isNull() {
		return nil, 0, q.errAt("a route on query parameters, which a log does not say: replay cannot route by it")
	}
	if hs := m.get("headers"); hs != nil && !hs.isNull() {
		items, err := hs.listOf("a list of header matchers")
		if err != nil {
			return nil, 0, err
		}
		for _, h := range items {
			name, err := h.at("name").scalarText()
			if err != nil {
				return nil, 0, err
			}
			exact, err := h.at("exact_match").scalarText()
			if err == nil && exact == "" {
				if sm := h.get("string_match"); sm != nil {
					exact, err = sm.at("exact").scalarText()
				}
			}
			if err != nil {
				return nil, 0, err
			}
			if name != ":method" || exact == "" {
				return nil, 0, h.errAt("a route on the header %s, which a log does not say: replay routes by :method (exact) only", name)
			}
			r.methods = append(r.methods, strings.ToUpper(exact))
			needs |= traffic.NeedMethod
		}
	}
	return r, needs, nil
}

var _ Router = (*EnvoyLocal)(nil)
