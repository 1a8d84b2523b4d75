package traffic

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// prefixRouter routes by path prefix, and when host is set by host too.
type prefixRouter struct {
	prefixes []string
	host     string
	needs    RequestFields
	seen     []Request
}

func (r *prefixRouter) Routes() []Route {
	var out []Route
	for _, p := range r.prefixes {
		out = append(out, Route{Name: p, Limited: true})
	}
	return out
}

func (r *prefixRouter) Route(req *Request) int {
	r.seen = append(r.seen, Request{Method: bytes.Clone(req.Method), Host: bytes.Clone(req.Host), Path: bytes.Clone(req.Path)})
	if r.host != "" && string(req.Host) != r.host {
		return -1
	}
	for i, p := range r.prefixes {
		if bytes.HasPrefix(req.Path, []byte(p)) {
			return i
		}
	}
	return -1
}

func (r *prefixRouter) Needs() RequestFields { return r.needs }

func routes(as []Arrival) []uint16 {
	var out []uint16
	for _, a := range as {
		out = append(out, a.Route)
	}
	return out
}

func TestReplayRoutesLog(t *testing.T) {
	path := writeTrace(t, "access.log", `1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /a/x?q=1 HTTP/1.1" 200 5
1.2.3.4 - - [17/May/2015:10:05:04 +0000] "POST /b//c/../d HTTP/1.1" 200 5
1.2.3.4 - - [17/May/2015:10:05:05 +0000] "GET /%61/y HTTP/1.1" 200 5
1.2.3.4 - - [17/May/2015:10:05:06 +0000] "GET /c HTTP/1.1" 404 5
1.2.3.4 - - [17/May/2015:10:05:07 +0000] "-" 400 0
`)
	rt := &prefixRouter{prefixes: []string{"/a/", "/b/"}, needs: NeedPath | NeedMethod}
	r := &Replay{Path: path, Router: rt}
	got, _ := openOne(t, r, 0)
	require.Equal(t, []uint16{1, 2, 1, 0}, routes(got))
	require.Equal(t, "POST", string(rt.seen[1].Method))
	require.Equal(t, "/b/d", string(rt.seen[1].Path))
	require.Equal(t, "/a/y", string(rt.seen[2].Path))
	st := r.Stats()
	require.Equal(t, []RouteCount{{Route{Name: "/a/", Limited: true}, 2}, {Route{Name: "/b/", Limited: true}, 1}}, st.Routes)
	require.Equal(t, int64(1), st.Unrouted)
	require.Equal(t, int64(1), st.ByReason["missing field"], "a line without a path")

	// a combined log has no host
	_, err := (&Replay{Path: path, Router: &prefixRouter{needs: NeedHost}}).Open(NewKeys(), 0, 0)
	require.ErrorContains(t, err, "the gateway's routes read each request's host, which a common trace does not carry")
}

func TestReplayRoutesTemplate(t *testing.T) {
	path := writeTrace(t, "access.log", "1700000000.000 API.example.com:443 /a/1\n1700000000.100 other /a/1\n")
	rt := &prefixRouter{prefixes: []string{"/a/"}, host: "api.example.com", needs: NeedPath | NeedHost}
	got, _ := openOne(t, &Replay{Path: path, LogFormat: "$msec $host $uri", Router: rt}, 0)
	require.Equal(t, []uint16{1, 0}, routes(got))
	_, err := (&Replay{Path: path, LogFormat: "$msec $host", Router: rt}).Open(NewKeys(), 0, 0)
	require.ErrorContains(t, err, "add $uri or $request to the log_format")
}

func TestReplayRoutesJSON(t *testing.T) {
	path := writeTrace(t, "access.log", `{"time": 1700000000, "RequestMethod": "GET", "RequestHost": "api.example.com", "RequestPath": "/a/1?x"}
{"time": 1700000001, "RequestHost": "api.example.com", "RequestPath": "/b"}
`)
	rt := &prefixRouter{prefixes: []string{"/a/"}, host: "api.example.com", needs: NeedPath | NeedHost}
	got, _ := openOne(t, &Replay{Path: path, Router: rt}, 0)
	require.Equal(t, []uint16{1, 0}, routes(got))
	require.Equal(t, "GET", string(rt.seen[0].Method))
}

func TestNormalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/":                   "/",
		"/a/b":                "/a/b",
		"/a//b/./c/":          "/a/b/c/",
		"/a/../../b":          "/b",
		"/a/%2e%2e/b":         "/b",
		"/a/b/..":             "/a/",
		"http://h:80/x/y?z=1": "/x/y",
		"/x#frag":             "/x",
	} {
		require.Equal(t, want, string(normalPath([]byte(in))), in)
	}
}
