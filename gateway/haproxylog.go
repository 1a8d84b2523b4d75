package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HAProxyLogFormat is an HAProxy log-format, read for what a replay needs
// from each line of a log written with it (with `log ... format raw`, so
// that a line is the log-format's output and nothing else): the time of
// the request, its key and its HTTP status.
//
// Items are what HAProxy's parse_logformat_string (src/log.c) reads:
// literal text, %NAME variables (%ST, %Ts, %ms, %ci...), %[EXPR] sample
// expressions, each optionally preceded by {+Q}-style flags. Two items
// that are not text must be separated by text, or a line could not be
// split.
//
// The time, in order of preference: %[date(0,us)] (µs since the epoch),
// %[date(0,ms)] (ms), %Ts with %ms (the accept date's seconds and its ms
// part), %[date] or %Ts alone (seconds). The status: %ST. The key, as the
// limit's track-sc names it: %ci or %[src] for src; for a header,
// %[capture.req.hdr(N)] where capture N is that header (http-request
// capture req.hdr(NAME) len L, or capture request header NAME len L, in
// their order in the section: HAProxy cannot read a request header when
// it logs, only what was captured).
type HAProxyLogFormat struct {
	items []lfItem
	// the indexes of the items that hold each field, -1 when none
	time, timeSec, timeMs, key, status int
	timeUnit                           time.Duration // of items[time]
}

type lfItem struct {
	lit   string // literal text, when name is ""
	name  string // %NAME's NAME, or "[EXPR]" for %[EXPR]
	flags string // the {FLAGS} before it, without braces ("+Q")
}

// HAProxyLogEntry is one log line's request: its time (ns since the epoch,
// at the log-format's resolution), key and HTTP status, and every item's
// text by its name as the format writes it (ST, [date(0,ms)], ...).
type HAProxyLogEntry struct {
	Time   time.Duration
	Key    string
	Status int
	Fields map[string]string
}

// Denied reports whether HAProxy denied e by l's rule: its status is the
// rule's deny_status.
func (l *HAProxyLimit) Denied(e HAProxyLogEntry) bool { return e.Status == l.Status }

// LogFormat reads the log-format of l's section for l's key.
func (l *HAProxyLimit) LogFormat() (*HAProxyLogFormat, error) {
	if l.Log == "" {
		return nil, fmt.Errorf("%s %s has no log-format", l.Kind, l.Name)
	}
	return ParseHAProxyLogFormat(l.Log, l.Track.Key, l.Captures)
}

// ParseHAProxyLogFormat reads format, the argument of a log-format line,
// for the limit key key (HAProxyLimit.Track.Key), captures being the
// section's captured request headers in order (lower case). It is an
// error when the format carries no time, no status or not the key.
func ParseHAProxyLogFormat(format string, key Key, captures []string) (*HAProxyLogFormat, error) {
	f := &HAProxyLogFormat{time: -1, timeSec: -1, timeMs: -1, key: -1, status: -1}
	items, err := splitHAProxyLogFormat(format)
	if err != nil {
		return nil, err
	}
	f.items = items
	for i, it := range f.items {
		switch n := strings.ReplaceAll(it.name, " ", ""); {
		case n == "[date(0,us)]" || n == "[date(,us)]":
			f.time, f.timeUnit = i, time.Microsecond
		case (n == "[date(0,ms)]" || n == "[date(,ms)]") && (f.time < 0 || f.timeUnit > time.Millisecond):
			f.time, f.timeUnit = i, time.Millisecond
		case (n == "[date]" || n == "[date(0)]") && f.time < 0:
			f.time, f.timeUnit = i, time.Second
		case n == "Ts":
			f.timeSec = i
		case n == "ms":
			f.timeMs = i
		case n == "ST":
			f.status = i
		case key.Kind == KeyAddr && (n == "ci" || n == "[src]"):
			f.key = i
		case key.Kind == KeyHeader && isCapture(n, key.Name, captures):
			f.key = i
		}
	}
	switch {
	case f.time < 0 && f.timeSec < 0:
		return nil, fmt.Errorf("log-format %q: no time (want %%[date(0,ms)], or %%Ts with %%ms)", format)
	case f.status < 0:
		return nil, fmt.Errorf("log-format %q: no status (want %%ST)", format)
	case f.key < 0:
		want := "%ci or %[src]"
		if key.Kind == KeyHeader {
			want = fmt.Sprintf("%%[capture.req.hdr(N)] with capture N http-request capture req.hdr(%s) len L", key.Name)
		} else if key.Kind != KeyAddr {
			want = "a key replay can read (the limit counts by " + key.String() + ")"
		}
		return nil, fmt.Errorf("log-format %q: no key (want %s)", format, want)
	}
	return f, nil
}

// splitHAProxyLogFormat cuts a log-format into its items as HAProxy's
// parse_logformat_string (src/log.c) reads them: literal text (a
// backslash escapes the next character, %% is a %), %NAME variables and
// %[EXPR] sample expressions, each optionally preceded by {FLAGS}. Two
// items that are not text with no text between are an error: a line
// could not be split there.
func splitHAProxyLogFormat(format string) ([]lfItem, error) {
	var items []lfItem
	var lit strings.Builder
	flushLit := func() {
		if lit.Len() > 0 {
			items = append(items, lfItem{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(format); {
		c := format[i]
		if c == '\\' && i+1 < len(format) {
			lit.WriteByte(format[i+1])
			i += 2
			continue
		}
		if c != '%' {
			lit.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			lit.WriteByte('%')
			i += 2
			continue
		}
		i++
		flags := ""
		if i < len(format) && format[i] == '{' { // flags such as {+Q}
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("log-format %q: unclosed { at %d", format, i+1)
			}
			flags = format[i+1 : i+end]
			i += end + 1
		}
		var name string
		switch {
		case i < len(format) && format[i] == '[':
			depth, j := 0, i
			for ; j < len(format); j++ {
				if format[j] == '[' {
					depth++
				} else if format[j] == ']' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if j == len(format) {
				return nil, fmt.Errorf("log-format %q: unclosed %%[ at %d", format, i+1)
			}
			name = format[i : j+1]
			i = j + 1
		default:
			j := i
			for j < len(format) && (format[j] >= 'a' && format[j] <= 'z' || format[j] >= 'A' && format[j] <= 'Z') {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("log-format %q: a %% without a variable at %d", format, i)
			}
			name = format[i:j]
			i = j
		}
		flushLit()
		if n := len(items); n > 0 && items[n-1].name != "" {
			return nil, fmt.Errorf("log-format %q: %%%s follows %%%s with no text between: a line could not be split", format, name, items[n-1].name)
		}
		items = append(items, lfItem{name: name, flags: flags})
	}
	flushLit()
	return items, nil
}

// captureOf is the header that item logs when it is
// %[capture.req.hdr(N)] with capture N a header, else "".
func captureOf(item string, captures []string) string {
	const p = "[capture.req.hdr("
	if !strings.HasPrefix(item, p) || !strings.HasSuffix(item, ")]") {
		return ""
	}
	n, err := strconv.Atoi(item[len(p) : len(item)-2])
	if err != nil || n < 0 || n >= len(captures) {
		return ""
	}
	return captures[n]
}

// isCapture reports whether item is %[capture.req.hdr(N)] with capture N
// the header.
func isCapture(item, header string, captures []string) bool {
	h := captureOf(item, captures)
	return h != "" && h == header
}

// Parse reads one log line written with f.
func (f *HAProxyLogFormat) Parse(line string) (HAProxyLogEntry, error) {
	e := HAProxyLogEntry{Fields: make(map[string]string, len(f.items))}
	vals := make([]string, len(f.items))
	rest := line
	for i, it := range f.items {
		if it.name == "" {
			if !strings.HasPrefix(rest, it.lit) {
				return e, fmt.Errorf("want %q at column %d", it.lit, len(line)-len(rest)+1)
			}
			rest = rest[len(it.lit):]
			continue
		}
		end := len(rest)
		if i+1 < len(f.items) {
			end = strings.Index(rest, f.items[i+1].lit)
			if end < 0 {
				return e, fmt.Errorf("want %q after column %d", f.items[i+1].lit, len(line)-len(rest)+1)
			}
		}
		vals[i] = rest[:end]
		e.Fields[it.name] = rest[:end]
		rest = rest[end:]
	}
	if rest != "" {
		return e, fmt.Errorf("unexpected text at column %d: %q", len(line)-len(rest)+1, rest)
	}
	num := func(i int, what string) (int64, error) {
		n, err := strconv.ParseInt(vals[i], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: %q is not a whole number", what, vals[i])
		}
		return n, nil
	}
	if f.time >= 0 {
		n, err := num(f.time, "time")
		if err != nil {
			return e, err
		}
		if n > int64(1<<62)/int64(f.timeUnit) {
			return e, fmt.Errorf("time: %d is out of range", n)
		}
		e.Time = time.Duration(n) * f.timeUnit
	} else {
		s, err := num(f.timeSec, "time (%Ts)")
		if err != nil {
			return e, err
		}
		if s > int64(1<<62)/int64(time.Second) {
			return e, fmt.Errorf("time: %d is out of range", s)
		}
		e.Time = time.Duration(s) * time.Second
		if f.timeMs >= 0 {
			ms, err := num(f.timeMs, "time (%ms)")
			if err != nil || ms > 999 {
				return e, fmt.Errorf("time (%%ms): %q is not a ms part", vals[f.timeMs])
			}
			e.Time += time.Duration(ms) * time.Millisecond
		}
	}
	st, err := num(f.status, "status (%ST)")
	if err != nil {
		return e, err
	}
	e.Status = int(st)
	e.Key = vals[f.key]
	return e, nil
}
