package gateway

import (
	"fmt"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// Router is a Config that says where its gateway sends each request: to
// which location, route or router, by the request's method, host and
// path, as the gateway matches them (docs/gateways.md, Routing). replay
// --gateway routes each request of the trace so, and each row takes only
// the requests of its scope.
type Router interface {
	// Routes returns the gateway's routing; its routes are named after
	// the row labels of the scopes o picks (Scenario), and the scopes
	// without a limit are routes too, not Limited.
	Routes(o Options) (traffic.Router, error)
}

// table is a traffic.Router over a list of routes and a match function.
type table struct {
	routes []traffic.Route
	needs  traffic.RequestFields
	match  func(req *traffic.Request) int
}

func (t *table) Routes() []traffic.Route           { return t.routes }
func (t *table) Route(req *traffic.Request) int    { return t.match(req) }
func (t *table) Needs() traffic.RequestFields      { return t.needs }
func (t *table) add(name string, limited bool) int { return addRoute(&t.routes, name, limited) }

// sliceIndex is the index of the route name in rs, or -1.
func sliceIndex(rs []traffic.Route, name string) int {
	for i, r := range rs {
		if r.Name == name {
			return i
		}
	}
	return -1
}

// addRoute adds the route name (once) and returns its index; a route is
// limited when any scope of that name is.
func addRoute(rs *[]traffic.Route, name string, limited bool) int {
	if i := sliceIndex(*rs, name); i >= 0 {
		(*rs)[i].Limited = (*rs)[i].Limited || limited
		return i
	}
	*rs = append(*rs, traffic.Route{Name: name, Limited: limited})
	return len(*rs) - 1
}

// Route gives each row of sc the route of its label and the trace's replay
// sources the router: each row then takes only the requests routed to its
// scope. A row whose label is no route's is an error (the config's rows
// and routes disagree).
func (g *Replay) Route(sc *scenarios.Scenario) error {
	if g.Router == nil {
		return nil
	}
	routes := g.Router.Routes()
	for i := range sc.Algorithms {
		a := &sc.Algorithms[i]
		j := sliceIndex(routes, a.Label)
		if j < 0 {
			var names []string
			for _, r := range routes {
				names = append(names, r.Name)
			}
			return fmt.Errorf("--gateway: the row %q is no route of the config (its routes: %s)", a.Label, strings.Join(names, ", "))
		}
		a.Route = uint16(j + 1)
	}
	for _, src := range sc.Traffic.Sources {
		if r, ok := src.(*traffic.Replay); ok {
			r.Router = g.Router
		}
	}
	return nil
}

// routable checks that the trace carries what the router reads, when its
// log format says: when it does not, one limited route takes every
// request (said in Notes), and several are an error that says what to
// log.
func (g *Replay) routable(tmpl *traffic.LogTemplate, o ReplayOptions, file string) error {
	if tmpl == nil {
		return nil // the trace's own format: the replay checks it
	}
	missing := g.Router.Needs() &^ tmpl.Carries()
	if missing == 0 {
		return nil
	}
	var limited []string
	for _, r := range g.Router.Routes() {
		if r.Limited {
			limited = append(limited, r.Name)
		}
	}
	what := strings.Join(missing.Names(), " and ")
	if len(limited) == 1 {
		g.Router = nil
		g.Notes = append(g.Notes, fmt.Sprintf("%s does not log each request's %s: every request goes to %s, the one row (log $request or $uri, and $host, to route them as the gateway does)", g.FormatName, what, limited[0]))
		return nil
	}
	return fmt.Errorf("--gateway %s: its requests go to %d rows by their %s (%s), and %s does not log it: add $request (or $uri, and $host for the host) to that log_format, or keep one scope with --scope",
		file, len(limited), what, strings.Join(limited, ", "), g.FormatName)
}
