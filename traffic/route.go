package traffic

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Request is what a router reads of one request of a trace: its method,
// host and path, as the line carries them (nil when it does not).
type Request struct {
	// Method is the HTTP method (GET).
	Method []byte
	// Host is the host the request named, lower case, without a port.
	Host []byte
	// Path is the request's path without its query, normalised as nginx
	// normalises $uri before it matches a location
	// (ngx_http_parse_complex_uri: %XX decoded, // merged, . and ..
	// resolved).
	Path []byte
	// Frontend is the gateway's entry that took the request, as its log
	// names it: HAProxy's frontend (%f), envoy's listener (its name or
	// its local address, %DOWNSTREAM_LOCAL_ADDRESS%).
	Frontend []byte
}

// Router sends each request of a trace to a route: a location, route or
// router of a gateway's config (gateway.Router). A row of the scenario
// that names a route (Arrival.Route) takes only the requests sent there.
type Router interface {
	// Routes are the routes, in order: Arrival.Route is 1 + the index
	// of the route that took the request.
	Routes() []Route
	// Route returns the index in Routes of the route that takes req, or
	// -1 when none does (the gateway answers it without any limit: a 404,
	// or nginx's server without a matching location).
	Route(req *Request) int
	// Needs says which of the request's fields Route reads: the trace
	// must carry them.
	Needs() RequestFields
}

// RequestFields is a set of a Request's fields.
type RequestFields uint8

// The fields of a Request.
const (
	NeedMethod RequestFields = 1 << iota
	NeedHost
	NeedPath
	NeedFrontend
)

// names is the fields of f, as a list for messages.
func (f RequestFields) names() []string {
	var out []string
	for _, n := range []struct {
		f    RequestFields
		name string
	}{{NeedMethod, "method"}, {NeedHost, "host"}, {NeedPath, "path"}, {NeedFrontend, "frontend (or listener)"}} {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// MaxRoutes is how many routes a Router may name (Arrival.Route is a
// uint16, 0 for none; the largest is left for rows that take nothing).
const MaxRoutes = 1<<16 - 2

// Route is one route of a Router.
type Route struct {
	// Name is the route's name: the label of the row that takes its
	// requests, when one does.
	Name string
	// Limited says that a row takes the route's requests (a limit
	// applies there); the gateway passes the others unlimited.
	Limited bool
	// Shares, for a route no row takes, names the limit whose state its
	// requests charge in the gateway with a row's (an nginx zone named by
	// a location that --scope left out): the row does not see them.
	Shares string
}

// RouteCount is how many of a trace's requests a route took.
type RouteCount struct {
	Route
	Requests int64
}

// readRequestLine reads an HTTP request line ("GET /a?b HTTP/1.1", nginx's
// $request) into req's method and path.
func readRequestLine(line []byte, req *Request) {
	method, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return
	}
	req.Method = method
	uri, _, _ := bytes.Cut(rest, []byte(" "))
	req.Path = normalPath(uri)
}

// normalPath returns uri's path as nginx matches locations against it
// (ngx_http_parse_complex_uri in src/http/ngx_http_parse.c): the query
// and fragment cut, an absolute URI's scheme and host dropped, %XX
// decoded, runs of / merged (merge_slashes on, the default), . and ..
// segments resolved (.. above the root stays at the root).
func normalPath(uri []byte) []byte {
	if i := bytes.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	if i := bytes.Index(uri, []byte("://")); i >= 0 && bytes.IndexByte(uri[:i], '/') < 0 {
		rest := uri[i+3:]
		j := bytes.IndexByte(rest, '/')
		if j < 0 {
			return []byte("/")
		}
		uri = rest[j:]
	}
	if len(uri) == 0 {
		return uri
	}
	clean := bytes.IndexByte(uri, '%') < 0 && !bytes.Contains(uri, []byte("//")) && !bytes.Contains(uri, []byte("/."))
	if clean {
		return uri
	}
	dec := make([]byte, 0, len(uri))
	for i := 0; i < len(uri); i++ {
		c := uri[i]
		if c == '%' && i+2 < len(uri) && isHex(uri[i+1]) && isHex(uri[i+2]) {
			c = unhex(uri[i+1])<<4 | unhex(uri[i+2])
			i += 2
		}
		dec = append(dec, c)
	}
	var segs [][]byte
	for _, s := range bytes.Split(dec, []byte("/")) {
		switch string(s) {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, s)
		}
	}
	out := []byte{'/'}
	for i, s := range segs {
		if i > 0 {
			out = append(out, '/')
		}
		out = append(out, s...)
	}
	last := dec[len(dec)-1]
	if len(segs) > 0 && (last == '/' || bytes.HasSuffix(dec, []byte("/.")) || bytes.HasSuffix(dec, []byte("/.."))) {
		out = append(out, '/')
	}
	return out
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// normalHost lower-cases a host and drops its port and a trailing dot,
// as nginx's ngx_http_validate_host does.
func normalHost(h []byte) []byte {
	if len(h) == 0 || bytes.Equal(h, dash) {
		return nil
	}
	if h[0] != '[' {
		if i := bytes.LastIndexByte(h, ':'); i >= 0 {
			h = h[:i]
		}
	}
	h = bytes.TrimSuffix(h, []byte("."))
	return bytes.ToLower(h)
}

// routing is a replay stream's router and its counts.
type routing struct {
	r      Router
	needs  RequestFields
	counts []int64 // by route
	none   int64   // taken by no route
}

// route sends req to its route: the Arrival.Route of the request.
func (g *routing) route(req *Request) uint16 {
	i := g.r.Route(req)
	if i < 0 || i >= len(g.counts) {
		g.none++
		return 0
	}
	g.counts[i]++
	return uint16(i + 1)
}

// missing checks that a line carried the request fields the router
// reads: a line without one is malformed ("missing field").
func (g *routing) missing(req *Request) badLine {
	switch {
	case g.needs&NeedPath != 0 && len(req.Path) == 0:
		return missingField("no request path on this line (the gateway's routes need it)")
	case g.needs&NeedMethod != 0 && len(req.Method) == 0:
		return missingField("no request method on this line (the gateway's routes need it)")
	case g.needs&NeedFrontend != 0 && len(req.Frontend) == 0:
		return missingField("no frontend (or listener) on this line (the gateway's routes need it: HAProxy's %f; in JSON lines, a field " + strings.Join(jsonFrontends, ", ") + ")")
	}
	return badLine{}
}

// routeFieldsError is the error of a trace whose format cannot carry the
// fields the router reads.
func routeFieldsError(format string, missing RequestFields, how string) string {
	return fmt.Sprintf("the gateway's routes read each request's %s, which a %s trace does not carry: %s",
		strings.Join(missing.names(), " and "), format, how)
}

// requestReader is a line parser that can read each request's method,
// host and path for a router.
type requestReader interface {
	// readRequests makes the parser fill parsedLine.req with the fields
	// of want it can read, and returns those it cannot.
	readRequests(want RequestFields) (missing RequestFields, how string)
}

// setupRouting prepares the stream's routing when the source has a
// router: the format must carry what the router reads.
func (s *replayStream) setupRouting() error {
	rt := s.r.Router
	if rt == nil {
		return nil
	}
	routes := rt.Routes()
	if len(routes) > MaxRoutes {
		return &ReplayError{Path: s.r.Path, Msg: fmt.Sprintf("%d routes: at most %d can be told apart", len(routes), MaxRoutes)}
	}
	need := rt.Needs()
	rr, ok := s.parser.(requestReader)
	if !ok {
		if _, empty := s.parser.(emptyParser); empty {
			s.routing = &routing{r: rt, needs: need, counts: make([]int64, len(routes))}
			return nil
		}
		return &ReplayError{Path: s.r.Path, Msg: routeFieldsError(s.format, need,
			"replay it as an access log that logs $request (or give its log_format)")}
	}
	if missing, how := rr.readRequests(need); missing != 0 {
		return &ReplayError{Path: s.r.Path, Msg: routeFieldsError(s.format, missing, how)}
	}
	s.routing = &routing{r: rt, needs: need, counts: make([]int64, len(routes))}
	return nil
}

// readRequests: a common or combined log carries the method and path in
// its request line, and no host.
func (p *logParser) readRequests(want RequestFields) (RequestFields, string) {
	p.route = true
	if want&NeedFrontend != 0 {
		return want & (NeedHost | NeedFrontend), "log it in a log_format and give that format (--log-format)"
	}
	if want&NeedHost != 0 {
		return NeedHost, "log the host in a log_format ($host) and give that format (--log-format)"
	}
	return 0, ""
}

// The variables of an nginx log_format a router reads, in order of
// preference: the method, the path, the host.
var (
	templateMethods = []string{"request_method", "request"}
	templatePaths   = []string{"uri", "document_uri", "request_uri", "request"}
	templateHosts   = []string{"host", "http_host", "server_name"}
	// the frontend: HAProxy's %f (%[fe_name]) and %ft, as
	// gateway.haproxyTemplate names them
	templateFrontends = []string{"frontend_name", "frontend_name_transport"}
)

// readRequests: an nginx log_format carries what its variables hold.
func (p *templateParser) readRequests(want RequestFields) (RequestFields, string) {
	find := func(names []string) int {
		for _, n := range names {
			if i := p.t.Index(n); i >= 0 {
				return i
			}
		}
		return -1
	}
	p.method, p.path, p.host = find(templateMethods), find(templatePaths), find(templateHosts)
	p.frontend = -1
	if want&NeedFrontend != 0 {
		p.frontend = find(templateFrontends)
	}
	var missing RequestFields
	var how []string
	if want&NeedMethod != 0 && p.method < 0 {
		missing |= NeedMethod
		how = append(how, "$request_method or $request")
	}
	if want&NeedPath != 0 && p.path < 0 {
		missing |= NeedPath
		how = append(how, "$uri or $request")
	}
	if want&NeedHost != 0 && p.host < 0 {
		missing |= NeedHost
		how = append(how, "$host")
	}
	if want&NeedFrontend != 0 && p.frontend < 0 {
		missing |= NeedFrontend
		how = append(how, "the frontend's name (HAProxy's %f)")
	}
	if missing != 0 {
		return missing, "add " + strings.Join(how, " and ") + " to the log_format (its variables: " + p.t.varList() + ")"
	}
	p.upto = max(p.upto, p.method, p.path, p.host, p.frontend)
	return 0, ""
}

// RequestOfVars reads a request's method, host and path from vals, the
// values of the variables vars of an nginx log_format (a Deriver's), as a
// router reads them from a line of it (readRequests): a gateway's
// condition on the request (an HAProxy track's ACL) reads the same.
func RequestOfVars(vars, vals []string) Request {
	p := &templateParser{t: &LogTemplate{Vars: vars}}
	p.readRequests(NeedMethod | NeedPath | NeedHost)
	p.vals = make([][]byte, len(vals))
	for i, v := range vals {
		p.vals[i] = []byte(v)
	}
	var req Request
	p.request(&req)
	return req
}

// request reads the request fields of a split line.
func (p *templateParser) request(req *Request) {
	if p.method >= 0 {
		v := p.vals[p.method]
		if p.t.Vars[p.method] == "request" {
			readRequestLine(v, req)
			req.Path = nil
		} else if !bytes.Equal(v, dash) {
			req.Method = v
		}
	}
	if p.path >= 0 {
		v := p.vals[p.path]
		switch p.t.Vars[p.path] {
		case "request":
			var r Request
			readRequestLine(v, &r)
			req.Path = r.Path
		case "uri", "document_uri":
			// nginx logs $uri normalised already, but still escaped as
			// the log escapes it
			if !bytes.Equal(v, dash) {
				req.Path = v
			}
		default:
			if !bytes.Equal(v, dash) {
				req.Path = normalPath(v)
			}
		}
	}
	if p.host >= 0 {
		req.Host = normalHost(p.vals[p.host])
	}
	if p.frontend >= 0 {
		v := p.vals[p.frontend]
		if p.t.Vars[p.frontend] == "frontend_name_transport" {
			// %ft: the name, then ~ when the connection is TLS
			// (src/log.c, LOG_FMT_FRONTEND_XPRT)
			v = bytes.TrimSuffix(v, []byte("~"))
		}
		if !bytes.Equal(v, dash) {
			req.Frontend = v
		}
	}
}

// Carries says which of a Request's fields the lines of a log written with
// t carry (the variables readRequests reads).
func (t *LogTemplate) Carries() RequestFields {
	return carried(func(n string) bool { return t.Index(n) >= 0 },
		templateMethods, templatePaths, templateHosts, templateFrontends)
}

// carried is the fields of a Request for which has holds of one of the
// names that may hold it: its method's, path's, host's, frontend's.
func carried(has func(name string) bool, methods, paths, hosts, frontends []string) RequestFields {
	var f RequestFields
	for i, names := range [][]string{methods, paths, hosts, frontends} {
		if slices.ContainsFunc(names, has) {
			f |= []RequestFields{NeedMethod, NeedPath, NeedHost, NeedFrontend}[i]
		}
	}
	return f
}

// Names lists the fields of f: method, host, path.
func (f RequestFields) Names() []string { return f.names() }

// The fields of a JSON line a router reads, in order of preference:
// Traefik's access log's (RequestMethod, RequestPath, RequestHost), then
// common names.
var (
	jsonMethods = []string{"RequestMethod", "method", "request_method"}
	jsonPaths   = []string{"RequestPath", "path", "uri", "request_uri", "url"}
	jsonHosts   = []string{"RequestHost", "host", "authority", "request_host"}
	// the frontend or listener: a field named so, or envoy's
	// %DOWNSTREAM_LOCAL_ADDRESS% under its own name
	jsonFrontends = []string{"frontend", "frontend_name", "listener", "listener_name", "downstream_local_address"}
)

// CarriesFields says which of a Request's fields a JSON line whose fields
// have names carries (the fields its request reads): a caller can tell
// from a trace's first line (Replay.Recognise) what its lines say.
func CarriesFields(names []string) RequestFields {
	return carried(func(n string) bool { return slices.Contains(names, n) },
		jsonMethods, jsonPaths, jsonHosts, jsonFrontends)
}

// readRequests: a JSON line carries what its fields hold, line by line.
func (p *jsonParser) readRequests(RequestFields) (RequestFields, string) {
	p.route = true
	return 0, ""
}

// request reads the request fields of a JSON line.
func (p *jsonParser) request(req *Request) {
	first := func(names []string) []byte {
		for _, n := range names {
			if text, scalar, found, _ := p.value(n); found && scalar {
				return text
			}
		}
		return nil
	}
	req.Method = first(jsonMethods)
	if path := first(jsonPaths); path != nil {
		req.Path = normalPath(path)
	}
	req.Host = normalHost(first(jsonHosts))
	req.Frontend = first(jsonFrontends)
}
