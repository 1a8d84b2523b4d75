package gateway

import (
	"fmt"
	"iter"
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// This file reads envoy's HTTP local_ratelimit filter
// (envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit), in a
// whole bootstrap or alone, and writes its token buckets as rows, to the
// letter of source/extensions/filters/common/local_ratelimit/
// local_ratelimit_impl.cc (LocalRateLimiterImpl: its constructor's checks
// and requestAllowed) and of the filter's FilterConfig (enabled() and
// enforced() are false when filter_enabled or filter_enforced is unset).

// LocalRateLimitType is the filter config's @type.
const LocalRateLimitType = "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit"

// localFilterName is the filter's well-known name in http_filters.
const localFilterName = "envoy.filters.http.local_ratelimit"

// LocalBucket is a token_bucket (envoy.type.v3.TokenBucket): it holds
// MaxTokens at most, starts full, and gains TokensPerFill (default 1) per
// FillInterval.
type LocalBucket struct {
	MaxTokens, TokensPerFill int64
	FillInterval             time.Duration
	Where                    Pos
}

// LocalDescriptor is one of the filter's descriptors: the entries a
// request's descriptor must match (verbatim; an entry without a value,
// in recent envoys, matches every value, each with its own bucket), and
// its bucket.
type LocalDescriptor struct {
	Entries    []EnvoyEntry
	Bucket     LocalBucket
	ShadowMode bool
	Where      Pos
}

// Path is the descriptor's entries, key=value, joined by "/".
func (d *LocalDescriptor) Path() string { return entriesPath(d.Entries) }

// Percent is a RuntimeFractionalPercent: Num/Den of the requests (the
// runtime key, when set, may change it at run time).
type Percent struct {
	Set        bool // written in the config
	Num, Den   int64
	RuntimeKey string
}

// all reports whether the percent is at least 100%.
func (p Percent) all() bool { return p.Set && p.Num >= p.Den }

// none reports whether the percent is 0 or unset (envoy's default: 0%).
func (p Percent) none() bool { return !p.Set || p.Num == 0 }

func (p Percent) String() string {
	s := ""
	switch {
	case p.Num >= p.Den:
		s = "100%"
	case 100*p.Num%p.Den == 0:
		s = fmt.Sprintf("%d%%", 100*p.Num/p.Den)
	default:
		s = fmt.Sprintf("%d/%d", p.Num, p.Den)
	}
	if p.RuntimeKey != "" {
		s += " (runtime key " + p.RuntimeKey + ")"
	}
	return s
}

// LocalScope is one local_ratelimit config and where it applies: the
// filter's own (a listener's connection manager's http_filters), or a
// virtual host's or route's typed_per_filter_config, which replaces the
// filter's for the requests it routes.
type LocalScope struct {
	// Name is the scope's name as --scope and the rows' labels spell it:
	// the listener's, then /VHOST, then /ROUTE (its name, or its match);
	// the stat_prefix for a config read alone.
	Name       string
	Where      Pos // the config
	StatPrefix string
	Bucket     *LocalBucket // the default bucket; nil when unset
	Enabled    Percent      // filter_enabled
	Enforced   Percent      // filter_enforced
	Status     string       // status.code, "429" by default
	// Descriptors are the filter's descriptors, in config order.
	Descriptors []*LocalDescriptor
	// AlwaysConsumeDefault is always_consume_default_token_bucket
	// (default true): a request that matches descriptors takes a token
	// from the default bucket too.
	AlwaysConsumeDefault bool
	// PerConnection is local_rate_limit_per_downstream_connection: each
	// connection has its own buckets.
	PerConnection bool
	// LocalCluster is local_cluster_rate_limit: envoy divides the tokens
	// among the instances of its local cluster.
	LocalCluster bool
}

// EnvoyLocal is what a config limits with envoy's local_ratelimit: its
// scopes in config order, and what the reader could not see.
type EnvoyLocal struct {
	File   string
	Scopes []*LocalScope
	// Notes are things of the file the import says and does not read
	// (routes from RDS).
	Notes []string
	// routeConfigs are the listeners' route configs, which route_envoy.go
	// matches requests with
	routeConfigs []envoyRouteConfig
	// listeners are the bootstrap's listeners, in order, with their
	// addresses: what an access log's listener field names
	listeners []envoyListener
}

var (
	localFields = []string{"@type", "stat_prefix", "status", "token_bucket", "filter_enabled", "filter_enforced",
		"request_headers_to_add_when_not_enforced", "response_headers_to_add", "descriptors", "stage",
		"local_rate_limit_per_downstream_connection", "local_cluster_rate_limit", "enable_x_ratelimit_headers",
		"vh_rate_limits", "always_consume_default_token_bucket", "rate_limited_as_resource_exhausted", "rate_limits",
		"max_dynamic_descriptors"}
	tokenBucketFields = []string{"max_tokens", "tokens_per_fill", "fill_interval"}
	localDescFields   = []string{"entries", "token_bucket", "shadow_mode"}
	entryFields       = []string{"key", "value"}
	percentFields     = []string{"default_value", "runtime_key"}
	fractionFields    = []string{"numerator", "denominator"}
	fractionDenoms    = map[string]int64{"HUNDRED": 100, "TEN_THOUSAND": 10_000, "MILLION": 1_000_000, "0": 100, "1": 10_000, "2": 1_000_000}
	minFillInterval   = 50 * time.Millisecond
	httpConnManager   = "envoy.filters.network.http_connection_manager"
	httpConnMgrType   = "HttpConnectionManager"
	filterConfigType  = "type.googleapis.com/envoy.config.route.v3.FilterConfig"
)

// ReadEnvoyLocal reads the local_ratelimit configs of an envoy bootstrap
// (static_resources: each listener's http_connection_manager's
// http_filters, and the typed_per_filter_config of its route_config's
// virtual hosts and routes), or of one filter's typed_config alone (or its
// http_filters entry). Refused, with file:line:col: fields the filter does
// not have, a token_bucket without max_tokens (or with 0) or
// fill_interval, a fill_interval under 50ms (envoy refuses it), a
// descriptor without entries or token_bucket, the same descriptor twice,
// and a file with no local_ratelimit config at all. The rest of a
// bootstrap is not checked.
func ReadEnvoyLocal(file string, data []byte) (*EnvoyLocal, error) {
	r := &localReader{l: &EnvoyLocal{File: file}, names: labels{}}
	top, err := readYAMLAsRead(file, data)
	if err != nil {
		return nil, err
	}
	if err := top.mappingOf("an envoy bootstrap or a local_ratelimit typed_config (a mapping)", nil, nil); err != nil {
		return nil, err
	}
	switch {
	case top.get("static_resources") != nil:
		if err := r.bootstrap(top); err != nil {
			return nil, err
		}
	case top.get("typed_config") != nil:
		if err := r.httpFilter(top, "", nil); err != nil {
			return nil, err
		}
	case top.get("stat_prefix") != nil || top.get("token_bucket") != nil || top.get("@type") != nil:
		s, err := r.config(top, "")
		if err != nil {
			return nil, err
		}
		s.Name = s.StatPrefix
		r.l.Scopes = append(r.l.Scopes, s)
	default:
		return nil, top.errAt("found neither static_resources (an envoy bootstrap) nor a local_ratelimit typed_config (stat_prefix, token_bucket, ...)")
	}
	if len(r.l.Scopes) == 0 {
		return nil, noLimits(file, "no http_connection_manager of the file has a local_ratelimit filter ("+localFilterName+")")
	}
	if !slices.ContainsFunc(r.l.Scopes, func(s *LocalScope) bool {
		return !s.Enabled.none() && (s.Bucket != nil || len(s.Descriptors) > 0)
	}) {
		return nil, noLimits(file, "every local_ratelimit config is disabled (filter_enabled unset, envoy's default of 0%, or 0%) or has no token_bucket")
	}
	return r.l, nil
}

type localReader struct {
	l     *EnvoyLocal
	names labels // scope names given, for #2, #3...
}

// field returns m's field key read as a mapping (nil when absent or null).
func field(m *tree, key, what string) (*tree, error) {
	v := m.get(key)
	if v.isNull() {
		return nil, nil
	}
	return v, v.mappingOf(what, nil, nil)
}

// bootstrap reads static_resources.listeners.
func (r *localReader) bootstrap(m *tree) error {
	sr, err := field(m, "static_resources", "a mapping (listeners, clusters, ...)")
	if err != nil || sr == nil {
		return err
	}
	listeners, err := sr.at("listeners").listOf("a list of listeners")
	if err != nil {
		return err
	}
	for i, lm := range listeners {
		if err := lm.mappingOf("a listener (a mapping)", nil, nil); err != nil {
			return err
		}
		name, err := lm.at("name").scalarText()
		if err != nil {
			return err
		}
		if name == "" {
			name = fmt.Sprintf("listener[%d]", i)
		}
		ls := envoyListener{name: name}
		if sa := lm.get("address").get("socket_address"); !sa.isNull() {
			if ls.addr, err = sa.get("address").scalarText(); err != nil {
				return err
			}
			if ls.port, err = sa.get("port_value").scalarText(); err != nil {
				return err
			}
		}
		r.l.listeners = append(r.l.listeners, ls)
		chains, err := lm.at("filter_chains").listOf("a list of filter chains")
		if err != nil {
			return err
		}
		if dc := lm.get("default_filter_chain"); !dc.isNull() {
			chains = append(chains, dc)
		}
		for _, cm := range chains {
			if err := cm.mappingOf("a filter chain (a mapping)", nil, nil); err != nil {
				return err
			}
			filters, err := cm.at("filters").listOf("a list of network filters")
			if err != nil {
				return err
			}
			for _, fm := range filters {
				if err := fm.mappingOf("a network filter (a mapping)", nil, nil); err != nil {
					return err
				}
				if err := r.networkFilter(fm, name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// networkFilter reads an http_connection_manager's http_filters and route
// config; other network filters are not read.
func (r *localReader) networkFilter(fm *tree, listener string) error {
	fname, err := fm.at("name").scalarText()
	if err != nil {
		return err
	}
	tc, err := field(fm, "typed_config", "a typed_config (a mapping)")
	if err != nil || tc == nil {
		return err
	}
	typ, err := tc.at("@type").scalarText()
	if err != nil {
		return err
	}
	if fname != httpConnManager && !strings.HasSuffix(typ, "."+httpConnMgrType) {
		return nil
	}
	filters, err := tc.at("http_filters").listOf("a list of http filters")
	if err != nil {
		return err
	}
	var names []string // the local_ratelimit filters' names, for typed_per_filter_config
	for _, hm := range filters {
		if err := hm.mappingOf("an http filter (a mapping)", nil, nil); err != nil {
			return err
		}
		if err := r.httpFilter(hm, listener, &names); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return nil
	}
	if rds := tc.get("rds"); rds != nil {
		r.l.Notes = append(r.l.Notes, fmt.Sprintf("%s:%d: listener %s takes its routes from RDS: their typed_per_filter_config are not in this file", filepath.Base(r.l.File), rds.pos.Line, listener))
	}
	rc, err := field(tc, "route_config", "a route_config (a mapping)")
	if err != nil || rc == nil {
		return err
	}
	r.l.routeConfigs = append(r.l.routeConfigs, envoyRouteConfig{listener: listener, rc: rc})
	vhosts, err := rc.at("virtual_hosts").listOf("a list of virtual hosts")
	if err != nil {
		return err
	}
	for i, vm := range vhosts {
		if err := vm.mappingOf("a virtual host (a mapping)", nil, nil); err != nil {
			return err
		}
		vname, err := vm.at("name").scalarText()
		if err != nil {
			return err
		}
		if vname == "" {
			vname = fmt.Sprintf("virtual_hosts[%d]", i)
		}
		if err := r.perFilter(vm, names, listener+"/"+vname); err != nil {
			return err
		}
		routes, err := vm.at("routes").listOf("a list of routes")
		if err != nil {
			return err
		}
		for j, rm := range routes {
			if err := rm.mappingOf("a route (a mapping)", nil, nil); err != nil {
				return err
			}
			rname, err := routeName(rm, j)
			if err != nil {
				return err
			}
			if err := r.perFilter(rm, names, listener+"/"+vname+"/"+rname); err != nil {
				return err
			}
		}
	}
	return nil
}

// routeName is a route's name, or its match (prefix /api), or routes[j].
func routeName(rm *tree, j int) (string, error) {
	name, err := rm.at("name").scalarText()
	if err != nil || name != "" {
		return name, err
	}
	if mm, err := field(rm, "match", "a route match (a mapping)"); err == nil && mm != nil {
		for _, k := range []string{"prefix", "path", "path_separated_prefix"} {
			if v := mm.get(k); !v.isNull() {
				s, err := v.scalarText()
				if err != nil {
					return "", err
				}
				return k + " " + s, nil
			}
		}
	} else if err != nil {
		return "", err
	}
	return fmt.Sprintf("routes[%d]", j), nil
}

// httpFilter reads one http_filters entry, when it is a local_ratelimit
// filter, as the scope called listener; names gains its name.
func (r *localReader) httpFilter(hm *tree, listener string, names *[]string) error {
	name, err := hm.at("name").scalarText()
	if err != nil {
		return err
	}
	tc, err := field(hm, "typed_config", "a typed_config (a mapping)")
	if err != nil || tc == nil {
		return err
	}
	typ, err := tc.at("@type").scalarText()
	if err != nil {
		return err
	}
	if typ != LocalRateLimitType && name != localFilterName {
		if listener == "" {
			return tc.at("@type").errAt("%q: not a local_ratelimit filter (want @type %s)", typ, LocalRateLimitType)
		}
		return nil
	}
	s, err := r.config(tc, "")
	if err != nil {
		return err
	}
	s.Name = listener
	if s.Name == "" {
		s.Name = s.StatPrefix
	}
	s.Name = r.names.unique(s.Name)
	r.l.Scopes = append(r.l.Scopes, s)
	if names != nil && name != "" {
		*names = append(*names, name)
	}
	return nil
}

// perFilter reads the typed_per_filter_config of a virtual host or route
// for the local_ratelimit filters called names, as the scope called scope.
func (r *localReader) perFilter(m *tree, names []string, scope string) error {
	pf, err := field(m, "typed_per_filter_config", "a mapping of filter names to configs")
	if err != nil || pf == nil {
		return err
	}
	for _, name := range names {
		v, err := field(pf, name, "a local_ratelimit config (a mapping)")
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		if typ, _ := v.at("@type").scalarText(); typ == filterConfigType {
			v = v.at("config")
		}
		s, err := r.config(v, scope)
		if err != nil {
			return err
		}
		if s.Bucket == nil {
			return v.errAt("a route's or virtual host's local_ratelimit config needs a token_bucket (envoy refuses it without)")
		}
		s.Name = r.names.unique(scope)
		r.l.Scopes = append(r.l.Scopes, s)
	}
	return nil
}

// config reads one LocalRateLimit config.
func (r *localReader) config(m *tree, scope string) (*LocalScope, error) {
	if err := m.mappingOf("a local_ratelimit config (a mapping with stat_prefix, token_bucket, ...)", localFields, unknownField(localFields)); err != nil {
		return nil, err
	}
	s := &LocalScope{Where: m.pos, Status: "429", AlwaysConsumeDefault: true}
	if typ := m.get("@type"); !typ.isNull() {
		t, err := typ.scalarText()
		if err != nil {
			return nil, err
		}
		if t != LocalRateLimitType {
			return nil, typ.errAt("%q: not a local_ratelimit config (want %s)", t, LocalRateLimitType)
		}
	}
	var err error
	if s.StatPrefix, err = m.at("stat_prefix").requiredText("missing or empty (want stat_prefix: NAME; envoy requires it)"); err != nil {
		return nil, err
	}
	if tb := m.get("token_bucket"); !tb.isNull() {
		b, err := bucket(tb)
		if err != nil {
			return nil, err
		}
		b.Where = m.keyPos("token_bucket")
		s.Bucket = &b
	}
	if s.Enabled, err = percent(m.at("filter_enabled")); err != nil {
		return nil, err
	}
	if s.Enforced, err = percent(m.at("filter_enforced")); err != nil {
		return nil, err
	}
	if st := m.get("status"); !st.isNull() {
		if err := st.mappingOf("an HttpStatus {code: 429}", []string{"code"}, unknownField([]string{"code"})); err != nil {
			return nil, err
		}
		code := st.at("code")
		if code.typ == "integer" {
			c, err := code.uint32(false, "an HTTP status code")
			if err != nil {
				return nil, err
			}
			if c >= 400 { // envoy answers 429 for a code under 400
				s.Status = strconv.FormatInt(c, 10)
			}
		} else if !code.isNull() {
			if s.Status, err = code.scalarText(); err != nil { // an enum name: TooManyRequests
				return nil, err
			}
		}
	}
	if s.AlwaysConsumeDefault, err = m.at("always_consume_default_token_bucket").boolOr(true); err != nil {
		return nil, err
	}
	if s.PerConnection, err = m.at("local_rate_limit_per_downstream_connection").boolOr(false); err != nil {
		return nil, err
	}
	s.LocalCluster = !m.get("local_cluster_rate_limit").isNull()
	if s.LocalCluster && s.PerConnection {
		return nil, m.at("local_cluster_rate_limit").errAt("local_cluster_rate_limit with local_rate_limit_per_downstream_connection: envoy refuses both (a connection's bucket is not shared among instances)")
	}
	descs, err := m.at("descriptors").listOf("a list of descriptors")
	if err != nil {
		return nil, err
	}
	for _, dv := range descs {
		d, err := descriptor(dv)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(s.Descriptors, func(o *LocalDescriptor) bool { return slices.Equal(o.Entries, d.Entries) }); i >= 0 {
			first := s.Descriptors[i].Where
			return nil, errorAt(d.Where, dv.path, "duplicate descriptor in the local rate descriptor: %s (first at %d:%d)", d.Path(), first.Line, first.Col)
		}
		s.Descriptors = append(s.Descriptors, d)
	}
	return s, nil
}

// bucket reads a token_bucket as envoy validates it: max_tokens > 0 and
// fill_interval required, tokens_per_fill > 0 (default 1), and a
// fill_interval of at least 50ms (LocalRateLimiterImpl refuses less).
func bucket(m *tree) (LocalBucket, error) {
	b := LocalBucket{Where: m.pos, TokensPerFill: 1}
	if err := m.mappingOf("a token_bucket {max_tokens, tokens_per_fill, fill_interval}", tokenBucketFields, unknownField(tokenBucketFields)); err != nil {
		return b, err
	}
	mt := m.at("max_tokens")
	if mt.isNull() {
		return b, mt.errAt("missing (want max_tokens: N, N >= 1)")
	}
	var err error
	if b.MaxTokens, err = mt.uint32(true, "a whole number of tokens, at least 1"); err != nil {
		return b, err
	}
	if b.MaxTokens == 0 {
		return b, mt.errAt("0: want at least 1 (a bucket of 0 tokens rejects every request)")
	}
	if tpf := m.get("tokens_per_fill"); !tpf.isNull() {
		if b.TokensPerFill, err = tpf.uint32(true, "a whole number of tokens, at least 1"); err != nil {
			return b, err
		}
		if b.TokensPerFill == 0 {
			return b, tpf.errAt("0: want at least 1")
		}
	}
	fi := m.at("fill_interval")
	if fi.isNull() {
		return b, fi.errAt(`missing (want fill_interval: a duration such as "1s")`)
	}
	if b.FillInterval, err = fi.protoDuration(); err != nil {
		return b, err
	}
	if b.FillInterval < minFillInterval {
		return b, fi.errAt("%s: local rate limit token bucket fill timer must be >= 50ms", scenarios.DurationText(b.FillInterval))
	}
	return b, nil
}

// descriptor reads one LocalRateLimitDescriptor.
func descriptor(m *tree) (*LocalDescriptor, error) {
	if err := m.mappingOf("a descriptor {entries, token_bucket}", localDescFields, unknownField(localDescFields)); err != nil {
		return nil, err
	}
	d := &LocalDescriptor{Where: m.pos}
	entries, err := m.at("entries").listOf("a list of entries {key, value}")
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, m.at("entries").errAt("missing or empty (want entries: [{key: K, value: V}])")
	}
	for _, em := range entries {
		if err := em.mappingOf("an entry {key, value}", entryFields, unknownField(entryFields)); err != nil {
			return nil, err
		}
		var e EnvoyEntry
		if e.Key, err = em.at("key").requiredText("missing or empty (want key: NAME)"); err != nil {
			return nil, err
		}
		if e.Value, err = em.at("value").scalarText(); err != nil {
			return nil, err
		}
		d.Entries = append(d.Entries, e)
	}
	tb := m.at("token_bucket")
	if tb.isNull() {
		return nil, tb.errAt("missing (want token_bucket: {max_tokens, tokens_per_fill, fill_interval})")
	}
	if d.Bucket, err = bucket(tb); err != nil {
		return nil, err
	}
	d.Bucket.Where = m.keyPos("token_bucket")
	if d.ShadowMode, err = m.at("shadow_mode").boolOr(false); err != nil {
		return nil, err
	}
	return d, nil
}

// percent reads a RuntimeFractionalPercent: default_value {numerator,
// denominator (HUNDRED, TEN_THOUSAND or MILLION; default HUNDRED)} and
// runtime_key.
func percent(m *tree) (Percent, error) {
	p := Percent{Den: 100}
	if m.isNull() {
		return p, nil
	}
	if err := m.mappingOf("a runtime fractional percent {default_value: {numerator, denominator}, runtime_key}", percentFields, unknownField(percentFields)); err != nil {
		return p, err
	}
	var err error
	if p.RuntimeKey, err = m.at("runtime_key").scalarText(); err != nil {
		return p, err
	}
	fm := m.at("default_value")
	if fm.isNull() {
		return p, fm.errAt("missing (want default_value: {numerator: N, denominator: HUNDRED})")
	}
	if err := fm.mappingOf("a fractional percent {numerator, denominator}", fractionFields, unknownField(fractionFields)); err != nil {
		return p, err
	}
	if num := fm.get("numerator"); !num.isNull() {
		if p.Num, err = num.uint32(true, "a whole number"); err != nil {
			return p, err
		}
	}
	if den := fm.get("denominator"); !den.isNull() {
		t, err := den.scalarText()
		if err != nil {
			return p, err
		}
		d, ok := fractionDenoms[t]
		if !ok {
			return p, den.errAt("%q: want HUNDRED, TEN_THOUSAND or MILLION", t)
		}
		p.Den = d
	}
	p.Set = true
	return p, nil
}

// ParseEnvoyVersion reads an envoy version, X.Y or X.Y.Z (a leading v
// allowed); "" is the newest. It returns whether that envoy's
// local_ratelimit buckets refill at once every fill_interval (a timer;
// before 1.31) rather than continuously (1.31 and later: envoy's 1.31.0
// changelog, local_ratelimit: "Updated the token bucket implementation to
// use non-timer based token bucket").
func ParseEnvoyVersion(v string) (discrete bool, err error) {
	if v == "" {
		return false, nil
	}
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	bad := fmt.Errorf("--envoy-version %q: want an envoy version such as 1.30 or 1.31.2", v)
	if len(parts) < 2 || len(parts) > 3 {
		return false, bad
	}
	var n [2]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || strings.TrimLeft(p, "0123456789") != "" {
			return false, bad
		}
		if i < 2 {
			n[i] = x
		}
	}
	return n[0] < 1 || n[0] == 1 && n[1] < 31, nil
}

// localRow is one row of an envoy-local import: the buckets a request
// takes tokens from, in envoy's order.
type localRow struct {
	scope *LocalScope
	label string
	descs []*LocalDescriptor // matched descriptors, in the order envoy takes from them
	dflt  bool               // the default bucket too, last
}

// rows returns the rows of scope s: its default bucket alone (a request
// that matches no descriptor), then one per descriptor.
func (s *LocalScope) rows(discrete bool) []localRow {
	var rows []localRow
	if s.Bucket != nil {
		rows = append(rows, localRow{scope: s, label: s.Name, dflt: true})
	}
	for _, d := range s.Descriptors {
		rows = append(rows, s.request(s.Name+" "+d.Path(), []*LocalDescriptor{d}, discrete))
	}
	return rows
}

// request is the row of a request that matches descs: envoy's
// requestAllowed takes a token from each matched descriptor's bucket,
// slowest-filling first, stopping at the first that has none (what the
// earlier ones gave is not refunded), then from the default bucket when
// none matched or always_consume_default_token_bucket (default true).
func (s *LocalScope) request(label string, descs []*LocalDescriptor, discrete bool) localRow {
	sorted := slices.Clone(descs)
	slices.SortStableFunc(sorted, func(a, b *LocalDescriptor) int { return fillOrder(a.Bucket, b.Bucket, discrete) })
	return localRow{scope: s, label: label, descs: sorted, dflt: s.Bucket != nil && s.AlwaysConsumeDefault}
}

// fillOrder compares two buckets by fill rate, as envoy sorts the matched
// descriptors: from 1.31 by tokens_per_fill / fill_interval (a double,
// compared here exactly); before, by the whole tokens per whole second
// (tokensFillPerSecond: tokens_per_fill / the fill_interval's whole
// seconds, or / 1 below a second). Equal rates keep the config's order
// (envoy's std::sort leaves it unspecified).
func fillOrder(a, b LocalBucket, discrete bool) int {
	if discrete {
		rate := func(x LocalBucket) int64 { return x.TokensPerFill / max(1, int64(x.FillInterval/time.Second)) }
		return int(rate(a) - rate(b))
	}
	l := new(big.Int).Mul(big.NewInt(a.TokensPerFill), big.NewInt(int64(b.FillInterval)))
	rr := new(big.Int).Mul(big.NewInt(b.TokensPerFill), big.NewInt(int64(a.FillInterval)))
	return l.Cmp(rr)
}

// enabledScopes are the scopes whose filter checks requests.
func (l *EnvoyLocal) enabledScopes() []*LocalScope {
	var out []*LocalScope
	for _, s := range l.Scopes {
		if !s.Enabled.none() {
			out = append(out, s)
		}
	}
	return out
}

// pick returns the rows --scope names: every row when it is ""; a scope's
// rows by its name; one row by its label; or, for labels of one scope's
// descriptors joined by " + ", the row of a request matching all of them.
func (l *EnvoyLocal) pick(scope string, discrete bool) ([]localRow, error) {
	var all []localRow
	for _, s := range l.enabledScopes() {
		all = append(all, s.rows(discrete)...)
	}
	if scope == "" {
		return all, nil
	}
	names := func() string {
		var ns []string
		for _, row := range all {
			ns = append(ns, strconv.Quote(row.label))
		}
		return strings.Join(ns, ", ")
	}
	for _, s := range l.enabledScopes() {
		if s.Name == scope {
			return s.rows(discrete), nil
		}
	}
	if i := slices.IndexFunc(all, func(row localRow) bool { return row.label == scope }); i >= 0 {
		return all[i : i+1], nil // a label may hold a +
	}
	parts := strings.Split(scope, "+")
	var descs []*LocalDescriptor
	var owner *LocalScope
	for _, part := range parts {
		part = strings.TrimSpace(part)
		i := slices.IndexFunc(all, func(row localRow) bool { return row.label == part })
		if i < 0 {
			return nil, fmt.Errorf("--scope %q: no row of %s is %q (its rows: %s; join descriptors of one scope with \" + \")", scope, l.File, part, names())
		}
		row := all[i]
		if len(parts) == 1 {
			return []localRow{row}, nil
		}
		if len(row.descs) != 1 {
			return nil, fmt.Errorf("--scope %q: %q is not a descriptor's row (join descriptors of one scope with \" + \")", scope, part)
		}
		if owner != nil && row.scope != owner {
			return nil, fmt.Errorf("--scope %q: %q is of another scope than %q (a request meets one scope's config)", scope, part, owner.Name)
		}
		if slices.Contains(descs, row.descs[0]) {
			return nil, fmt.Errorf("--scope %q: %q is named twice", scope, part)
		}
		owner = row.scope
		descs = append(descs, row.descs[0])
	}
	return []localRow{owner.request(scope, descs, discrete)}, nil
}

// Scenario makes the local_ratelimit configs of l a ratesim scenario: a
// token-bucket row per scope's default bucket and per descriptor (an
// all-of with commit in-order when the default bucket is taken from too),
// with rate tokens_per_fill per fill_interval and burst max_tokens,
// refilled continuously (envoy 1.31 and later) or, for o.EnvoyVersion
// before 1.31, tokens_per_fill at once every fill_interval. A scope whose
// filter is not enabled is a comment.
func (l *EnvoyLocal) Scenario(o Options) (*Import, error) {
	discrete, err := ParseEnvoyVersion(o.EnvoyVersion)
	if err != nil {
		return nil, err
	}
	rows, err := l.pick(o.Scope, discrete)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("--scope %q: that scope has no token bucket", o.Scope)
	}
	if discrete {
		if err := l.checkMultiples(rows); err != nil {
			return nil, err
		}
	}
	base := filepath.Base(l.File)
	version := []string{
		"full; envoy 1.31 and later refill continuously: token-bucket rows with rate",
		"tokens_per_fill per fill_interval and burst max_tokens (before 1.31: import",
		"--envoy-version 1.30).",
	}
	if discrete {
		version = []string{
			"full; envoy " + o.EnvoyVersion + " (before 1.31) refills tokens_per_fill at once every fill_interval,",
			"on a timer started with the config: token-bucket rows with fill-interval and",
			"tokens-per-fill, burst max_tokens.",
		}
	}
	head := []string{
		"Imported from " + base + " by ratesim import --from envoy-local: envoy's local_ratelimit",
		"token buckets, one row per scope (the filter's own config, or a virtual host's",
		"or route's typed_per_filter_config) and one per descriptor. Each bucket starts",
	}
	head = append(head, version...)
	head = append(head,
		"A request matching descriptors takes a token from each (slowest-filling first),",
		"then from the default bucket, stopping at the first that is empty, with no",
		"refund: all-of with commit in-order. Which descriptors a request carries is set",
		"by envoy's rate_limits actions: --scope \"A + B\" writes the row of one matching A and B.",
		"Each envoy keeps its own buckets: N envoys behind a balancer admit up to N times",
		"these limits. No cluster section (the config does not say N): to see it, add",
		"cluster: {nodes: N} and coordination: local to plain rows (docs/cluster.md).")
	for _, n := range l.Notes {
		head = append(head, "NOTE: "+n)
	}
	im := newImport(base, "The local_ratelimit token buckets of "+base+".", head...)
	first := rows[0].buckets()[0]
	im.File.Limit = limit(first.TokensPerFill, scenarios.DurationText(first.FillInterval))
	im.File.Limit.Burst = scenarios.IntOf(first.MaxTokens)
	im.File.Duration = scenarios.DurationOf("10s")
	var split labels // the labels of --split-limits rows, when it is given
	if o.SplitLimits {
		split = labels{}
	}
	keys, _ := l.Keys(o)
	var kb localBy
	kb.primary, kb.ok = localPrimary(keys)
	if o.Scope == "" {
		for _, s := range l.Scopes {
			im.note(l.scopeComment(base, s)...)
			if !s.Enabled.none() {
				for _, row := range s.rows(discrete) {
					l.addRow(im, base, row, discrete, split, kb)
				}
			}
		}
	} else {
		im.note(l.scopeComment(base, rows[0].scope)...)
		for _, row := range rows {
			l.addRow(im, base, row, discrete, split, kb)
		}
	}
	im.placeholderTraffic(2*first.TokensPerFill, scenarios.DurationText(first.FillInterval))
	im.attributes()
	return im, nil
}

// localPrimary is the request's key among keys (primaryOf), when every
// key is one a log field can hold: not with a bucket per downstream
// connection, where the buckets keep the one key of the request.
func localPrimary(keys []Key) (Key, bool) {
	for _, k := range keys {
		if k.Kind == KeyOther && k.Attr == "" {
			return Key{}, false
		}
	}
	return primaryOf(keys)
}

// localBy says what the buckets of an import count by: primary is the
// request's key, ok false when there is none (localPrimary).
type localBy struct {
	primary Key
	ok      bool
}

// by is the by: of a bucket of descriptor d (nil: the default bucket):
// "" for the request's key (and for every bucket when no key varies),
// "global", or the attribute of d's one entry without a value.
func (kb localBy) by(d *LocalDescriptor) string {
	if !kb.ok {
		return ""
	}
	if d == nil {
		return "global"
	}
	keys := localDescKeys(d)
	if len(keys) != 1 {
		return ""
	}
	return byOf(keys[0], kb.primary, true)
}

// byEntry is e, a bucket's row, counting by by: e with by: set, alone an
// all-of of one.
func byEntry(e scenarios.AlgEntry, by string, alone bool) scenarios.AlgEntry {
	if by == "" {
		return e
	}
	e.By = str(by)
	if alone {
		return scenarios.AlgEntry{Name: str("all-of"), Limits: []scenarios.AlgEntry{e}}
	}
	return e
}

func (*EnvoyLocal) keyedLimits() {}

// buckets are the row's buckets in envoy's order.
func (row localRow) buckets() []LocalBucket {
	var bs []LocalBucket
	for _, d := range row.descs {
		bs = append(bs, d.Bucket)
	}
	if row.dflt {
		bs = append(bs, *row.scope.Bucket)
	}
	return bs
}

// checkMultiples refuses, before 1.31, a descriptor whose fill_interval is
// not a multiple of its scope's (LocalRateLimiterImpl: "local rate
// descriptor limit is not a multiple of token bucket fill timer"): its
// bucket refilled on the default bucket's timer.
func (l *EnvoyLocal) checkMultiples(rows []localRow) error {
	for _, row := range rows {
		for _, d := range row.descs {
			if row.scope.Bucket == nil {
				return &Error{File: l.File, Line: d.Where.Line, Col: d.Where.Col, Path: "descriptors",
					Msg: "before envoy 1.31 a descriptor's bucket refills on the default token_bucket's timer: the config needs a token_bucket"}
			}
			if d.Bucket.FillInterval%row.scope.Bucket.FillInterval != 0 {
				return &Error{File: l.File, Line: d.Bucket.Where.Line, Col: d.Bucket.Where.Col, Path: "token_bucket.fill_interval",
					Msg: fmt.Sprintf("%s: local rate descriptor limit is not a multiple of token bucket fill timer (%s), which envoy before 1.31 refuses",
						scenarios.DurationText(d.Bucket.FillInterval), scenarios.DurationText(row.scope.Bucket.FillInterval))}
			}
		}
	}
	return nil
}

// scopeComment is the comment lines of a scope: where it is, and what of
// it the rows do not model.
func (l *EnvoyLocal) scopeComment(base string, s *LocalScope) []string {
	head := fmt.Sprintf("%s:%d: local_ratelimit of %s (stat_prefix %s)", base, s.Where.Line, s.Name, s.StatPrefix)
	if s.Enabled.none() {
		what := "unset (envoy's default: 0%)"
		if s.Enabled.Set {
			what = s.Enabled.String()
		}
		return []string{head + ": filter_enabled " + what + ": the filter passes every request (no row)"}
	}
	lines := []string{head + "; rejects with " + s.Status}
	if !s.Enabled.all() {
		lines = append(lines, "  filter_enabled "+s.Enabled.String()+": envoy checks only that share of the requests; the rows check all")
	}
	switch {
	case s.Enforced.none():
		what := "unset (envoy's default: 0%)"
		if s.Enforced.Set {
			what = s.Enforced.String()
		}
		lines = append(lines, "  filter_enforced "+what+": envoy takes the tokens but passes every request (it only",
			"  counts it as rate limited); the rows reject as if enforced")
	case !s.Enforced.all():
		lines = append(lines, "  filter_enforced "+s.Enforced.String()+": envoy rejects only that share of the requests it limits; the rows reject all")
	}
	if s.PerConnection {
		lines = append(lines, "  local_rate_limit_per_downstream_connection: each connection has its own buckets")
	}
	if s.LocalCluster {
		lines = append(lines, "  local_cluster_rate_limit: envoy shares each bucket's tokens among the instances of",
			"  its local cluster; the rows are the whole limit, as one envoy would enforce it")
	}
	if s.Bucket == nil {
		lines = append(lines, "  no token_bucket: only requests that match a descriptor are limited here")
	}
	return lines
}

// addRow adds one row: a token-bucket, or an all-of in-order, then, when
// split is not nil (--split-limits), a row per bucket of an all-of (labels
// unique in split); each bucket counts by its own key (kb).
func (l *EnvoyLocal) addRow(im *Import, base string, row localRow, discrete bool, split labels, kb localBy) {
	if len(row.descs) == 0 {
		e := byEntry(bucketEntry(*row.scope.Bucket, discrete), kb.by(nil), true)
		e.Label = str(row.label)
		im.note(bucketComment(base, "the default bucket", *row.scope.Bucket))
		im.row(e)
		return
	}
	for _, d := range row.descs {
		if d.ShadowMode {
			im.note("  descriptor "+d.Path()+" is in shadow_mode: envoy takes its token but never rejects for it;",
				"  the row rejects as if it did")
		}
		for _, e := range d.Entries {
			if e.Value == "" {
				im.note("  entry "+e.Key+" has no value: recent envoys keep a bucket per value of "+e.Key+" (up to",
					"  max_dynamic_descriptors, least recently used evicted, not modelled)")
			}
		}
	}
	if len(row.descs) == 1 && !row.dflt {
		d := row.descs[0]
		e := byEntry(bucketEntry(d.Bucket, discrete), kb.by(d), true)
		e.Label = str(row.label)
		im.note(bucketComment(base, "descriptor "+d.Path(), d.Bucket))
		im.row(e)
		return
	}
	note := keyNote
	if kb.ok {
		note = func(iter.Seq[Key]) []string { return nil } // each bucket by its own key
	}
	im.note(note(func(yield func(Key) bool) {
		for _, d := range row.descs {
			for _, k := range localDescKeys(d) {
				if !yield(k) {
					return
				}
			}
		}
		if row.dflt {
			yield(Key{Kind: KeyGlobal})
		}
	})...)
	i := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str(row.label), Commit: str("in-order")})
	for _, d := range row.descs {
		im.member(i, byEntry(bucketEntry(d.Bucket, discrete), kb.by(d), false), bucketComment(base, "descriptor "+d.Path(), d.Bucket))
	}
	if row.dflt {
		im.member(i, byEntry(bucketEntry(*row.scope.Bucket, discrete), kb.by(nil), false), bucketComment(base, "then the default bucket (always_consume_default_token_bucket)", *row.scope.Bucket))
	}
	if split == nil {
		return
	}
	var members []splitMember
	for _, d := range row.descs {
		members = append(members, splitMember{label: "(" + d.Path() + " alone)", entry: byEntry(bucketEntry(d.Bucket, discrete), kb.by(d), true),
			comment: []string{bucketComment(base, "descriptor "+d.Path(), d.Bucket)}})
	}
	if row.dflt {
		members = append(members, splitMember{label: "(default bucket alone)", entry: byEntry(bucketEntry(*row.scope.Bucket, discrete), kb.by(nil), true),
			comment: []string{bucketComment(base, "the default bucket", *row.scope.Bucket)}})
	}
	im.splitRows(split, row.label, []string{
		"--split-limits: each bucket above on its own (it takes a token whenever it has",
		"one, whatever the others hold), to compare with the all-of row",
	}, members, nil)
}

// bucketComment is the comment line of a bucket: where it is and what it
// holds.
func bucketComment(base, what string, t LocalBucket) string {
	return fmt.Sprintf("%s:%d: %s: max_tokens %d, tokens_per_fill %d, fill_interval %s",
		base, t.Where.Line, what, t.MaxTokens, t.TokensPerFill, scenarios.DurationText(t.FillInterval))
}

// bucketEntry is a bucket's token-bucket row: rate and per for a
// continuous refill, fill-interval and tokens-per-fill for a discrete one;
// burst is max_tokens.
func bucketEntry(t LocalBucket, discrete bool) scenarios.AlgEntry {
	e := scenarios.AlgEntry{Name: str("token-bucket"), Burst: scenarios.IntOf(t.MaxTokens)}
	if discrete {
		e.FillInterval, e.TokensPerFill = scenarios.DurationOf(scenarios.DurationText(t.FillInterval)), scenarios.IntOf(t.TokensPerFill)
		return e
	}
	e.Rate, e.Per = scenarios.IntOf(t.TokensPerFill), scenarios.DurationOf(scenarios.DurationText(t.FillInterval))
	return e
}

// Keys returns what the rows o.Scope picks count by, each once, in order:
// one key for every request (each envoy's bucket), or the downstream
// connection with local_rate_limit_per_downstream_connection, and for a
// descriptor entry without a value its descriptor key (see envoyKey).
func (l *EnvoyLocal) Keys(o Options) ([]Key, error) {
	discrete, err := ParseEnvoyVersion(o.EnvoyVersion)
	if err != nil {
		return nil, err
	}
	rows, err := l.pick(o.Scope, discrete)
	if err != nil {
		return nil, err
	}
	var keys []Key
	add := func(k Key) { keys = addKey(keys, k) }
	for _, row := range rows {
		s := row.scope
		if s.PerConnection {
			add(Key{Kind: KeyOther, Name: "the downstream connection (local_rate_limit_per_downstream_connection)", Where: s.Where})
			continue
		}
		global := row.dflt
		for _, d := range row.descs {
			for _, k := range localDescKeys(d) {
				if k.Kind == KeyGlobal {
					global = true
				} else {
					add(k)
				}
			}
		}
		if global {
			add(Key{Kind: KeyGlobal, Where: s.Where})
		}
	}
	return keys, nil
}

// localDescKeys returns the keys of a descriptor's bucket: one per entry
// without a value (a bucket per value), or the global key when every
// entry has one.
func localDescKeys(d *LocalDescriptor) []Key {
	var keys []Key
	for _, e := range d.Entries {
		if e.Value == "" {
			keys = append(keys, envoyKey(e.Key, d.Where))
		}
	}
	if len(keys) == 0 {
		keys = append(keys, Key{Kind: KeyGlobal, Where: d.Where})
	}
	return keys
}

// unknownField is the message for a field that is not one of fields.
func unknownField(fields []string) func(string) string {
	return func(string) string { return "unknown field (want one of " + strings.Join(fields, ", ") + ")" }
}
