package gateway

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// Router is a Config that says where its gateway sends each request: to
// which location, route or router, by the request's method, host and
// path, as the gateway matches them (docs/gateways.md, Routing). replay
// --gateway routes each request of the trace so, and each row takes only
// the requests of its scope.
type Router interface {
	// Routes returns the gateway's routing, with the route of each row
	// of the scopes o picks (Scenario); the routes without a limit are
	// routes too, not Limited. nil when one route takes every request.
	Routes(o Options) (*Routing, error)
}

// Routing is a gateway's routes (a traffic.Router) and the route each row
// of its import takes.
type Routing struct {
	routes []traffic.Route
	needs  traffic.RequestFields
	match  func(req *traffic.Request) int
	// rows are the routes by row label; a row of no route (a middleware
	// that no router uses) takes no request
	rows map[string]int
	// notes say where the gateway keeps one limit's state for several
	// routes, which the rows, each fed its own route, do not
	notes []string
	// shares are the limits whose state the gateway keeps once for
	// several rows' routes, which Replay.Route makes one row of, or
	// notes when it cannot
	shares []sharedLimit
	// how says what to log when the log lacks a field the routes read
	// ("" for nginx's variables)
	how string
	// scopeNotes say which routes that --scope left out charge a limit
	// of a picked row (Route.Shares), when the router routes the log
	scopeNotes []string
	// loose, when hasLoose, is the routing to use when the log does not
	// say each line's frontend (or listener): --scope kept one of several
	// entry points, and every line is then taken as its own (nil: every
	// line to the one row), as looseNote says
	loose     *Routing
	hasLoose  bool
	looseNote string
}

// sharedLimit is a limit that the rows of several routes use and whose
// state the gateway keeps once for all of them: its name and file:line,
// the rows' labels, the note that says the rows count apart (when they
// stay apart), how the gateway keeps it (for the note when they are one
// row), and perRoute when each route checks the state with its own
// parameters (an nginx zone, each location with its own burst).
type sharedLimit struct {
	name     string
	rows     []string
	note     string
	how      string
	perRoute bool
	users    string // perRoute: the rows with their bursts, for errors
}

// shared records, for each limit that several routes' rows use (by a
// name of the limit and the rows' labels, in order), that the gateway
// keeps its state once for all of them (why, and how for one row).
func (t *Routing) shared(order []string, users map[string][]string, why, how string) {
	for _, lim := range order {
		if rows := users[lim]; len(rows) > 1 {
			t.shares = append(t.shares, sharedLimit{name: lim, rows: rows, note: sharedNote(lim, rows, why), how: how})
		}
	}
}

// sharedNote says that the limit lim, used by the rows, keeps its state
// once for all of them (why), which the rows do not.
func sharedNote(lim string, rows []string, why string) string {
	return fmt.Sprintf("%s is used by %s: %s; the rows count apart, each fed only its route's requests, and admit more than the gateway when a client calls several", lim, strings.Join(rows, ", "), why)
}

func (t *Routing) Routes() []traffic.Route        { return t.routes }
func (t *Routing) Route(req *traffic.Request) int { return t.match(req) }
func (t *Routing) Needs() traffic.RequestFields   { return t.needs }

// add adds the route name (once) and returns its index; a route is
// limited when any scope of that name is.
func (t *Routing) add(name string, limited bool) int {
	for i, r := range t.routes {
		if r.Name == name {
			t.routes[i].Limited = t.routes[i].Limited || limited
			return i
		}
	}
	t.routes = append(t.routes, traffic.Route{Name: name, Limited: limited})
	return len(t.routes) - 1
}

// row says that the row label takes the requests of route i (-1: none).
func (t *Routing) row(label string, i int) {
	if t.rows == nil {
		t.rows = map[string]int{}
	}
	t.rows[label] = i
	if i >= 0 {
		t.routes[i].Limited = true
	}
}

// noRoute is the Arrival.Route of a row that takes no request: no router
// gives it (traffic.MaxRoutes is below it).
const noRoute = traffic.MaxRoutes + 1

// Route gives each row of sc the route of its label and the trace's replay
// sources the router: each row then takes only the requests routed to its
// scope. A row whose label is no route's is an error (the config's rows
// and routes disagree).
func (g *Replay) Route(sc *scenarios.Scenario) error {
	if g.Router == nil {
		return nil
	}
	for i := range sc.Algorithms {
		a := &sc.Algorithms[i]
		j, ok := g.Router.rows[a.Label]
		switch {
		case !ok:
			return fmt.Errorf("--gateway: the row %q has no route of the config", a.Label)
		case j < 0:
			a.Route = noRoute
		default:
			a.Route = uint16(j + 1)
		}
	}
	for _, z := range g.Router.shares {
		note, err := g.share(sc, z)
		if err != nil {
			return err
		}
		g.RouteNotes = append(g.RouteNotes, note)
	}
	for _, src := range sc.Traffic.Sources {
		if r, ok := src.(*traffic.Replay); ok {
			r.Router = g.Router
		}
	}
	return nil
}

// share makes one row of the rows of sc that use the limit z, each with
// its route, as the gateway keeps z's state once for all of them. With
// z.perRoute (an nginx zone), each request is checked with its own
// location's burst, delay and nodelay (algorithms.Nginx,
// Params.NginxRoutes); else the rows must be alike but for their routes
// (a Kong service's plugin, a Traefik middleware). The row, labelled by
// the rows' labels joined by " + ", stands where the first was. Rows that
// are not each that limit and nothing else stay apart, as z.note says;
// but an nginx zone (z.perRoute) named by a location of several zones (an
// all-of row), or on a cluster, is an error: its rows would count apart
// and admit more than nginx, and one row cannot hold them (an all-of row
// takes one route; a cluster's nodes decide without the route). It
// returns the note that says which.
func (g *Replay) share(sc *scenarios.Scenario, z sharedLimit) (string, error) {
	if sc.Cluster != nil && z.perRoute {
		return "", fmt.Errorf("--gateway: %s is used by %s: nginx keeps one state per key in a zone for every location that names it, which ratesim makes one row of, but not on a cluster (its nodes' limiters decide without the route); keep one location with --scope, or give each location a zone of its own",
			z.name, z.users)
	}
	var at []int
	for _, label := range z.rows {
		i := slices.IndexFunc(sc.Algorithms, func(a scenarios.Algorithm) bool { return a.Label == label })
		if i < 0 {
			return z.note, nil
		}
		at = append(at, i)
	}
	for _, i := range at {
		if a := &sc.Algorithms[i]; z.perRoute && len(a.Params.Members) > 0 {
			why := "also names other zones (an all-of row"
			if len(a.Params.Members) == 1 {
				// a zone keyed by another key than the request's (an
				// nginx map's variable) is an all-of row of one limit
				why = "counts by another key than the request's (an all-of row of one limit"
			}
			return "", fmt.Errorf("--gateway: %s is used by %s: nginx keeps one state per key in a zone for every location that names it, which ratesim makes one row of, but %s %s, which takes one location's requests): its rows would count apart and admit more than nginx; keep one location with --scope, or give each location a zone of its own",
				z.name, z.users, a.Label, why)
		}
	}
	first := &sc.Algorithms[at[0]]
	for _, i := range at {
		a := &sc.Algorithms[i]
		if a.Route == 0 || a.Route == noRoute || len(a.Routes) > 0 || a.Name != first.Name {
			return z.note, nil
		}
		if z.perRoute && (a.Name != "nginx" || len(a.Params.Members) > 0 || a.Params.NginxZone != 0 ||
			!reflect.DeepEqual(zoneParams(a.Params), zoneParams(first.Params))) {
			return z.note, nil
		}
		if !z.perRoute && (!reflect.DeepEqual(a.Params, first.Params) || !reflect.DeepEqual(a.Set, first.Set) || !reflect.DeepEqual(a.Coord, first.Coord)) {
			return z.note, nil
		}
	}
	row := *first
	row.Label = strings.Join(z.rows, " + ")
	row.Routes = nil
	for _, i := range at[1:] {
		row.Routes = append(row.Routes, sc.Algorithms[i].Route)
	}
	var rules []string
	if z.perRoute {
		row.Params.NginxRoutes = nil
		row.Set = maps.Clone(first.Set)
		if row.Set == nil {
			row.Set = map[string]any{}
		}
		for k, i := range at {
			a := &sc.Algorithms[i]
			p := a.Params
			burst := p.Burst - 1
			if p.NginxBurstSet {
				burst = p.NginxBurst
			}
			row.Params.NginxRoutes = append(row.Params.NginxRoutes, algorithms.NginxRoute{Route: a.Route, Burst: burst, Delay: p.NginxDelay, Nodelay: p.Nodelay})
			rule := fmt.Sprintf("%s burst=%d", z.rows[k], burst)
			if p.NginxDelay > 0 {
				rule += fmt.Sprintf(" delay=%d", p.NginxDelay)
			}
			if p.Nodelay {
				rule += " nodelay"
			}
			rules = append(rules, rule)
		}
		for _, k := range []string{"burst", "delay", "nodelay"} {
			delete(row.Set, k)
		}
		row.Set["routes"] = strings.Join(rules, ", ")
	}
	g.merged = append(g.merged, mergedRows{name: z.name, rows: z.rows, label: row.Label, perRoute: z.perRoute, rules: rules})
	// the row stands where the first was; the others go
	sc.Algorithms[at[0]] = row
	gone := slices.Clone(at[1:])
	slices.Sort(gone)
	for j := len(gone) - 1; j >= 0; j-- {
		sc.Algorithms = slices.Delete(sc.Algorithms, gone[j], gone[j]+1)
	}
	return fmt.Sprintf("%s is used by %s: one row, %s, takes their requests, %s", z.name, strings.Join(z.rows, ", "), row.Label, z.how), nil
}

// zoneParams is p without what each location of a zone sets apart: its
// burst, delay and nodelay.
func zoneParams(p algorithms.Params) algorithms.Params {
	p.Burst, p.NginxBurst, p.NginxBurstSet, p.NginxDelay, p.Nodelay = 0, 0, false, 0, false
	return p
}

// routable checks that the trace carries what the router reads, when its
// log format says: when it does not, one limited route takes every
// request (said in Notes), and several are an error that says what to
// log. A JSON lines trace (traceFormat, with the names of its first
// line's fields) says whether its lines name their frontend or listener.
func (g *Replay) routable(tmpl *traffic.LogTemplate, traceFormat string, fields []string, o ReplayOptions, file string) error {
	missing := traffic.NeedFrontend
	switch {
	case tmpl != nil:
		missing = g.Router.Needs() &^ tmpl.Carries()
	case traceFormat == "jsonl":
		missing = g.Router.Needs() & traffic.NeedFrontend &^ traffic.CarriesFields(fields)
	}
	if missing&traffic.NeedFrontend != 0 && g.Router.hasLoose {
		// --scope kept one entry point: a log that does not name each
		// line's is read as that one's (a trace of another format is
		// read so too)
		what := g.FormatName
		if tmpl == nil {
			what = "the trace's first line"
		}
		g.Notes = append(g.Notes, fmt.Sprintf("%s does not log each request's frontend (or listener): %s", what, g.Router.looseNote))
		g.Router = g.Router.loose
		if g.Router == nil {
			return nil
		}
		if tmpl != nil {
			missing = g.Router.Needs() &^ tmpl.Carries()
		}
	}
	if tmpl == nil {
		return nil // the trace's own format: the replay checks it
	}
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
	how := g.Router.how
	if len(limited) == 1 {
		if how == "" {
			how = "log $request or $uri, and $host"
		}
		g.Router = nil
		g.Notes = append(g.Notes, fmt.Sprintf("%s does not log each request's %s: every request goes to %s, the one row (%s, to route them as the gateway does)", g.FormatName, what, limited[0], how))
		return nil
	}
	if how == "" {
		how = "add $request (or $uri, and $host for the host) to that log_format"
	}
	return fmt.Errorf("--gateway %s: its requests go to %d rows by their %s (%s), and %s does not log it: %s, or keep one scope with --scope",
		file, len(limited), what, strings.Join(limited, ", "), g.FormatName, how)
}
