package gateway

import (
	"fmt"
	"slices"
	"strings"
)

// AccessLogs returns the log-format of each limit scope o picks, each
// once (Logger): HAProxy logs to syslog or a stream, not a file, so the
// paths are "". Each format is translated into an nginx log_format text
// that the replay reads (see haproxyTemplate); a limit whose section has
// no log-format, or whose log-format lacks the time, status or key the
// replay needs, is an error at the section or the log-format line.
func (h *HAProxy) AccessLogs(o Options) ([]AccessLog, error) {
	lims, err := h.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var out []AccessLog
	for _, l := range lims {
		if l.Log == "" {
			return nil, &Error{File: l.Where.File, Line: l.Where.Line, Col: l.Where.Col,
				Msg: fmt.Sprintf("%s %s has no log-format: replay reads a log written with one (with `log ... format raw`); add, for example, log-format \"%%[date(0,ms)] %s %%ST\"", l.Kind, l.Name, haproxyKeyItem(l))}
		}
		f, err := haproxyTemplate(l)
		if err != nil {
			return nil, err
		}
		// sections that share a defaults' log-format, and log their keys
		// alike, write one format
		if i := slices.IndexFunc(out, func(a AccessLog) bool {
			return a.Format.Text == f.Text && a.Format.TimeField == f.TimeField && a.Format.TimeUnit == f.TimeUnit
		}); i >= 0 {
			continue
		}
		out = append(out, AccessLog{Format: f, Where: l.LogWhere})
	}
	return out, nil
}

// RejectStatuses returns the deny_status of the limits scope o picks,
// each once, in order (Rejecter).
func (h *HAProxy) RejectStatuses(o Options) ([]int, error) {
	lims, err := h.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, l := range lims {
		if !slices.Contains(out, l.Status) {
			out = append(out, l.Status)
		}
	}
	return out, nil
}

var (
	_ Logger   = (*HAProxy)(nil)
	_ Rejecter = (*HAProxy)(nil)
)

// haproxyKeyItem is the log-format item that logs l's key, for messages.
func haproxyKeyItem(l *HAProxyLimit) string { return haproxyItemOf(l, l.Track.Key) }

// haproxyItemOf is the log-format item that logs key k of l's section.
func haproxyItemOf(l *HAProxyLimit, k Key) string {
	switch k.Kind {
	case KeyAddr:
		return "%ci"
	case KeyHeader:
		if n := slices.Index(l.Captures, k.Name); n >= 0 {
			return fmt.Sprintf("%%[capture.req.hdr(%d)]", n)
		}
		return "%[capture.req.hdr(N)]"
	}
	return "%[" + k.Name + "]"
}

// haproxyTemplate translates l's log-format (HAProxy's syntax, read by
// splitHAProxyLogFormat) into an nginx log_format text with the same
// literal text, each item becoming a variable that the replay reads:
//
//   - the time: %[date(0,us)], %[date(0,ms)] or %[date] (the date when
//     the line is logged, sample fetch date in src/sample.c) become
//     $date_us, $date_ms or $date with the replay's time-unit us, ms or s;
//     %Ts.%ms (the accept date's seconds, a dot, its milliseconds, which
//     HAProxy's sess_build_logline (src/log.c) writes with three digits)
//     becomes $msec, nginx's seconds.milliseconds; %Ts alone $Ts in s.
//     In that order of preference, as HAProxyLogFormat reads them.
//   - %ST, the HTTP status, becomes $status (what --check-field status
//     reads).
//   - the key: %ci or %[src] becomes $remote_addr for a limit on src; for
//     a header, %[capture.req.hdr(N)] with capture N that header becomes
//     $http_NAME (HAProxy cannot read a request header when it logs,
//     only what was captured).
//   - any other item becomes a variable the replay does not read
//     ($haproxy_NAME, or $haproxy_N for the N-th expression).
//
// A {+Q} flag quotes the value, as HAProxy writes it: the quotes become
// literal text. A log-format without a time, the status or the key is an
// error at the log-format line that says what to add; so is a literal $
// (the translation would read it as a variable).
func haproxyTemplate(l *HAProxyLimit) (*LogFormat, error) {
	at := l.LogWhere
	fail := func(format string, args ...any) error {
		return &Error{File: at.File, Line: at.Line, Col: at.Col, Msg: "log-format: " + fmt.Sprintf(format, args...)}
	}
	items, err := splitHAProxyLogFormat(l.Log)
	if err != nil {
		return nil, fail("%s", strings.TrimPrefix(err.Error(), "log-format "))
	}
	f := &LogFormat{Name: l.Name, Escape: "none", Where: l.LogWhere,
		Label: fmt.Sprintf("the log-format of %s %s (%s)", l.Kind, l.Name, l.LogWhere)}
	// every key the section's counters track (an all-of row reads each
	// from its own field)
	var keys []Key
	for _, d := range l.denies() {
		keys = append(keys, d.Track.Key)
	}
	has := make([]bool, len(keys))
	logs := func(n string) string {
		v := ""
		for i, k := range keys {
			switch {
			case k.Kind == KeyAddr && (n == "ci" || n == "[src]"):
				v, has[i] = "remote_addr", true
			case k.Kind == KeyHeader && isCapture(n, k.Name, l.Captures):
				v, has[i] = "http_"+strings.ReplaceAll(k.Name, "-", "_"), true
			}
		}
		return v
	}
	// the time item, by preference
	timeRank := 0
	var b strings.Builder
	hasStatus := false
	exprs := 0
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.name == "" {
			if strings.Contains(it.lit, "$") {
				return nil, fail("a $ in its text (%q): replay reads the log through an nginx log_format, where $ starts a variable; leave it out", it.lit)
			}
			b.WriteString(it.lit)
			continue
		}
		quoted := strings.Contains(it.flags, "+Q")
		n := strings.ReplaceAll(it.name, " ", "")
		v := ""
		rank := 0
		switch {
		case n == "[date(0,us)]" || n == "[date(,us)]":
			v, rank = "date_us", 4
		case n == "[date(0,ms)]" || n == "[date(,ms)]":
			v, rank = "date_ms", 3
		case n == "Ts" && !quoted && i+2 < len(items) && items[i+1].lit == "." && items[i+2].name == "ms" && !strings.Contains(items[i+2].flags, "+Q"):
			v, rank = "msec", 2
			i += 2 // %ms is read with it
		case n == "Ts":
			v, rank = "Ts", 1
		case n == "[date]" || n == "[date(0)]":
			v, rank = "date", 1
		case n == "ST":
			v, hasStatus = "status", true
		case logs(n) != "":
			v = logs(n)
		case n == "ci" || n == "[src]":
			// the client's address, for a limit of another
			// section that counts by it: sections that share a
			// log-format then write one format
			v = "remote_addr"
		case n == "f" || n == "[fe_name]":
			// the frontend's name (src/log.c, LOG_FMT_FRONTEND),
			// which routes the requests of several sections
			v = "frontend_name"
		case n == "ft":
			v = "frontend_name_transport" // the name, ~ after it for TLS
		case n == "r" || n == "HM" || n == "HP" || n == "HU":
			// the request line, method, path and URI (src/log.c), for
			// the routes of a track's condition
			v = map[string]string{"r": "request", "HM": "request_method", "HP": "uri", "HU": "request_uri"}[n]
		case isCapture(n, "host", l.Captures):
			v = "host"
		case captureOf(n, l.Captures) != "":
			// a captured header, which a limit of another section
			// may count by
			v = "http_" + strings.ReplaceAll(captureOf(n, l.Captures), "-", "_")
		case strings.HasPrefix(n, "["):
			exprs++
			v = fmt.Sprintf("haproxy_%d", exprs)
		default:
			v = "haproxy_" + n
		}
		if rank > timeRank {
			timeRank = rank
			switch v {
			case "date_us":
				f.TimeField, f.TimeUnit = v, "us"
			case "date_ms":
				f.TimeField, f.TimeUnit = v, "ms"
			case "Ts", "date":
				f.TimeField, f.TimeUnit = v, "s"
			case "msec":
				f.TimeField, f.TimeUnit = "", ""
			}
		}
		if quoted {
			b.WriteString(`"${` + v + `}"`)
		} else {
			b.WriteString("${" + v + "}")
		}
	}
	switch {
	case timeRank == 0:
		return nil, fail("no time: replay needs the time of each request: add %%[date(0,ms)] (or %%Ts.%%ms) to it")
	case !hasStatus:
		return nil, fail("no status: replay --check-field status compares it: add %%ST to it")
	}
	for i, k := range keys {
		if has[i] {
			continue
		}
		switch k.Kind {
		case KeyAddr, KeyHeader:
			what := haproxyItemOf(l, k)
			if k.Kind == KeyHeader && !slices.Contains(l.Captures, k.Name) {
				what = fmt.Sprintf("%%[capture.req.hdr(N)], N being a capture of the header (http-request capture req.hdr(%s) len 64 in %s %s)", k.Name, l.Kind, l.Name)
			}
			return nil, fail("the limit counts by %s (%s) and the log-format does not log it: add %s to it", k, k.Where, what)
		case KeyGlobal:
		default:
			return nil, fail("the limit counts by %s (%s), which replay cannot take from a log: name the log field that holds it with --key-field", k, k.Where)
		}
	}
	f.Text = b.String()
	return f, nil
}
