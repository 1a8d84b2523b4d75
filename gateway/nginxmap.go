package gateway

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// This file reads nginx's map blocks and evaluates them as
// ngx_http_map_module does (nginx.org/en/docs/http/ngx_http_map_module.html,
// src/http/modules/ngx_http_map_module.c and ngx_http_map_find in
// src/http/ngx_http_variables.c), so that a limit_req_zone keyed by a
// map's variable counts each request under the value nginx would give it.

// NginxMap is one map block: map SOURCE $VARIABLE { ... }.
type NginxMap struct {
	// Var is the variable the map sets, without its $.
	Var string
	// Source is the source value as written ($http_x_api_key).
	Source string
	// Hostnames is set by the hostnames parameter: source values may be
	// host names with a prefix or suffix mask.
	Hostnames bool
	Where     Pos

	source  nginxValue
	deflt   nginxValue
	exact   map[string]nginxValue // lower case: strings match ignoring case
	heads   []mapMask             // *.example.com and .example.com
	tails   []mapMask             // mail.*
	regexes []mapRegex            // in the order of the block
	n       *Nginx                // the config, whose other maps a value may name
}

// mapMask is a wildcard source value of a map with hostnames: domain is
// the value without its mask ("example.com" for "*.example.com", "mail"
// for "mail.*"), dot is set for the special form ".example.com", which
// also matches example.com itself.
type mapMask struct {
	domain string
	dot    bool
	value  nginxValue
}

type mapRegex struct {
	re    *regexp.Regexp
	value nginxValue
}

// nginxValue is a complex value (ngx_http_compile_complex_value): text
// and variables. A part is text, a variable (name), or a capture of the
// last regex matched ($0..$9, capture >= 0).
type nginxValue []valuePart

type valuePart struct {
	text    string
	name    string
	capture int // -1: not a capture
}

// parseValue splits text into its text and variables as ngx_http_script
// reads them: $name (letters, digits, _), ${name}, and $N one digit, a
// capture.
func parseValue(s string) (nginxValue, error) {
	var v nginxValue
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			v = append(v, valuePart{text: lit.String(), capture: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '$' {
			lit.WriteByte(s[i])
			i++
			continue
		}
		i++
		if i >= len(s) {
			return nil, fmt.Errorf("%q: a $ without a variable name", s)
		}
		if c := s[i]; c >= '0' && c <= '9' {
			flush()
			v = append(v, valuePart{capture: int(c - '0')})
			i++
			continue
		}
		braced := s[i] == '{'
		if braced {
			i++
		}
		start := i
		for i < len(s) && isNginxVarChar(s[i]) {
			i++
		}
		name := s[start:i]
		if braced {
			if i >= len(s) || s[i] != '}' {
				return nil, fmt.Errorf("%q: the variable name has no closing bracket", s)
			}
			i++
		}
		if name == "" {
			return nil, fmt.Errorf("%q: a $ without a variable name", s)
		}
		flush()
		v = append(v, valuePart{name: name, capture: -1})
	}
	flush()
	return v, nil
}

func isNginxVarChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// vars are the variables v names, captures left out.
func (v nginxValue) vars() []string {
	var out []string
	for _, p := range v {
		if p.name != "" {
			out = append(out, p.name)
		}
	}
	return out
}

// eval is v's text with each variable's value (lookup) and each capture's
// (the submatch indexes m of subject; none when m is nil: empty, as
// nginx gives a capture the last match does not have).
func (v nginxValue) eval(lookup func(string) string, subject string, m []int) string {
	if len(v) == 1 && v[0].capture < 0 && v[0].name == "" {
		return v[0].text
	}
	var b strings.Builder
	for _, p := range v {
		switch {
		case p.capture >= 0:
			if 2*p.capture+1 < len(m) && m[2*p.capture] >= 0 {
				b.WriteString(subject[m[2*p.capture]:m[2*p.capture+1]])
			}
		case p.name != "":
			b.WriteString(lookup(p.name))
		default:
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// readMap reads map SOURCE $VARIABLE { ... } as ngx_http_map_block and
// ngx_http_map do: each entry a source value and the result, default
// VALUE (empty when none), hostnames, volatile (which changes no value);
// a leading \ escapes a source value that is a parameter's name; ~ starts
// a regular expression, ~* one that ignores case. include is refused.
func (r *nginxReader) readMap(d *directive) (*NginxMap, error) {
	if len(d.args) != 2 || !d.hasBlock {
		return nil, r.errAt(d, "want map SOURCE $VARIABLE { ... } (found %d arguments)", len(d.args))
	}
	name, ok := strings.CutPrefix(d.args[1], "$")
	if !ok || name == "" || strings.ContainsFunc(name, func(c rune) bool { return c > 127 || !isNginxVarChar(byte(c)) }) {
		return nil, r.errAt(d, "invalid variable name %q (want $NAME)", d.args[1])
	}
	src, err := parseValue(d.args[0])
	if err != nil {
		return nil, r.errAt(d, "%v", err)
	}
	m := &NginxMap{Var: name, Source: d.args[0], Where: r.pos(d), source: src, exact: map[string]nginxValue{}, n: r.n}
	for _, e := range d.block {
		if e.name == "hostnames" && len(e.args) == 0 {
			m.Hostnames = true
		}
	}
	var hasDefault bool
	for _, e := range d.block {
		switch {
		case e.hasBlock:
			return nil, r.errAt(e, "a map entry has no block")
		case (e.name == "hostnames" || e.name == "volatile") && len(e.args) == 0:
			continue // volatile: the value is not cached; it is the same
		case e.name == "include" && len(e.args) == 1:
			return nil, r.errAt(e, "include is not supported: paste the included file's entries in its place")
		case len(e.args) != 1:
			return nil, r.errAt(e, "invalid number of the map parameters (want SOURCE VALUE;)")
		}
		value, err := parseValue(e.args[0])
		if err != nil {
			return nil, r.errAt(e, "%v", err)
		}
		key := e.name
		if key == "default" {
			if hasDefault {
				return nil, r.errAt(e, "duplicate default map parameter")
			}
			m.deflt, hasDefault = value, true
			continue
		}
		if strings.HasPrefix(key, "~") {
			expr, fold := key[1:], false
			if strings.HasPrefix(expr, "*") {
				expr, fold = expr[1:], true
			}
			re, err := nginxRegexp(r.n.File, e, expr, fold)
			if err != nil {
				return nil, err
			}
			m.regexes = append(m.regexes, mapRegex{re: re, value: value})
			continue
		}
		key = strings.TrimPrefix(key, `\`)
		low := strings.ToLower(key)
		if m.Hostnames {
			var mask mapMask
			switch {
			case strings.HasPrefix(low, "*."):
				mask = mapMask{domain: low[2:]}
			case strings.HasPrefix(low, ".") && len(low) > 1:
				mask = mapMask{domain: low[1:], dot: true}
			case strings.HasSuffix(low, ".*"):
				mask = mapMask{domain: low[:len(low)-2]}
			}
			if mask.domain != "" {
				mask.value = value
				list := &m.heads
				if strings.HasSuffix(low, ".*") {
					list = &m.tails
				}
				if slices.ContainsFunc(*list, func(o mapMask) bool { return o.domain == mask.domain }) {
					return nil, r.errAt(e, "conflicting parameter %q", key)
				}
				*list = append(*list, mask)
				continue
			}
			if strings.Contains(low, "*") {
				return nil, r.errAt(e, "invalid hostname or wildcard %q (want *.example.com, .example.com or mail.*)", key)
			}
		}
		if _, dup := m.exact[low]; dup {
			return nil, r.errAt(e, "conflicting parameter %q (a map matches strings ignoring case)", key)
		}
		m.exact[low] = value
	}
	return m, nil
}

// collectMaps reads every map block (nginx allows map in http only).
func (r *nginxReader) collectMaps(ds []*directive) error {
	for _, d := range ds {
		if d.name == "map" {
			m, err := r.readMap(d)
			if err != nil {
				return err
			}
			if prev := r.n.mapOf(m.Var); prev != nil {
				return r.errAt(d, "the variable $%s is mapped twice (also at %s)", m.Var, prev.Where)
			}
			r.n.Maps = append(r.n.Maps, m)
			continue
		}
		if d.hasBlock {
			if err := r.collectMaps(d.block); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapOf is the map that sets the variable name (without $), nil if none.
func (n *Nginx) mapOf(name string) *NginxMap {
	for _, m := range n.Maps {
		if m.Var == name {
			return m
		}
	}
	return nil
}

// zoneMap is the map whose variable is the whole of z's key, nil if none.
func (n *Nginx) zoneMap(z *NginxZone) *NginxMap {
	k := z.Key
	if strings.HasPrefix(k, "${") && strings.HasSuffix(k, "}") {
		k = "$" + k[2:len(k)-1]
	}
	name, ok := strings.CutPrefix(k, "$")
	if !ok {
		return nil
	}
	return n.mapOf(name)
}

// Eval is the map's value for a request whose variables lookup gives
// ("" for one the request lacks), in ngx_http_map_find's order: a string
// equal to the source value ignoring case, then with hostnames the
// longest prefix mask and the longest suffix mask, then the first regular
// expression that matches (its captures are $1..$9 in the value, its
// named captures variables), else the default ("" when none). With
// hostnames a trailing dot of the source value is dropped.
func (m *NginxMap) Eval(lookup func(string) string) string {
	src := m.source.eval(lookup, "", nil)
	if m.Hostnames && strings.HasSuffix(src, ".") {
		src = src[:len(src)-1]
	}
	low := strings.ToLower(src)
	if v, ok := m.exact[low]; ok {
		return v.eval(lookup, "", nil)
	}
	if m.Hostnames {
		best := -1
		for i, h := range m.heads {
			match := strings.HasSuffix(low, "."+h.domain) || h.dot && low == h.domain
			if match && (best < 0 || len(h.domain) > len(m.heads[best].domain)) {
				best = i
			}
		}
		if best >= 0 {
			return m.heads[best].value.eval(lookup, "", nil)
		}
		for i, t := range m.tails {
			match := strings.HasPrefix(low, t.domain+".") && len(low) > len(t.domain)+1
			if match && (best < 0 || len(t.domain) > len(m.tails[best].domain)) {
				best = i
			}
		}
		if best >= 0 {
			return m.tails[best].value.eval(lookup, "", nil)
		}
	}
	for _, x := range m.regexes {
		sub := x.re.FindStringSubmatchIndex(src)
		if sub == nil {
			continue
		}
		named := func(name string) string {
			if i := x.re.SubexpIndex(name); i > 0 {
				if sub[2*i] < 0 {
					return ""
				}
				return src[sub[2*i]:sub[2*i+1]]
			}
			return lookup(name)
		}
		return x.value.eval(named, src, sub)
	}
	return m.deflt.eval(lookup, "", nil)
}

// vars are the variables the map reads of a request: its source's and
// those its values name (captures and a regex's named captures left
// out), each once, in the order of the block.
func (m *NginxMap) vars() []string {
	out := m.source.vars()
	add := func(v nginxValue, re *regexp.Regexp) {
		for _, name := range v.vars() {
			if re != nil && re.SubexpIndex(name) > 0 {
				continue
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	var values []nginxValue
	for _, v := range m.exact {
		values = append(values, v)
	}
	// the exact map has no order: its variables are sorted, for the
	// same messages from run to run
	var exact []string
	for _, v := range values {
		exact = append(exact, v.vars()...)
	}
	slices.Sort(exact)
	for _, name := range exact {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, h := range m.heads {
		add(h.value, nil)
	}
	for _, t := range m.tails {
		add(t.value, nil)
	}
	for _, x := range m.regexes {
		add(x.value, x.re)
	}
	add(m.deflt, nil)
	return out
}

// nginxAliases are the variables a log may hold for one a map reads: the
// client address in text for the binary one, which counts alike.
// The first is the one to log.
var nginxAliases = map[string][]string{
	"binary_remote_addr": {"remote_addr", "binary_remote_addr"},
	"remote_addr":        {"remote_addr", "binary_remote_addr"},
}

// mapDeriver evaluates a map on the variables of a log line (a
// traffic.Deriver): vars are the log_format's variables it reads, at the
// index of the name the map reads by.
type mapDeriver struct {
	m    *NginxMap
	vars []string
	at   map[string]int
}

func (d *mapDeriver) Vars() []string { return d.vars }

func (d *mapDeriver) Derive(vals []string) string {
	var lookup func(depth int) func(string) string
	lookup = func(depth int) func(string) string {
		return func(name string) string {
			if m := d.m.n.mapOf(name); m != nil && depth < len(d.m.n.Maps) {
				return m.Eval(lookup(depth + 1))
			}
			if i, ok := d.at[name]; ok && i < len(vals) {
				return vals[i]
			}
			return ""
		}
	}
	return d.m.Eval(lookup(0))
}

// mapDeriverOf is the Deriver of map m for a log written with tmpl, or
// the first variable the map reads (or a map it names reads) that tmpl
// does not log, and the variable to log for it.
func mapDeriverOf(m *NginxMap, tmpl *traffic.LogTemplate) (d *mapDeriver, missing, log string) {
	d = &mapDeriver{m: m, at: map[string]int{}}
	seen := map[*NginxMap]bool{}
	var walk func(m *NginxMap) string
	walk = func(m *NginxMap) string {
		if seen[m] {
			return ""
		}
		seen[m] = true
		for _, name := range m.vars() {
			if inner := m.n.mapOf(name); inner != nil {
				if missing := walk(inner); missing != "" {
					return missing
				}
				continue
			}
			if _, ok := d.at[name]; ok {
				continue
			}
			want := nginxAliases[name]
			if want == nil {
				want = []string{name}
			}
			i := slices.IndexFunc(want, func(v string) bool { return tmpl.Index(v) >= 0 })
			if i < 0 {
				log = want[0]
				return name
			}
			d.at[name] = len(d.vars)
			d.vars = append(d.vars, want[i])
		}
		return ""
	}
	missing = walk(m)
	return d, missing, log
}
