package gateway

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kong is what a Kong declarative config (decK, _format_version "3.0",
// YAML or JSON) limits: one scope per route (or service without routes)
// where a rate-limiting or rate-limiting-advanced plugin applies, after
// Kong's plugin precedence, and one per consumer whose own plugin
// overrides it there.
type Kong struct {
	File   string
	Scopes []*KongScope
	// routes are the file's routes, which route_kong.go matches
	routes []kongRoute
}

// KongScope is a route (or a service without routes, or the whole gateway
// when the config has neither) with the one plugin instance that applies
// to its requests (for one consumer, when Consumer is set).
type KongScope struct {
	Route, Service, Consumer string // names, "" when none
	Plugin                   *KongPlugin
	Where                    Pos // the route, service or consumer entity
	// Both: rate-limiting and rate-limiting-advanced both apply here (Kong
	// runs both); the advanced one's name says so.
	Both bool
}

// Name is the scope's name as --scope and the rows' labels spell it: the
// route's name (or the service's, or "global"), with "(consumer NAME)"
// after it for a consumer's own plugin.
func (s *KongScope) Name() string {
	n := s.Route
	if n == "" {
		n = s.Service
	}
	if n == "" {
		n = "global"
	}
	if s.Consumer != "" {
		n += " (consumer " + s.Consumer + ")"
	}
	if s.Both && s.Plugin.Name == "rate-limiting-advanced" {
		n += " (rate-limiting-advanced)"
	}
	return n
}

// KongPlugin is one rate-limiting or rate-limiting-advanced plugin
// instance, read and checked as Kong's schema checks it.
type KongPlugin struct {
	Name  string // rate-limiting or rate-limiting-advanced
	Where Pos
	// the entities it is scoped to (names), "" when not
	Service, Route, Consumer string
	Windows                  []KongWindow
	// LimitBy is rate-limiting's limit_by (rate-limiting-advanced's
	// identifier): consumer, credential, ip, service, header, path (and
	// consumer-group, route for rate-limiting-advanced).
	LimitBy    string
	HeaderName string
	Path       string
	// Policy is local, cluster or redis (rate-limiting-advanced's
	// strategy).
	Policy        string
	FaultTolerant bool
	// SyncRate in seconds: rate-limiting's -1 (the default) is every hit
	// at once; rate-limiting-advanced's -1 keeps counters on each node
	// only, 0 is every hit at once.
	SyncRate  float64
	ErrorCode int
	// Sliding: rate-limiting-advanced's window_type sliding (its default).
	Sliding bool
	// CountRejected: the windows count rejected hits (rate-limiting with
	// redis; rate-limiting-advanced unless disable_penalty).
	CountRejected bool
	// Ignored names the fields read and not modelled (redis, namespace...).
	Ignored []string
}

// KongWindow is one limit of a plugin: rate-limiting's second ... year,
// or one pair of rate-limiting-advanced's limit and window_size.
type KongWindow struct {
	Name  string  // second ... year, or the window's size in seconds
	Limit float64 // as written: Kong admits while the count is below it
	// Per is the row's per: 1s, 1m, 1h, 24h, 1mo, 1y, or Ns.
	Per   string
	Where Pos
}

// Rate is the row's rate: the whole number of requests Kong admits in a
// window, ceil(Limit) (the handler rejects once limit - usage <= 0).
func (w KongWindow) Rate() int64 { return int64(math.Ceil(w.Limit)) }

// maxLimit is the largest limit read: a whole float64 still.
const maxLimit = 1 << 53

// kongPeriods are rate-limiting's windows, shortest first, with their
// pers: Kong counts them in epoch-aligned seconds, minutes, hours and days
// and in calendar months and years, UTC (kong/tools/timestamp.lua,
// get_timestamps).
var kongPeriods = []struct{ name, per string }{
	{"second", "1s"}, {"minute", "1m"}, {"hour", "1h"}, {"day", "24h"}, {"month", "1mo"}, {"year", "1y"},
}

// rateLimitingFields are the config fields of rate-limiting
// (kong/plugins/rate-limiting/schema.lua), the redis_* shorthands too.
var rateLimitingFields = []string{"second", "minute", "hour", "day", "month", "year", "limit_by", "header_name", "path",
	"policy", "fault_tolerant", "redis", "hide_client_headers", "error_code", "error_message", "sync_rate",
	"redis_host", "redis_port", "redis_password", "redis_username", "redis_ssl", "redis_ssl_verify",
	"redis_server_name", "redis_timeout", "redis_database"}

// advancedFields are the config fields of rate-limiting-advanced, from
// Kong's plugin reference (its source is not public).
var advancedFields = []string{"limit", "window_size", "window_type", "sync_rate", "strategy", "identifier",
	"header_name", "path", "namespace", "dictionary_name", "lock_dictionary_name", "hide_client_headers",
	"retry_after_jitter_max", "error_code", "error_message", "redis", "enforce_consumer_groups",
	"consumer_groups", "disable_penalty", "compound_identifier", "throttling"}

// ReadKong reads the rate limits of a Kong declarative config: the
// plugins at the top level (global, or scoped by their service, route and
// consumer fields) and nested under services, routes (also routes nested
// in services) and consumers; of them, rate-limiting and
// rate-limiting-advanced, enabled. Each route (or service without routes)
// gets the plugin instance Kong would run for its requests, by Kong's
// precedence (kong/runloop/plugins_iterator.lua: consumer+route+service >
// consumer+route > consumer+service > route+service > consumer > route >
// service > global), and each consumer with a plugin of its own that wins
// there gets a scope of its own.
//
// Refused, with file:line:col: a plugin config field Kong does not know,
// a value Kong's schema refuses (a limit <= 0, a longer window's limit
// below a shorter one's, sync_rate without redis...), a plugin that names
// an entity the file does not define, two plugins of one name on one
// scope, a plugin scoped to a consumer group, and a config with no rate
// limit at all.
func ReadKong(file string, data []byte) (*Kong, error) {
	root, err := readYAML(file, data)
	if err != nil {
		return nil, err
	}
	if err := root.mapping("a mapping (a decK file: _format_version, services, routes, consumers, plugins)"); err != nil {
		return nil, err
	}
	r := &kongReader{k: &Kong{File: file}}
	if err := r.entities(root); err != nil {
		return nil, err
	}
	r.scopes()
	r.k.routes = r.routes
	if len(r.k.Scopes) == 0 {
		return nil, &Error{File: file, Msg: "no rate limits at all: the config has no rate-limiting or rate-limiting-advanced plugin that is enabled"}
	}
	return r.k, nil
}

type kongRoute struct {
	name, service string
	where         Pos
	t             *tree // the route entity (nil for a service)
}

type kongReader struct {
	k         *Kong
	services  []kongRoute // name, where (service "" )
	routes    []kongRoute
	consumers []string
	plugins   []*KongPlugin
}

// entityName is an entity's name: name, else username or custom_id
// (consumers), else id, else its index.
func entityName(t *tree, fallback string) string {
	for _, k := range []string{"name", "username", "custom_id", "id"} {
		if v := t.get(k); v != nil && v.kind == treeScalar && v.typ == "string" && v.text != "" {
			return v.text
		}
	}
	return fallback
}

// ref reads a plugin's or route's reference to an entity: a name or id,
// or a mapping {name: ...} / {id: ...}.
func ref(t *tree) (string, error) {
	if t.isNull() {
		return "", nil
	}
	if t.kind == treeMap {
		if n := entityName(t, ""); n != "" {
			return n, nil
		}
		return "", t.errAt("found a mapping without name, username or id, want a reference to an entity")
	}
	return t.str()
}

func (r *kongReader) entities(root *tree) error {
	list := func(key string) ([]*tree, error) { return root.get(key).listOf("a list of " + key) }
	services, err := list("services")
	if err != nil {
		return err
	}
	for i, s := range services {
		if err := s.mapping("a service (a mapping)"); err != nil {
			return err
		}
		name := entityName(s, fmt.Sprintf("services[%d]", i))
		r.services = append(r.services, kongRoute{name: name, where: s.pos})
		if err := r.nestedPlugins(s, "", "", name); err != nil {
			return err
		}
		if rs := s.get("routes"); rs != nil {
			if err := rs.list("a list of routes"); err != nil {
				return err
			}
			for j, rt := range rs.items {
				if err := r.route(rt, name, fmt.Sprintf("%s.routes[%d]", name, j)); err != nil {
					return err
				}
			}
		}
	}
	routes, err := list("routes")
	if err != nil {
		return err
	}
	for i, rt := range routes {
		if err := rt.mapping("a route (a mapping)"); err != nil {
			return err
		}
		svc, err := ref(rt.get("service"))
		if err != nil {
			return err
		}
		if err := r.route(rt, svc, fmt.Sprintf("routes[%d]", i)); err != nil {
			return err
		}
	}
	consumers, err := list("consumers")
	if err != nil {
		return err
	}
	for i, c := range consumers {
		if err := c.mapping("a consumer (a mapping)"); err != nil {
			return err
		}
		name := entityName(c, fmt.Sprintf("consumers[%d]", i))
		r.consumers = append(r.consumers, name)
		if err := r.nestedPlugins(c, name, "", ""); err != nil {
			return err
		}
	}
	plugins, err := list("plugins")
	if err != nil {
		return err
	}
	for _, p := range plugins {
		if err := r.plugin(p, "", "", ""); err != nil {
			return err
		}
	}
	return r.check()
}

func (r *kongReader) route(rt *tree, service, fallback string) error {
	if err := rt.mapping("a route (a mapping)"); err != nil {
		return err
	}
	name := entityName(rt, fallback)
	r.routes = append(r.routes, kongRoute{name: name, service: service, where: rt.pos, t: rt})
	return r.nestedPlugins(rt, "", name, "")
}

// nestedPlugins reads the plugins of an entity, scoped to it.
func (r *kongReader) nestedPlugins(e *tree, consumer, route, service string) error {
	ps := e.get("plugins")
	if ps == nil {
		return nil
	}
	if err := ps.list("a list of plugins"); err != nil {
		return err
	}
	for _, p := range ps.items {
		if err := r.plugin(p, consumer, route, service); err != nil {
			return err
		}
	}
	return nil
}

// plugin reads one plugin entity; the scope given is its parent's (an
// entity a plugin is nested in), to which its own fields add.
func (r *kongReader) plugin(p *tree, consumer, route, service string) error {
	if err := p.mapping("a plugin (a mapping with name and config)"); err != nil {
		return err
	}
	nv := p.get("name")
	if nv == nil {
		return p.errAt("a plugin without a name")
	}
	name, err := nv.str()
	if err != nil {
		return err
	}
	if name != "rate-limiting" && name != "rate-limiting-advanced" {
		return nil
	}
	if ev := p.get("enabled"); ev != nil {
		on, err := ev.boolean()
		if err != nil {
			return err
		}
		if !on {
			return nil
		}
	}
	kp := &KongPlugin{Name: name, Where: p.pos, Consumer: consumer, Route: route, Service: service}
	for _, f := range []struct {
		key string
		dst *string
	}{{"consumer", &kp.Consumer}, {"route", &kp.Route}, {"service", &kp.Service}} {
		if v := p.get(f.key); v != nil {
			s, err := ref(v)
			if err != nil {
				return err
			}
			if s != "" {
				*f.dst = s
			}
		}
	}
	if v := p.get("consumer_group"); !v.isNull() {
		return v.errAt("a plugin scoped to a consumer group is not modelled: scope it to the consumers, routes or services instead")
	}
	conf := p.get("config")
	if conf == nil {
		conf = &tree{kind: treeMap, pos: p.pos, path: joinPath(p.path, "config")}
	}
	if name == "rate-limiting" {
		err = readRateLimiting(kp, conf)
	} else {
		err = readAdvanced(kp, conf)
	}
	if err != nil {
		return err
	}
	r.plugins = append(r.plugins, kp)
	return nil
}

// readRateLimiting reads rate-limiting's config as its schema.lua does:
// each window a number > 0 (at least one), limit_by (default consumer),
// policy (default local), fault_tolerant (default true), sync_rate
// (default -1), and validate_periods_order: no longer window's limit
// below a shorter one's, sync_rate only with redis and then -1 or >=
// 0.02.
func readRateLimiting(kp *KongPlugin, conf *tree) error {
	if err := conf.mapping("the plugin's config (a mapping)", rateLimitingFields...); err != nil {
		return err
	}
	kp.LimitBy, kp.Policy, kp.FaultTolerant, kp.SyncRate, kp.ErrorCode = "consumer", "local", true, -1, 429
	var limits [6]*tree
	for i, per := range kongPeriods {
		v := conf.get(per.name)
		if v.isNull() {
			continue
		}
		n, err := v.number()
		if err != nil {
			return err
		}
		if n <= 0 {
			return v.errAt("value must be greater than 0")
		}
		if n > maxLimit {
			return v.errAt("%s: more than ratesim counts in a window (at most 2^53)", v.text)
		}
		limits[i] = v
		kp.Windows = append(kp.Windows, KongWindow{Name: per.name, Limit: n, Per: per.per, Where: v.pos})
	}
	if len(kp.Windows) == 0 {
		return conf.errAt("at least one of these fields must be non-empty: 'config.second', 'config.minute', 'config.hour', 'config.day', 'config.month', 'config.year'")
	}
	// validate_periods_order: the first longer window below a shorter one
	for i := range limits {
		for j := i + 1; j < len(limits) && limits[i] != nil; j++ {
			if limits[j] == nil {
				continue
			}
			lo, _ := limits[i].number()
			hi, _ := limits[j].number()
			if hi < lo {
				return limits[j].errAt("The limit for %s(%.1f) cannot be lower than the limit for %s(%.1f)", kongPeriods[j].name, hi, kongPeriods[i].name, lo)
			}
		}
	}
	if err := readCommon(kp, conf, "limit_by", []string{"consumer", "credential", "ip", "service", "header", "path"}); err != nil {
		return err
	}
	if v := conf.get("policy"); v != nil {
		s, err := oneOf(v, "local", "cluster", "redis")
		if err != nil {
			return err
		}
		kp.Policy = s
	}
	if v := conf.get("sync_rate"); v != nil {
		n, err := v.number()
		if err != nil {
			return err
		}
		kp.SyncRate = n
	}
	if kp.Policy != "redis" && kp.SyncRate != -1 {
		return conf.get("sync_rate").errAt("sync_rate can only be used with the redis policy")
	}
	if kp.Policy == "redis" && kp.SyncRate != -1 && kp.SyncRate < 0.02 {
		return conf.get("sync_rate").errAt("sync_rate must be greater than 0.02, or -1 to disable")
	}
	// kong/plugins/rate-limiting/policies/init.lua: redis's usage() is one
	// INCR of each window's counter per hit (returning the count before
	// it), so every hit counts, rejected or not; local and cluster
	// increment only an admitted request (handler.lua returns before
	// increment when a window is over)
	kp.CountRejected = kp.Policy == "redis"
	for _, f := range conf.fields {
		if f.key == "redis" || strings.HasPrefix(f.key, "redis_") {
			kp.Ignored = append(kp.Ignored, f.key)
		}
	}
	return nil
}

// readAdvanced reads rate-limiting-advanced's config, as Kong's plugin
// reference documents it: limit and window_size lists of one length,
// window_type (default sliding), strategy (default local), sync_rate,
// identifier (default consumer), disable_penalty (default false: the
// windows count rejected hits).
func readAdvanced(kp *KongPlugin, conf *tree) error {
	if err := conf.mapping("the plugin's config (a mapping)", advancedFields...); err != nil {
		return err
	}
	kp.LimitBy, kp.Policy, kp.FaultTolerant, kp.SyncRate, kp.ErrorCode, kp.Sliding, kp.CountRejected = "consumer", "local", true, -1, 429, true, true
	lv, wv := conf.get("limit"), conf.get("window_size")
	if lv == nil || wv == nil {
		return conf.errAt("limit and window_size are required (want lists of one length, e.g. limit: [10, 100], window_size: [1, 60])")
	}
	if err := lv.list("a list of limits"); err != nil {
		return err
	}
	if err := wv.list("a list of window sizes in seconds"); err != nil {
		return err
	}
	if len(lv.items) == 0 || len(lv.items) != len(wv.items) {
		return wv.errAt("%d window sizes for %d limits (want one window size per limit)", len(wv.items), len(lv.items))
	}
	for i, l := range lv.items {
		n, err := l.number()
		if err != nil {
			return err
		}
		if n <= 0 {
			return l.errAt("value must be greater than 0")
		}
		if n > maxLimit {
			return l.errAt("%s: more than ratesim counts in a window (at most 2^53)", l.text)
		}
		w, err := wv.items[i].integer()
		if err != nil {
			return err
		}
		if w <= 0 || w > 1<<31 {
			return wv.items[i].errAt("window size %d: want a whole number of seconds > 0", w)
		}
		kp.Windows = append(kp.Windows, KongWindow{Name: strconv.FormatInt(w, 10) + "s", Limit: n, Per: secondsPer(w), Where: l.pos})
	}
	if v := conf.get("window_type"); v != nil {
		s, err := oneOf(v, "fixed", "sliding")
		if err != nil {
			return err
		}
		kp.Sliding = s == "sliding"
	}
	if v := conf.get("strategy"); v != nil {
		s, err := oneOf(v, "local", "cluster", "redis")
		if err != nil {
			return err
		}
		kp.Policy = s
	}
	if v := conf.get("sync_rate"); !v.isNull() {
		n, err := v.number()
		if err != nil {
			return err
		}
		if n < 0 && n != -1 {
			return v.errAt("want -1 (counters on each node only), 0 (every hit at once) or a number of seconds > 0")
		}
		kp.SyncRate = n
	} else if kp.Policy != "local" {
		return conf.errAt("sync_rate is required with strategy %s", kp.Policy)
	}
	if v := conf.get("disable_penalty"); v != nil {
		b, err := v.boolean()
		if err != nil {
			return err
		}
		kp.CountRejected = !b
	}
	if err := readCommon(kp, conf, "identifier", []string{"ip", "credential", "consumer", "service", "header", "path", "consumer-group", "route"}); err != nil {
		return err
	}
	for _, f := range conf.fields {
		switch f.key {
		case "namespace", "dictionary_name", "lock_dictionary_name", "redis", "retry_after_jitter_max",
			"enforce_consumer_groups", "consumer_groups", "compound_identifier", "throttling":
			kp.Ignored = append(kp.Ignored, f.key)
		}
	}
	return nil
}

// readCommon reads the fields both plugins share: the key (limit_by or
// identifier), header_name and path (required with header and path),
// error_code.
func readCommon(kp *KongPlugin, conf *tree, keyField string, keys []string) error {
	if v := conf.get(keyField); v != nil {
		s, err := oneOf(v, keys...)
		if err != nil {
			return err
		}
		kp.LimitBy = s
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"header_name", &kp.HeaderName}, {"path", &kp.Path}} {
		if v := conf.get(f.key); !v.isNull() {
			s, err := v.str()
			if err != nil {
				return err
			}
			*f.dst = s
		}
	}
	if kp.LimitBy == "header" && kp.HeaderName == "" {
		return errorAt(conf.pos, joinPath(conf.path, "header_name"), "required field missing (%s is header)", keyField)
	}
	if kp.LimitBy == "path" && kp.Path == "" {
		return errorAt(conf.pos, joinPath(conf.path, "path"), "required field missing (%s is path)", keyField)
	}
	if v := conf.get("fault_tolerant"); v != nil {
		b, err := v.boolean()
		if err != nil {
			return err
		}
		kp.FaultTolerant = b
	}
	if v := conf.get("error_code"); v != nil {
		n, err := v.number()
		if err != nil {
			return err
		}
		if n <= 0 || n > 999 {
			return v.errAt("value must be greater than 0 (an HTTP status)")
		}
		kp.ErrorCode = int(n)
	}
	return nil
}

func oneOf(v *tree, want ...string) (string, error) {
	s, err := v.str()
	if err != nil {
		return "", err
	}
	for _, w := range want {
		if s == w {
			return s, nil
		}
	}
	return "", v.errAt("%q: expected one of: %s", s, strings.Join(want, ", "))
}

// secondsPer writes a window of w seconds as a row's per.
func secondsPer(w int64) string {
	switch {
	case w%3600 == 0:
		return strconv.FormatInt(w/3600, 10) + "h"
	case w%60 == 0:
		return strconv.FormatInt(w/60, 10) + "m"
	}
	return strconv.FormatInt(w, 10) + "s"
}

// check refuses plugins that name entities the file does not define, and
// two plugins of one name on one scope (Kong's unique constraint).
func (r *kongReader) check() error {
	has := func(list []kongRoute, name string) bool {
		return slices.ContainsFunc(list, func(e kongRoute) bool { return e.name == name })
	}
	seen := map[string]*KongPlugin{}
	for _, p := range r.plugins {
		switch {
		case p.Service != "" && !has(r.services, p.Service):
			return errorAt(p.Where, p.Name, "service %q is not defined in this file", p.Service)
		case p.Route != "" && !has(r.routes, p.Route):
			return errorAt(p.Where, p.Name, "route %q is not defined in this file", p.Route)
		case p.Consumer != "" && !slices.Contains(r.consumers, p.Consumer):
			return errorAt(p.Where, p.Name, "consumer %q is not defined in this file", p.Consumer)
		}
		k := p.Name + "\x00" + p.Service + "\x00" + p.Route + "\x00" + p.Consumer
		if prev, dup := seen[k]; dup {
			return errorAt(p.Where, p.Name, "a second %s plugin on %s (also at %d:%d): Kong allows one per scope", p.Name, p.scopeText(), prev.Where.Line, prev.Where.Col)
		}
		seen[k] = p
	}
	return nil
}

// scopeText says what a plugin is scoped to.
func (p *KongPlugin) scopeText() string {
	var parts []string
	for _, s := range []struct{ what, name string }{{"consumer", p.Consumer}, {"route", p.Route}, {"service", p.Service}} {
		if s.name != "" {
			parts = append(parts, s.what+" "+s.name)
		}
	}
	if len(parts) == 0 {
		return "global"
	}
	return strings.Join(parts, " + ")
}

// rank is a plugin's precedence for a request of consumer c on route rt
// of service s: 1 (consumer+route+service) to 8 (global), or 0 when it
// does not apply (plugins_iterator.lua's order of lookups).
func (p *KongPlugin) rank(c, rt, s string) int {
	if p.Consumer != "" && p.Consumer != c || p.Route != "" && p.Route != rt || p.Service != "" && p.Service != s {
		return 0
	}
	hasC, hasR, hasS := p.Consumer != "", p.Route != "", p.Service != ""
	switch {
	case hasC && hasR && hasS:
		return 1
	case hasC && hasR:
		return 2
	case hasC && hasS:
		return 3
	case hasR && hasS:
		return 4
	case hasC:
		return 5
	case hasR:
		return 6
	case hasS:
		return 7
	}
	return 8
}

// pick returns the plugin of name that applies to a request of consumer c
// on route rt of service s, or nil.
func (r *kongReader) pick(name, c, rt, s string) *KongPlugin {
	var best *KongPlugin
	bestRank := 0
	for _, p := range r.plugins {
		if p.Name != name {
			continue
		}
		if k := p.rank(c, rt, s); k > 0 && (best == nil || k < bestRank) {
			best, bestRank = p, k
		}
	}
	return best
}

// scopes makes the scopes: every route, every service without routes (or
// the gateway, when there is neither), each with the plugin that applies
// to anyone, then one per consumer whose own plugin applies instead.
func (r *kongReader) scopes() {
	type place struct {
		route, service string
		where          Pos
	}
	var places []place
	routed := map[string]bool{}
	for _, rt := range r.routes {
		places = append(places, place{rt.name, rt.service, rt.where})
		routed[rt.service] = true
	}
	for _, s := range r.services {
		if !routed[s.name] {
			places = append(places, place{"", s.name, s.where})
		}
	}
	if len(places) == 0 {
		places = append(places, place{})
	}
	for _, pl := range places {
		for _, c := range append([]string{""}, r.consumers...) {
			basic := r.pick("rate-limiting", c, pl.route, pl.service)
			adv := r.pick("rate-limiting-advanced", c, pl.route, pl.service)
			if c != "" {
				// a consumer's scope only where its own plugin wins
				if basic == r.pick("rate-limiting", "", pl.route, pl.service) {
					basic = nil
				}
				if adv == r.pick("rate-limiting-advanced", "", pl.route, pl.service) {
					adv = nil
				}
			}
			for _, p := range []*KongPlugin{basic, adv} {
				if p != nil {
					r.k.Scopes = append(r.k.Scopes, &KongScope{Route: pl.route, Service: pl.service, Consumer: c,
						Plugin: p, Where: pl.where, Both: basic != nil && adv != nil})
				}
			}
		}
	}
}
