package gateway

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// Traefik is what a Traefik dynamic configuration (YAML or TOML) limits:
// its rateLimit middlewares, and the routers that use them.
type Traefik struct {
	File   string
	Scopes []*TraefikScope
	// Unlimited are the middlewares whose average is 0 (or below): no
	// limit, as Traefik reads them.
	Unlimited []*TraefikLimit
	// routers is http.routers, which route_traefik.go reads the rules of
	routers *tree
}

// TraefikScope is a router with one rateLimit middleware it uses, or a
// rateLimit middleware that no router of the file uses (Router "").
type TraefikScope struct {
	Router string
	Limit  *TraefikLimit
	Where  Pos // the router (or the middleware)
	// Others is how many other rateLimit middlewares the router also uses.
	Others int
}

// Name is the scope's name as --scope and the rows' labels spell it: the
// router's name (ROUTER/MIDDLEWARE when the router uses several
// rateLimit middlewares), or the middleware's when no router uses it.
func (s *TraefikScope) Name() string {
	switch {
	case s.Router == "":
		return s.Limit.Middleware
	case s.Others > 0:
		return s.Router + "/" + s.Limit.Middleware
	}
	return s.Router
}

// TraefikLimit is one rateLimit middleware, with the values Traefik
// derives from it (pkg/middlewares/ratelimiter/rate_limiter.go, New).
type TraefikLimit struct {
	Middleware string
	Where      Pos
	Average    int64
	Period     time.Duration // default 1s
	Burst      int64         // max(burst, 1); burst defaults to 1
	BurstText  string        // as written, "" when not
	// MaxDelay is Traefik's: 1s/(2*int(r)) for r = average/period >= 1
	// request per second, 500ms below.
	MaxDelay time.Duration
	// TTL is how long an idle source's bucket is kept (ttlmap, whole
	// seconds): 2s for r >= 1, 1 + int(1/r) seconds below.
	TTL time.Duration
	// Key: "" (the client address: RemoteAddr, Traefik's default),
	// "header NAME", "host", or "X-Forwarded-For ..." for an ipStrategy
	// with depth or excludedIPs.
	Key   string
	Redis bool
}

// ReadTraefik reads the rateLimit middlewares of a Traefik dynamic
// configuration (http.middlewares.NAME.rateLimit: average, period, burst,
// sourceCriterion, redis) and the routers that use them
// (http.routers.NAME.middlewares, NAME or NAME@file, through chain
// middlewares too). A .toml file is read as TOML, anything else as YAML
// (or JSON).
//
// Refused, with file:line:col: an unknown field in rateLimit or its
// sourceCriterion, a value Traefik refuses (a negative period, several
// source criteria at once), and a file with no rate limit at all (every
// average 0 says so).
func ReadTraefik(file string, data []byte) (*Traefik, error) {
	var root *tree
	var err error
	if strings.EqualFold(filepath.Ext(file), ".toml") {
		root, err = readTOML(file, data)
	} else {
		root, err = readYAML(file, data)
	}
	if err != nil {
		return nil, err
	}
	if err := root.mapping("a mapping (a dynamic configuration: http.routers, http.middlewares)"); err != nil {
		return nil, err
	}
	t := &Traefik{File: file}
	http := root.get("http")
	var mws *tree
	if http != nil {
		if err := http.mapping("a mapping (routers, middlewares, services)"); err != nil {
			return nil, err
		}
		mws = http.get("middlewares")
	}
	limits := map[string]*TraefikLimit{}
	chains := map[string][]string{}
	var order []*TraefikLimit
	if mws != nil {
		if err := mws.mapping("a mapping of middlewares by name"); err != nil {
			return nil, err
		}
		for _, f := range mws.fields {
			if err := f.val.mapping("a middleware (a mapping)"); err != nil {
				return nil, err
			}
			if ch := f.val.get("chain"); ch != nil {
				if names := ch.get("middlewares"); names != nil && names.kind == treeList {
					for _, n := range names.items {
						if s, err := n.str(); err == nil {
							chains[f.key] = append(chains[f.key], s)
						}
					}
				}
			}
			rl := f.val.get("rateLimit")
			if rl == nil {
				continue
			}
			l, err := readRateLimit(f.key, f.keyPos, rl)
			if err != nil {
				return nil, err
			}
			if l.Average <= 0 {
				t.Unlimited = append(t.Unlimited, l)
				continue
			}
			limits[f.key] = l
			order = append(order, l)
		}
	}
	if len(order) == 0 {
		msg := "no rate limits at all: the config has no http.middlewares.NAME.rateLimit"
		if len(t.Unlimited) > 0 {
			msg = "no rate limits at all: every rateLimit's average is 0, which Traefik reads as no limit"
		}
		return nil, &Error{File: file, Msg: msg}
	}
	used := map[*TraefikLimit]bool{}
	if http != nil {
		if routers := http.get("routers"); routers != nil {
			if err := routers.mapping("a mapping of routers by name"); err != nil {
				return nil, err
			}
			t.routers = routers
			for _, f := range routers.fields {
				var mine []*TraefikLimit
				if m := f.val.get("middlewares"); m != nil {
					if err := m.list("a list of middleware names"); err != nil {
						return nil, err
					}
					for _, n := range m.items {
						s, err := n.str()
						if err != nil {
							return nil, err
						}
						mine = appendLimits(mine, s, limits, chains, 0)
					}
				}
				for _, l := range mine {
					used[l] = true
					t.Scopes = append(t.Scopes, &TraefikScope{Router: f.key, Limit: l, Where: f.keyPos, Others: len(mine) - 1})
				}
			}
		}
	}
	for _, l := range order {
		if !used[l] {
			t.Scopes = append(t.Scopes, &TraefikScope{Limit: l, Where: l.Where})
		}
	}
	return t, nil
}

// appendLimits adds the rateLimit middlewares that the middleware name
// (NAME or NAME@file; another provider's is not in this file) is or
// holds, through chains.
func appendLimits(out []*TraefikLimit, name string, limits map[string]*TraefikLimit, chains map[string][]string, depth int) []*TraefikLimit {
	if base, provider, ok := strings.Cut(name, "@"); ok {
		if provider != "file" {
			return out
		}
		name = base
	}
	if l := limits[name]; l != nil {
		for _, have := range out {
			if have == l {
				return out
			}
		}
		return append(out, l)
	}
	if depth < 16 {
		for _, n := range chains[name] {
			out = appendLimits(out, n, limits, chains, depth+1)
		}
	}
	return out
}

// readRateLimit reads one rateLimit as Traefik's dynamic.RateLimit
// (SetDefaults: burst 1, period 1s) and ratelimiter.New derive it.
func readRateLimit(name string, at Pos, rl *tree) (*TraefikLimit, error) {
	if err := rl.mapping("a rateLimit (a mapping)", "average", "period", "burst", "sourceCriterion", "redis"); err != nil {
		return nil, err
	}
	l := &TraefikLimit{Middleware: name, Where: at, Period: time.Second, Burst: 1}
	if v := rl.get("average"); v != nil {
		n, err := v.integer()
		if err != nil {
			return nil, err
		}
		if n > math.MaxInt64/int64(time.Second) {
			return nil, v.errAt("%d: too large (Traefik computes average*1e9 in an int64)", n)
		}
		l.Average = n
	}
	if v := rl.get("period"); v != nil {
		d, err := traefikDuration(v)
		if err != nil {
			return nil, err
		}
		if d < 0 {
			return nil, v.errAt("negative value not valid for period: %v", d)
		}
		if d > 0 {
			l.Period = d
		}
	}
	if v := rl.get("burst"); v != nil {
		n, err := v.integer()
		if err != nil {
			return nil, err
		}
		l.BurstText = v.text
		l.Burst = max(n, 1)
	}
	if v := rl.get("sourceCriterion"); v != nil {
		key, err := sourceCriterion(v)
		if err != nil {
			return nil, err
		}
		l.Key = key
	}
	l.Redis = rl.get("redis") != nil
	if l.Average > 0 {
		// rate_limiter.go, New: rtl = float64(average*1e9) / float64(period)
		rtl := float64(l.Average*int64(time.Second)) / float64(l.Period)
		if rtl < 1 {
			l.MaxDelay = 500 * time.Millisecond
			l.TTL = time.Duration(1+int(1/rtl)) * time.Second
		} else {
			l.MaxDelay = time.Second / (time.Duration(rtl) * 2)
			l.TTL = 2 * time.Second
		}
	}
	return l, nil
}

// traefikDuration reads a paerser types.Duration: an integer is seconds,
// a string a Go duration (or an integer of seconds).
func traefikDuration(v *tree) (time.Duration, error) {
	switch v.typ {
	case "integer":
		n, err := v.integer()
		if err != nil {
			return 0, err
		}
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, v.errAt("%d seconds: out of range", n)
		}
		return time.Duration(n) * time.Second, nil
	case "string":
		if n, err := strconv.ParseInt(v.text, 10, 64); err == nil && n <= math.MaxInt64/int64(time.Second) && n >= math.MinInt64/int64(time.Second) {
			return time.Duration(n) * time.Second, nil
		}
		d, err := time.ParseDuration(v.text)
		if err != nil {
			return 0, v.errAt("%q: not a duration (want e.g. 1s, 1m, 500ms, or a number of seconds)", v.text)
		}
		return d, nil
	}
	return 0, v.errAt("found %s, want a duration (e.g. 1s, 1m, or a number of seconds)", v.describe())
}

// sourceCriterion reads what a rateLimit groups requests by, as
// middlewares.GetSourceExtractor does: one of ipStrategy,
// requestHeaderName and requestHost (several are an error); none is the
// client address (RemoteAddr).
func sourceCriterion(v *tree) (string, error) {
	if err := v.mapping("a sourceCriterion (a mapping)", "ipStrategy", "requestHeaderName", "requestHost"); err != nil {
		return "", err
	}
	var ip, header, host bool
	key := ""
	if s := v.get("ipStrategy"); !s.isNull() {
		if err := s.mapping("an ipStrategy (a mapping)", "depth", "excludedIPs", "ipv6Subnet"); err != nil {
			return "", err
		}
		ip = true
		if d := s.get("depth"); d != nil {
			n, err := d.integer()
			if err != nil {
				return "", err
			}
			if n < 0 {
				return "", d.errAt("want a depth >= 0")
			}
			if n > 0 {
				key = fmt.Sprintf("X-Forwarded-For (the address at depth %d from the right)", n)
			}
		}
		if e := s.get("excludedIPs"); e != nil && key == "" {
			if err := e.list("a list of addresses or CIDRs"); err != nil {
				return "", err
			}
			if len(e.items) > 0 {
				key = "X-Forwarded-For (the first address from the right not in excludedIPs)"
			}
		}
	}
	if h := v.get("requestHeaderName"); h != nil {
		s, err := h.str()
		if err != nil {
			return "", err
		}
		if s != "" {
			header, key = true, "header "+s
		}
	}
	if h := v.get("requestHost"); h != nil {
		b, err := h.boolean()
		if err != nil {
			return "", err
		}
		if b {
			host, key = true, "host"
		}
	}
	switch {
	case ip && header:
		return "", v.errAt("iPStrategy and RequestHeaderName are mutually exclusive")
	case ip && host:
		return "", v.errAt("iPStrategy and RequestHost are mutually exclusive")
	case header && host:
		return "", v.errAt("requestHost and RequestHeaderName are mutually exclusive")
	}
	return key, nil
}

// Scenario makes the limits of t a ratesim scenario: one x-time-rate row
// per router and rateLimit middleware it uses (Traefik builds a
// middleware's limiter for each router that uses it, so each router has
// its own buckets), and one per middleware that no router uses, labelled
// by its name. A row is rate.NewLimiter(average/period, burst) with
// Traefik's max-delay and its idle TTL as idle-reset; each has comments
// naming the file and line of its router and middleware.
func (t *Traefik) Scenario(o Options) (*Import, error) {
	scopes, err := t.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(t.File)
	im := newImport(base, "The rateLimit middlewares of "+base+".",
		"Imported from "+base+" by ratesim import --from traefik: one row per router and",
		"rateLimit middleware it uses (each router has its own buckets), and one per",
		"rateLimit middleware no router uses. Each row is golang.org/x/time/rate, as",
		"Traefik runs it, with Traefik's max-delay and idle TTL.")
	first := scopes[0].Limit
	im.File.Limit = limit(first.Average, scenarios.DurationText(first.Period))
	im.File.Limit.Burst = scenarios.IntOf(first.Burst)
	dur := 2 * first.Period
	if dur < 10*time.Second {
		dur = 10 * time.Second
	}
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(dur))
	for _, l := range t.Unlimited {
		im.note(fmt.Sprintf("%s:%d: middleware %s: average %d: no limit (Traefik's rate is then infinite): no row", base, l.Where.Line, l.Middleware, l.Average))
	}
	for _, s := range scopes {
		l := s.Limit
		if s.Router != "" {
			where := fmt.Sprintf("%s:%d: router %s uses middleware %s (%s:%d)", base, s.Where.Line, s.Router, l.Middleware, base, l.Where.Line)
			if s.Others > 0 {
				where += fmt.Sprintf(", one of its %d rateLimit middlewares (each its own row; Traefik applies them in turn)", s.Others+1)
			}
			im.note(where)
		} else {
			im.note(fmt.Sprintf("%s:%d: middleware %s, which no router in %s uses", base, l.Where.Line, l.Middleware, base))
		}
		burst := fmt.Sprintf("burst %d", l.Burst)
		if l.BurstText == "" {
			burst = "burst 1 (the default)"
		} else if n, _ := strconv.ParseInt(l.BurstText, 10, 64); n < 1 {
			burst = fmt.Sprintf("burst %s, which Traefik raises to 1", l.BurstText)
		}
		how := fmt.Sprintf("average %d per period %s: rate %s/s, %s; ", l.Average, scenarios.DurationText(l.Period),
			strconv.FormatFloat(float64(l.Average*int64(time.Second))/float64(l.Period), 'g', -1, 64), burst)
		if l.MaxDelay == 500*time.Millisecond && float64(l.Average*int64(time.Second))/float64(l.Period) < 1 {
			how += "a request waits up to 500ms (rate below 1/s)"
		} else {
			how += fmt.Sprintf("a request waits up to 1s/(2*int(rate)) = %s", l.MaxDelay)
		}
		im.note(how + fmt.Sprintf(", else 429; a source idle for %s is forgotten (its bucket comes back full)", scenarios.DurationText(l.TTL)))
		if l.Key == "" {
			im.note("counts by the client address (Traefik's default, RemoteAddr)")
		} else {
			im.note("counts by " + l.Key)
		}
		if l.Redis {
			im.note("NOTE: redis is set: Traefik then keeps the buckets in Redis (its own script), which the row does not model: the row is the in-memory limiter")
		}
		im.row(scenarios.AlgEntry{Name: str("x-time-rate"), Label: str(s.Name()), Rate: scenarios.IntOf(l.Average),
			Per: scenarios.DurationOf(scenarios.DurationText(l.Period)), Burst: scenarios.IntOf(l.Burst),
			MaxDelay: scenarios.DurationOf(scenarios.DurationText(l.MaxDelay)), IdleReset: scenarios.DurationOf(scenarios.DurationText(l.TTL))})
	}
	im.placeholderTraffic(2*first.Average, rateUnit(scenarios.DurationText(first.Period)))
	return im, nil
}

// pick returns the scopes that scope names: all when "", else those whose
// name it is, else those of that router or middleware.
func (t *Traefik) pick(scope string) ([]*TraefikScope, error) {
	return pickNamed(t.Scopes, scope, t.File, "router or middleware", (*TraefikScope).Name,
		func(s *TraefikScope, name string) bool { return s.Router == name || s.Limit.Middleware == name })
}

// Keys returns what the middlewares of the scopes o picks count by, each
// once: the client address (Traefik's default), a header
// (requestHeaderName; requestHost is the header host), or, for an
// ipStrategy with depth or excludedIPs, KeyOther.
func (t *Traefik) Keys(o Options) ([]Key, error) {
	scopes, err := t.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, s := range scopes {
		l := s.Limit
		k := Key{Kind: KeyOther, Name: l.Key, Where: l.Where}
		switch {
		case l.Key == "":
			k.Kind = KeyAddr
		case l.Key == "host":
			k.Kind = KeyHeader
		case strings.HasPrefix(l.Key, "header "):
			k.Kind, k.Name = KeyHeader, strings.ToLower(strings.TrimPrefix(l.Key, "header "))
		}
		keys = addKey(keys, k)
	}
	return keys, nil
}
