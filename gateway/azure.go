package gateway

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// Azure is an Azure API Management policy document read: its rate-limit
// and rate-limit-by-key policies (learn.microsoft.com, "Limit call rate
// by subscription" and "Limit call rate by key"), wherever they sit in
// <policies>.
type Azure struct {
	File   string
	Limits []*AzureLimit
}

// AzureLimit is one rate-limit or rate-limit-by-key element.
type AzureLimit struct {
	Kind  string // rate-limit or rate-limit-by-key
	Where Pos
	Calls int64
	// Period is renewal-period, whole seconds up to 300.
	Period time.Duration
	// Increment says whether the element has an increment-condition (the
	// counter increased once the response is known).
	Increment bool
	Key       Key
	Notes     []string
	// Inbound says whether the element sits directly in <inbound>, so
	// that it applies to every request (not in a <choose> branch).
	Inbound bool
}

// Name labels the row: its kind and line.
func (l *AzureLimit) Name() string { return fmt.Sprintf("%s-%d", l.Kind, l.Where.Line) }

var (
	azureHeaderKey = regexp.MustCompile(`^@\(context\.Request\.Headers\.GetValueOrDefault\("([^"]+)"(?:\s*,\s*"[^"]*")?\)\)$`)
	azureAddrKey   = regexp.MustCompile(`^@\(context\.Request\.IpAddress\)$`)
	azureIntAttr   = regexp.MustCompile(`^[0-9]+$`)
)

// ReadAzure reads an APIM policy document. A counter-key is a constant,
// the caller's address (@(context.Request.IpAddress)) or a header
// (@(context.Request.Headers.GetValueOrDefault("X", ...))); another policy
// expression, a calls or renewal-period that is not a number, and the
// per-API or per-operation children of rate-limit are errors naming
// file:line:col.
func ReadAzure(file string, data []byte) (*Azure, error) {
	root, err := parseApigeeXML(file, data)
	if err != nil {
		return nil, err
	}
	az := &Azure{File: file}
	base := filepath.Base(file)
	var walk func(n, parent *apigeeNode) error
	walk = func(n, parent *apigeeNode) error {
		if n.name == "rate-limit" || n.name == "rate-limit-by-key" {
			l, err := readAzureLimit(file, base, n)
			if err != nil {
				return err
			}
			l.Inbound = parent != nil && parent.name == "inbound"
			az.Limits = append(az.Limits, l)
			return nil
		}
		for _, c := range n.children {
			if err := walk(c, n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil); err != nil {
		return nil, err
	}
	if len(az.Limits) == 0 {
		return nil, &Error{File: file, Line: root.line, Col: root.col, Msg: "no rate-limit or rate-limit-by-key policy"}
	}
	if az.inOrder() {
		// An increment-condition counts the request once the response is
		// known; when a later limit refuses it, that response is the later
		// limit's 429, which the condition (typically a 2xx status) would
		// not count, whereas the all-of counts it as admitted.
		for _, l := range az.Limits[:len(az.Limits)-1] {
			if l.Increment {
				return nil, &Error{File: file, Line: l.Where.Line, Col: l.Where.Col, Msg: l.Kind +
					": increment-condition on a limit that another limit after it may refuse: whether the refused request counts depends on the condition read on that 429, which is not modelled"}
			}
		}
	}
	return az, nil
}

// inOrder reports whether the limits are several, all directly in
// <inbound>: each request then meets every one, in document order.
func (a *Azure) inOrder() bool {
	if len(a.Limits) < 2 {
		return false
	}
	for _, l := range a.Limits {
		if !l.Inbound {
			return false
		}
	}
	return true
}

func readAzureLimit(file, base string, n *apigeeNode) (*AzureLimit, error) {
	at := func(format string, args ...any) error {
		return &Error{File: file, Line: n.line, Col: n.col, Msg: n.name + ": " + fmt.Sprintf(format, args...)}
	}
	l := &AzureLimit{Kind: n.name, Where: Pos{Line: n.line, Col: n.col}}
	if len(n.children) > 0 {
		c := n.children[0]
		return nil, &Error{File: file, Line: c.line, Col: c.col, Msg: fmt.Sprintf("<%s> inside %s: per-API and per-operation limits are not modelled", c.name, n.name)}
	}
	calls, period := n.attrs["calls"], n.attrs["renewal-period"]
	if !azureIntAttr.MatchString(calls) {
		return nil, at("calls=%q: want a whole number (a policy expression is not modelled)", calls)
	}
	if !azureIntAttr.MatchString(period) {
		return nil, at("renewal-period=%q: want a whole number of seconds (a policy expression is not modelled)", period)
	}
	c, _ := strconv.ParseInt(calls, 10, 64)
	s, _ := strconv.ParseInt(period, 10, 64)
	if c < 1 || s < 1 || s > 300 {
		return nil, at("calls %d, renewal-period %d: want calls >= 1 and a renewal-period from 1 to 300 seconds", c, s)
	}
	l.Calls, l.Period = c, time.Duration(s)*time.Second
	note := func(format string, args ...any) {
		l.Notes = append(l.Notes, fmt.Sprintf("%s:%d: ", base, n.line)+fmt.Sprintf(format, args...))
	}
	if _, ok := n.attrs["increment-condition"]; ok {
		l.Increment = true
		note("increment-condition %s: counted once the response is known (taken as true for every admitted request)", n.attrs["increment-condition"])
	}
	if ic, ok := n.attrs["increment-count"]; ok && ic != "1" {
		note("increment-count %s: the traffic's cost", ic)
	}
	where := Pos{Line: n.line, Col: n.col}
	switch {
	case n.name == "rate-limit":
		l.Key = Key{Kind: KeyOther, Name: "the subscription", Where: where}
	default:
		key, ok := n.attrs["counter-key"]
		switch {
		case !ok:
			return nil, at("no counter-key (it is required)")
		case azureAddrKey.MatchString(key):
			l.Key = Key{Kind: KeyAddr, Where: where}
		case azureHeaderKey.MatchString(key):
			l.Key = Key{Kind: KeyHeader, Name: strings.ToLower(azureHeaderKey.FindStringSubmatch(key)[1]), Where: where}
		case strings.HasPrefix(key, "@"):
			return nil, at("counter-key=%q: a policy expression other than the address or a header is not modelled", key)
		default:
			l.Key = Key{Kind: KeyGlobal, Where: where}
		}
	}
	return l, nil
}

// Scenario makes each limit an azure-rate-limit row (the classic tiers'
// sliding window; the comment names tier v2), labelled by its kind and
// line.
func (a *Azure) Scenario(o Options) (*Import, error) {
	lims, err := a.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(a.File)
	if o.Scope == "" && a.inOrder() {
		return a.allOf(base), nil
	}
	im := newImport(base, "The rate limits of "+base+".",
		"Imported from "+base+" by ratesim import --from azure: one row per rate-limit or",
		"rate-limit-by-key, a sliding window as in the classic tiers (write tier: v2",
		"for the v2 tiers' token bucket), each gateway counting alone.")
	first := lims[0]
	im.File.Limit = limit(first.Calls, scenarios.DurationText(first.Period))
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(max(10*time.Second, 3*first.Period)))
	for _, l := range lims {
		im.note(append([]string{fmt.Sprintf("%s:%d: %s calls=%d renewal-period=%d; key %s",
			base, l.Where.Line, l.Kind, l.Calls, int64(l.Period/time.Second), l.Key.String())}, l.Notes...)...)
		e := scenarios.AlgEntry{Name: str("azure-rate-limit"), Label: str(l.Name()), Rate: scenarios.IntOf(l.Calls), Per: scenarios.DurationOf(scenarios.DurationText(l.Period))}
		if l.Increment {
			e.IncrementCond = scenarios.BoolOf(true)
		}
		im.row(e)
	}
	if len(lims) > 1 {
		im.note("NOTE: APIM applies these limits one after the other to each request; each row here is one of them alone.")
	}
	im.placeholderTraffic(2*first.Calls, scenarios.DurationText(first.Period))
	return im, nil
}

// allOf writes the limits, several in <inbound>, as one all-of row with
// commit in-order: API Management runs a section's policies in document
// order (the parent scope's where <base /> stands), each rate-limit
// counting the request as it admits it, and the first that refuses
// answers 429 without running the rest (learn.microsoft.com, "How to set
// or edit Azure API Management policies", and "Limit call rate by key").
// Each member is labelled by its element and file:line, so that outputs
// name the limit that fired; one counting by another key than the request's
// (the first limit's that is not a constant) counts by it (by:).
func (a *Azure) allOf(base string) *Import {
	lims := a.Limits
	first := lims[0]
	im := newImport(base, "The rate limits of "+base+", applied in order.",
		"Imported from "+base+" by ratesim import --from azure: one all-of row, commit",
		"in-order, of its rate-limit and rate-limit-by-key policies, as APIM applies them",
		"to each request one after the other; each a sliding window as in the classic",
		"tiers (write tier: v2 on a limit for the v2 tiers' token bucket).")
	im.File.Limit = limit(first.Calls, scenarios.DurationText(first.Period))
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(max(10*time.Second, 3*first.Period)))
	var keys []Key
	for _, l := range lims {
		keys = append(keys, l.Key)
	}
	primary, hasPrimary := primaryOf(keys)
	im.note("APIM applies these limits in this order to each request; the first that refuses answers 429",
		"and the later ones do not count it (commit in-order)")
	row := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str("inbound"), Commit: str("in-order")})
	for _, l := range lims {
		e := scenarios.AlgEntry{Name: str("azure-rate-limit"), Label: str(fmt.Sprintf("%s (%s:%d)", l.Kind, base, l.Where.Line)),
			Rate: scenarios.IntOf(l.Calls), Per: scenarios.DurationOf(scenarios.DurationText(l.Period))}
		if l.Increment {
			e.IncrementCond = scenarios.BoolOf(true)
		}
		lines := append([]string{fmt.Sprintf("%s:%d: %s calls=%d renewal-period=%d; key %s",
			base, l.Where.Line, l.Kind, l.Calls, int64(l.Period/time.Second), l.Key.String())}, l.Notes...)
		if by := azureBy(l.Key, primary, hasPrimary); by != "" {
			e.By = str(by)
			lines = append(lines, byNote(by))
		}
		im.member(row, e, lines...)
	}
	im.placeholderTraffic(2*first.Calls, scenarios.DurationText(first.Period))
	im.attributes()
	return im
}

// azureBy is byOf, rate-limit's subscription counting by the attribute
// subscription.
func azureBy(k, primary Key, ok bool) string {
	if by := byOf(k, primary, ok); by == "" || k.Kind != KeyOther {
		return by
	}
	return "subscription"
}

func (a *Azure) pick(scope string) ([]*AzureLimit, error) {
	if scope == "" {
		return a.Limits, nil
	}
	var names []string
	for _, l := range a.Limits {
		if l.Name() == scope {
			return []*AzureLimit{l}, nil
		}
		names = append(names, strconv.Quote(l.Name()))
	}
	return nil, fmt.Errorf("--scope %q: no scope of %s has that name (its scopes: %s)", scope, a.File, strings.Join(names, ", "))
}

// Keys returns the counter keys of the limits scope picks, each once.
func (a *Azure) Keys(o Options) ([]Key, error) {
	lims, err := a.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, l := range lims {
		dup := false
		for _, k := range keys {
			dup = dup || k.Kind == l.Key.Kind && k.Name == l.Key.Name
		}
		if !dup {
			keys = append(keys, l.Key)
		}
	}
	return keys, nil
}

func guessAzure(_ string, data []byte) bool {
	s := string(data)
	return strings.Contains(s, "<policies") && (strings.Contains(s, "<rate-limit ") || strings.Contains(s, "<rate-limit-by-key"))
}
