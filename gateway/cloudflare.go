package gateway

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// Cloudflare is a zone's rate limiting rules as Cloudflare's API returns
// them (developers.cloudflare.com, "Rate limiting rules": "Create via API"
// and the rule parameters): the http_ratelimit phase's ruleset, as
// GET .../rulesets/phases/http_ratelimit/entrypoint prints it ({"result":
// ruleset}) or the ruleset alone.
type Cloudflare struct {
	File  string
	Rules []*CloudflareRule
}

// CloudflareRule is one rule: its ratelimit parameters and what its
// characteristics count by.
type CloudflareRule struct {
	ID, Description string
	Where           Pos
	Action          string
	// Requests per Period (whole seconds); Timeout is mitigation_timeout
	// (0: throttle, no block).
	Requests int64
	Period   time.Duration
	Timeout  time.Duration
	// Chars are the characteristics besides cf.colo.id, as written.
	Chars []string
	Key   Key
	Notes []string
}

// Name labels the rule's row: its description, else its id, else its
// index.
func (r *CloudflareRule) name(i int) string {
	switch {
	case r.Description != "":
		return r.Description
	case r.ID != "":
		return r.ID
	}
	return fmt.Sprintf("rule-%d", i+1)
}

// ReadCloudflare reads a rate limiting ruleset. Each rule needs a
// ratelimit with characteristics (cf.colo.id among them, as Cloudflare
// requires), a period and requests_per_period; complexity-based rules
// (score_per_period) and an unknown characteristic are errors naming
// file:line:col.
func ReadCloudflare(file string, data []byte) (*Cloudflare, error) {
	root, err := readYAML(file, data)
	if err != nil {
		return nil, err
	}
	if err := root.mappingOf("a ruleset, or the API's answer {\"result\": ruleset}", nil, nil); err != nil {
		return nil, err
	}
	rs := root
	if r := root.get("result"); r != nil {
		rs = r
		if err := rs.mappingOf("a ruleset", nil, nil); err != nil {
			return nil, err
		}
	}
	if ph := rs.get("phase"); ph != nil {
		p, err := ph.str()
		if err != nil {
			return nil, err
		}
		if p != "http_ratelimit" {
			return nil, ph.errAt("%q: want the http_ratelimit phase's ruleset (rate limiting rules)", p)
		}
	}
	rv := rs.at("rules")
	if rv.isNull() {
		return nil, rv.errAt("no rules: want the ruleset of a zone's rate limiting rules")
	}
	rules, err := rv.listOf("a list of rules")
	if err != nil {
		return nil, err
	}
	cf := &Cloudflare{File: file}
	base := filepath.Base(file)
	for _, t := range rules {
		r, err := readCloudflareRule(base, t)
		if err != nil {
			return nil, err
		}
		if r != nil {
			cf.Rules = append(cf.Rules, r)
		}
	}
	if len(cf.Rules) == 0 {
		return nil, rv.errAt("no enabled rate limiting rule")
	}
	return cf, nil
}

func readCloudflareRule(base string, t *tree) (*CloudflareRule, error) {
	if err := t.mappingOf("a rule", nil, nil); err != nil {
		return nil, err
	}
	r := &CloudflareRule{Where: t.pos}
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &r.ID}, {"description", &r.Description}, {"action", &r.Action}} {
		if v := t.get(f.key); !v.isNull() {
			if *f.dst, err = v.str(); err != nil {
				return nil, err
			}
		}
	}
	if v := t.get("enabled"); v != nil {
		on, err := v.boolOr(true)
		if err != nil {
			return nil, err
		}
		if !on {
			return nil, nil // a disabled rule limits nothing
		}
	}
	note := func(line int, format string, args ...any) {
		r.Notes = append(r.Notes, fmt.Sprintf("%s:%d: ", base, line)+fmt.Sprintf(format, args...))
	}
	switch r.Action {
	case "block", "":
	case "log":
		note(t.keyPos("action").Line, "action log: the rule only logs; modelled as blocking")
	default:
		note(t.keyPos("action").Line, "action %s: a challenge, modelled as a block (a solved challenge passes)", r.Action)
	}
	if v := t.get("expression"); !v.isNull() {
		if e, err := v.str(); err != nil {
			return nil, err
		} else if e != "true" && e != "" {
			note(v.pos.Line, "expression %s: the rule applies to the requests it matches; the traffic here is taken to match", strconv.Quote(e))
		}
	}
	rl := t.at("ratelimit")
	if rl.isNull() {
		return nil, rl.errAt("missing: a rate limiting rule needs ratelimit {characteristics, period, requests_per_period}")
	}
	if err := rl.mappingOf("the rule's ratelimit", nil, nil); err != nil {
		return nil, err
	}
	if v := rl.get("score_per_period"); !v.isNull() {
		return nil, v.errAt("complexity-based rate limiting (score_per_period) is not modelled")
	}
	if v := rl.get("counting_expression"); !v.isNull() {
		if e, err := v.str(); err != nil {
			return nil, err
		} else if e != "" {
			note(v.pos.Line, "counting_expression %s: counts the requests it matches; here every request of the rule counts", strconv.Quote(e))
		}
	}
	if v := rl.get("requests_to_origin"); !v.isNull() {
		if on, err := v.boolean(); err != nil {
			return nil, err
		} else if on {
			note(v.pos.Line, "requests_to_origin: counts only requests that reach the origin (not cached); every request counts here")
		}
	}
	cv := rl.at("characteristics")
	if cv.isNull() {
		return nil, cv.errAt("missing: want the characteristics a rule counts by, e.g. [\"cf.colo.id\", \"ip.src\"]")
	}
	chars, err := cv.listOf("a list of characteristics")
	if err != nil {
		return nil, err
	}
	colo := false
	for _, c := range chars {
		s, err := c.str()
		if err != nil {
			return nil, err
		}
		if s == "cf.colo.id" {
			colo = true
			continue
		}
		if !cloudflareChar(s) {
			return nil, c.errAt("%q: a characteristic not modelled (want ip.src, http.request.headers[\"NAME\"], http.request.uri.path, or another that names the key)", s)
		}
		r.Chars = append(r.Chars, s)
	}
	if !colo {
		return nil, cv.errAt("no cf.colo.id: Cloudflare requires it among the characteristics (counters are per data center)")
	}
	r.Key = cloudflareKey(r.Chars, Pos{Line: cv.pos.Line, Col: cv.pos.Col})
	if r.Requests, err = positive(rl.at("requests_per_period"), "requests per period"); err != nil {
		return nil, err
	}
	p, err := positive(rl.at("period"), "seconds")
	if err != nil {
		return nil, err
	}
	r.Period = time.Duration(p) * time.Second
	if v := rl.get("mitigation_timeout"); !v.isNull() {
		m, err := v.integer()
		if err != nil {
			return nil, err
		}
		if m < 0 || m > 1<<30 {
			return nil, v.errAt("%d: want the seconds a key is blocked, 0 or more", m)
		}
		r.Timeout = time.Duration(m) * time.Second
	}
	return r, nil
}

// positive reads a whole number from 1 to 2^40.
func positive(t *tree, what string) (int64, error) {
	if t.isNull() {
		return 0, t.errAt("missing: want the %s, a whole number >= 1", what)
	}
	n, err := t.integer()
	if err != nil {
		return 0, err
	}
	if n < 1 || n > 1<<40 {
		return 0, t.errAt("%d: want the %s, a whole number from 1 to 2^40", n, what)
	}
	return n, nil
}

// cloudflareChar reports whether s is a characteristic the rows model as
// (part of) the key: the address, a header, the path, and the other
// fields Cloudflare lists (a cookie, a query argument, the host, the
// ASN, the JA3/JA4 fingerprints).
func cloudflareChar(s string) bool {
	switch s {
	case "ip.src", "ip.src.asnum", "http.host", "http.request.uri.path", "http.request.uri",
		"cf.unique_visitor_id", "cf.bot_management.ja3_hash", "cf.bot_management.ja4", "ip.geoip.country", "ip.src.country":
		return true
	}
	for _, p := range []string{"http.request.headers[", "http.request.cookies[", "http.request.uri.args[", "http.request.body.json[", "http.request.body.form["} {
		if strings.HasPrefix(s, p) && strings.HasSuffix(s, "]") {
			return true
		}
	}
	return false
}

// cloudflareKey is what a rule with characteristics chars counts by.
func cloudflareKey(chars []string, where Pos) Key {
	switch {
	case len(chars) == 0:
		return Key{Kind: KeyGlobal, Where: where}
	case len(chars) > 1:
		return Key{Kind: KeyOther, Name: strings.Join(chars, " + "), Where: where}
	case chars[0] == "ip.src":
		return Key{Kind: KeyAddr, Where: where}
	}
	if h, ok := strings.CutPrefix(chars[0], "http.request.headers["); ok {
		if name, err := strconv.Unquote(strings.TrimSuffix(h, "]")); err == nil {
			return Key{Kind: KeyHeader, Name: strings.ToLower(name), Where: where}
		}
	}
	return Key{Kind: KeyOther, Name: chars[0], Where: where}
}

// Scenario makes each rule a cloudflare-rate-limit row: requests per
// period, the mitigation timeout, the key its characteristics make, one
// data center's counters.
func (c *Cloudflare) Scenario(o Options) (*Import, error) {
	rules, names, err := c.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(c.File)
	im := newImport(base, "The rate limiting rules of "+base+".",
		"Imported from "+base+" by ratesim import --from cloudflare: one cloudflare-rate-limit",
		"row per rule, counting the requests of each value of its characteristics (the key)",
		"in one data center (cf.colo.id: Cloudflare's counters are not shared).")
	first := rules[0]
	im.File.Limit = limit(first.Requests, scenarios.DurationText(first.Period))
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(max(time.Minute, 3*first.Period, first.Period+first.Timeout)))
	for i, r := range rules {
		im.note(append([]string{fmt.Sprintf("%s:%d: requests_per_period %d, period %d, mitigation_timeout %d; key %s",
			base, r.Where.Line, r.Requests, int64(r.Period/time.Second), int64(r.Timeout/time.Second), r.Key.String())}, r.Notes...)...)
		e := scenarios.AlgEntry{Name: str("cloudflare-rate-limit"), Label: str(names[i]), Rate: scenarios.IntOf(r.Requests),
			Per: scenarios.DurationOf(scenarios.DurationText(r.Period))}
		if r.Timeout > 0 {
			e.MitigationTimeout = scenarios.DurationOf(scenarios.DurationText(r.Timeout))
		}
		im.row(e)
	}
	if len(rules) > 1 {
		im.note("NOTE: Cloudflare applies every matching rule to a request; each row here is one rule alone.")
	}
	im.placeholderTraffic(2*first.Requests, scenarios.DurationText(first.Period))
	return im, nil
}

// pick returns the rules scope names (all for "") and their labels.
func (c *Cloudflare) pick(scope string) ([]*CloudflareRule, []string, error) {
	var rules []*CloudflareRule
	var names, all []string
	seen := map[string]bool{}
	for i, r := range c.Rules {
		n := r.name(i)
		if seen[n] {
			n = fmt.Sprintf("%s #%d", n, i+1) // labels are unique
		}
		seen[n] = true
		all = append(all, strconv.Quote(n))
		if scope == "" || n == scope {
			rules, names = append(rules, r), append(names, n)
		}
	}
	if len(rules) == 0 {
		return nil, nil, fmt.Errorf("--scope %q: no rule of %s has that description or id (its rules: %s)", scope, c.File, strings.Join(all, ", "))
	}
	return rules, names, nil
}

// Keys returns what the rules scope picks count by, each once.
func (c *Cloudflare) Keys(o Options) ([]Key, error) {
	rules, _, err := c.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, r := range rules {
		dup := false
		for _, k := range keys {
			dup = dup || k.Kind == r.Key.Kind && k.Name == r.Key.Name
		}
		if !dup {
			keys = append(keys, r.Key)
		}
	}
	return keys, nil
}

func guessCloudflare(_ string, data []byte) bool {
	s := string(data)
	return strings.Contains(s, `"requests_per_period"`) || strings.Contains(s, `"http_ratelimit"`)
}
