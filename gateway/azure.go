package gateway

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// Azure is one or several Azure API Management policy documents read:
// their rate-limit and rate-limit-by-key policies (learn.microsoft.com,
// "Limit call rate by subscription" and "Limit call rate by key"),
// wherever they sit in <policies>. Several documents are the scopes of
// one operation, outermost first, joined where each writes <base />.
type Azure struct {
	// File is the (innermost) policy document's path.
	File   string
	Limits []*AzureLimit
	// Scopes are the documents read, outermost first; one with Scope ""
	// for a document read alone.
	Scopes []AzureFile
	// Notes say what the join left out (a scope without <base />).
	Notes []string
}

// AzureLimit is one rate-limit or rate-limit-by-key element.
type AzureLimit struct {
	Kind  string // rate-limit or rate-limit-by-key
	Where Pos
	// Scope is the policy scope of its document (AzureScopes), "" for a
	// document read alone.
	Scope string
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

// Name labels the row: its scope, kind and line.
func (l *AzureLimit) Name() string {
	if l.Scope != "" {
		return fmt.Sprintf("%s-%s-%d", l.Scope, l.Kind, l.Where.Line)
	}
	return fmt.Sprintf("%s-%d", l.Kind, l.Where.Line)
}

// label names the limit in an all-of: scope, element and file:line.
func (l *AzureLimit) label() string {
	s := fmt.Sprintf("%s (%s:%d)", l.Kind, filepath.Base(l.Where.File), l.Where.Line)
	if l.Scope != "" {
		s = l.Scope + " " + s
	}
	return s
}

// AzureScopes are API Management's policy scopes, outermost first
// (learn.microsoft.com, "Set or edit Azure API Management policies":
// global, product, API, operation). A document's <base /> stands for the
// policies of the scope above it, section by section.
var AzureScopes = []string{"global", "product", "api", "operation"}

// AzureFile is one policy document to read: its scope (AzureScopes; ""
// for a document read alone), path and content.
type AzureFile struct {
	Scope, File string
	Data        []byte
}

// AzureScopeArgs reads the files of import --from azure, outermost first:
// each FILE or SCOPE=FILE, SCOPE one of AzureScopes. A FILE without a
// scope takes the scope after the one before it (global for the first);
// one FILE alone has none. The scopes must come in APIM's order, each
// once.
func AzureScopeArgs(args []string) ([]AzureFile, error) {
	if len(args) == 1 {
		if sc, f, ok := cutAzureScope(args[0]); ok {
			return []AzureFile{{Scope: sc, File: f}}, nil
		}
		return []AzureFile{{File: args[0]}}, nil
	}
	var files []AzureFile
	next := 0 // the index in AzureScopes of the next scope
	for _, a := range args {
		sc, f, ok := cutAzureScope(a)
		if !ok {
			if next >= len(AzureScopes) {
				return nil, fmt.Errorf("%s: a policy file after the operation's: APIM has four scopes, %s, outermost first", a, strings.Join(AzureScopes, ", "))
			}
			sc, f = AzureScopes[next], a
		}
		i := slices.Index(AzureScopes, sc)
		if i < next {
			return nil, fmt.Errorf("%s: the %s scope after the %s scope: give the policy files outermost first (%s), each scope once", a, sc, files[len(files)-1].Scope, strings.Join(AzureScopes, ", "))
		}
		files = append(files, AzureFile{Scope: sc, File: f})
		next = i + 1
	}
	return files, nil
}

// AzureScoped says whether import's arguments are APIM policy files by
// scope: several files, or one SCOPE=FILE.
func AzureScoped(args []string) bool {
	if len(args) > 1 {
		return true
	}
	_, _, ok := cutAzureScope(args[0])
	return ok
}

// cutAzureScope splits SCOPE=FILE.
func cutAzureScope(arg string) (scope, file string, ok bool) {
	scope, file, ok = strings.Cut(arg, "=")
	if !ok || !slices.Contains(AzureScopes, scope) || file == "" {
		return "", arg, false
	}
	return scope, file, true
}

var (
	azureHeaderKey = regexp.MustCompile(`^@\(context\.Request\.Headers\.GetValueOrDefault\("([^"]+)"(?:\s*,\s*"([^"]*)")?\)\)$`)
	azureAddrKey   = regexp.MustCompile(`^@\(context\.Request\.IpAddress\)$`)
	azureIntAttr   = regexp.MustCompile(`^[0-9]+$`)
)

// ReadAzure reads an APIM policy document alone. A counter-key is a
// constant, the caller's address (@(context.Request.IpAddress)) or a
// header (@(context.Request.Headers.GetValueOrDefault("X", ...))); another
// policy expression, a calls or renewal-period that is not a number, and
// the per-API or per-operation children of rate-limit are errors naming
// file:line:col.
func ReadAzure(file string, data []byte) (*Azure, error) {
	return ReadAzureScopes([]AzureFile{{File: file, Data: data}})
}

// azureDoc is one policy document parsed.
type azureDoc struct {
	AzureFile
	root *apigeeNode
}

// section is the document's section of that name (inbound...), nil when
// it has none.
func (d *azureDoc) section(name string) *apigeeNode { return d.root.child(name) }

// ReadAzureScopes reads the policy documents of one operation's scopes,
// outermost first, as APIM runs them: each section of the innermost
// document, where it writes <base />, runs the same section of the scope
// above (learn.microsoft.com, "Set or edit Azure API Management policies",
// and "Policies in Azure API Management": a scope without <base /> in a
// section drops the outer scopes' policies of that section). rate-limit
// in the global scope is an error (its policy reference lists the
// product, API and operation scopes); so is a <base /> that is not
// directly in a section, where several documents are joined.
func ReadAzureScopes(files []AzureFile) (*Azure, error) {
	az := &Azure{File: files[len(files)-1].File, Scopes: files}
	var docs []*azureDoc
	for _, f := range files {
		root, err := parseApigeeXML(f.File, f.Data)
		if err != nil {
			return nil, err
		}
		d := &azureDoc{AzureFile: f, root: root}
		// every document's limits are read, including those the join
		// drops, so that a mistake in any is an error
		if _, err := d.limits(nil, len(files) > 1); err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	last := docs[len(docs)-1]
	var err error
	if az.Limits, err = last.limits(docs[:len(docs)-1], len(files) > 1); err != nil {
		return nil, err
	}
	az.dropped(docs)
	if len(az.Limits) == 0 {
		if len(docs) == 1 {
			return nil, &Error{File: last.File, Line: last.root.line, Col: last.root.col, Msg: "no rate-limit or rate-limit-by-key policy"}
		}
		var names []string
		for _, d := range docs {
			names = append(names, d.File)
		}
		return nil, &Error{File: last.File, Line: last.root.line, Col: last.root.col,
			Msg: "no rate-limit or rate-limit-by-key policy applies to the operation's requests, in " + strings.Join(names, ", ") + " joined at <base />"}
	}
	return az, nil
}

// limits reads the limits of d in document order; outer are the
// documents of the scopes above d, outermost first, whose section's
// limits stand where d's section writes <base /> (none: <base /> is
// left out). joined says several documents are read, where a <base />
// must stand directly in a section.
func (d *azureDoc) limits(outer []*azureDoc, joined bool) ([]*AzureLimit, error) {
	return d.under(d.root, nil, 0, outer, joined)
}

// under reads the limits in n, whose parent is parent and whose depth in
// d is depth (the root 0, a section 1), as limits does.
func (d *azureDoc) under(n, parent *apigeeNode, depth int, outer []*azureDoc, joined bool) ([]*AzureLimit, error) {
	switch {
	case n.name == "rate-limit" || n.name == "rate-limit-by-key":
		l, err := readAzureLimit(d.AzureFile, n)
		if err != nil {
			return nil, err
		}
		l.Inbound = parent != nil && parent.name == "inbound"
		return []*AzureLimit{l}, nil
	case n.name == "base" && joined && depth != 2:
		where := "as the document"
		if parent != nil {
			where = "inside <" + parent.name + ">"
		}
		return nil, &Error{File: d.File, Line: n.line, Col: n.col, Msg: "<base /> " + where + ": it is modelled directly in a section (inbound, backend, outbound, on-error) only"}
	case n.name == "base" && len(outer) > 0:
		up := outer[len(outer)-1]
		if s := up.section(parent.name); s != nil {
			return up.under(s, up.root, 1, outer[:len(outer)-1], joined)
		}
		return nil, nil
	}
	var out []*AzureLimit
	for _, c := range n.children {
		sub, err := d.under(c, n, depth+1, outer, joined)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// hasBase says whether section, a section of d, writes <base /> directly.
func hasBase(section *apigeeNode) bool {
	return slices.ContainsFunc(section.children, func(c *apigeeNode) bool { return c.name == "base" })
}

// dropped notes each section of an outer scope whose limits the join
// leaves out, naming the scope below it that has no <base /> there (or
// not the section at all), as APIM does.
func (a *Azure) dropped(docs []*azureDoc) {
	last := len(docs) - 1
	for i, d := range docs[:last] {
		for _, s := range d.root.children {
			if lims, _ := d.under(s, d.root, 1, nil, true); len(lims) == 0 {
				continue
			}
			for j := last; j > i; j-- {
				in := docs[j].section(s.name)
				why := ""
				switch {
				case in == nil:
					why = fmt.Sprintf("%s has no <%s>", docs[j].File, s.name)
				case !hasBase(in):
					why = fmt.Sprintf("the <%s> of %s (%s:%d) has no <base />", s.name, docs[j].File, filepath.Base(docs[j].File), in.line)
				default:
					continue
				}
				a.Notes = append(a.Notes, fmt.Sprintf("the %s scope's <%s> (%s) does not apply: %s, so APIM runs none of the scopes above the %s there",
					d.Scope, s.name, d.File, why, docs[j].Scope))
				break
			}
		}
	}
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

func readAzureLimit(f AzureFile, n *apigeeNode) (*AzureLimit, error) {
	file, base := f.File, filepath.Base(f.File)
	at := func(format string, args ...any) error {
		return &Error{File: file, Line: n.line, Col: n.col, Msg: n.name + ": " + fmt.Sprintf(format, args...)}
	}
	l := &AzureLimit{Kind: n.name, Scope: f.Scope, Where: Pos{File: file, Line: n.line, Col: n.col}}
	if n.name == "rate-limit" && f.Scope == "global" {
		return nil, at("not allowed in the global scope: APIM takes rate-limit at the product, API and operation scopes (rate-limit-by-key at every scope)")
	}
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
	where := l.Where
	switch {
	case n.name == "rate-limit":
		l.Key = Key{Kind: KeyOther, Name: "the subscription", Where: where, Attr: "subscription"}
	default:
		key, ok := n.attrs["counter-key"]
		switch {
		case !ok:
			return nil, at("no counter-key (it is required)")
		case azureAddrKey.MatchString(key):
			l.Key = Key{Kind: KeyAddr, Where: where}
		case azureHeaderKey.MatchString(key):
			m := azureHeaderKey.FindStringSubmatch(key)
			// GetValueOrDefault's default is the counter of every request
			// without the header
			l.Key = Key{Kind: KeyHeader, Name: strings.ToLower(m[1]), Where: where, Default: m[2]}
			if m[2] != "" {
				l.Notes = append(l.Notes, fmt.Sprintf("counter-key's default %q is the counter of the requests without %s: a replayed line without %s counts under it",
					m[2], m[1], l.Key.attr()))
			}
		case strings.HasPrefix(key, "@"):
			return nil, at("counter-key=%q: a policy expression other than the address or a header is not modelled", key)
		default:
			// the constant names its counter
			l.Key = Key{Kind: KeyGlobal, Name: key, Where: where}
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
	names := a.names()
	im := newImport(base, "The rate limits of "+names+".", a.from(
		"one row per rate-limit or",
		"rate-limit-by-key, a sliding window as in the classic tiers (write tier: v2",
		"for the v2 tiers' token bucket), each gateway counting alone.")...)
	first := lims[0]
	im.File.Limit = limit(first.Calls, scenarios.DurationText(first.Period))
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(max(10*time.Second, 3*first.Period)))
	a.scopeNotes(im)
	var keys []Key
	for _, l := range lims {
		keys = append(keys, l.Key)
	}
	primary, hasPrimary := primaryOf(keys)
	for _, l := range lims {
		e := scenarios.AlgEntry{Name: str("azure-rate-limit"), Label: str(l.Name()), Rate: scenarios.IntOf(l.Calls), Per: scenarios.DurationOf(scenarios.DurationText(l.Period))}
		if l.Increment {
			e.IncrementCond = scenarios.BoolOf(true)
		}
		by := byOf(l.Key, primary, hasPrimary)
		if by == "" || by == "global" && !hasPrimary {
			im.note(append([]string{l.head()}, l.Notes...)...)
			im.row(e)
			continue
		}
		// a limit by another key than the request's: an all-of row of it
		// alone, counting by that key (replay --gateway reads it from its
		// own field of the log)
		e.Label, e.By = str(l.label()), str(by)
		row := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str(l.Name()), Commit: str("in-order")})
		im.member(row, e, append(append([]string{l.head()}, l.Notes...), byNote(by))...)
	}
	if len(lims) > 1 {
		im.note("NOTE: APIM applies these limits one after the other to each request; each row here is one of them alone.")
	}
	im.placeholderTraffic(2*first.Calls, scenarios.DurationText(first.Period))
	im.attributes()
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
	names := a.names()
	im := newImport(base, "The rate limits of "+names+", applied in order.", a.from(
		"one all-of row, commit",
		"in-order, of its rate-limit and rate-limit-by-key policies, as APIM applies them",
		"to each request one after the other; each a sliding window as in the classic",
		"tiers (write tier: v2 on a limit for the v2 tiers' token bucket).")...)
	im.File.Limit = limit(first.Calls, scenarios.DurationText(first.Period))
	im.File.Duration = scenarios.DurationOf(scenarios.DurationText(max(10*time.Second, 3*first.Period)))
	var keys []Key
	for _, l := range lims {
		keys = append(keys, l.Key)
	}
	primary, hasPrimary := primaryOf(keys)
	a.scopeNotes(im)
	im.note("APIM applies these limits in this order to each request; the first that refuses answers 429",
		"and the later ones do not count it (commit in-order)")
	row := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str("inbound"), Commit: str("in-order")})
	for _, l := range lims {
		e := scenarios.AlgEntry{Name: str("azure-rate-limit"), Label: str(l.label()),
			Rate: scenarios.IntOf(l.Calls), Per: scenarios.DurationOf(scenarios.DurationText(l.Period))}
		if l.Increment {
			e.IncrementCond = scenarios.BoolOf(true)
		}
		lines := append([]string{l.head()}, l.Notes...)
		if by := byOf(l.Key, primary, hasPrimary); by != "" {
			e.By = str(by)
			lines = append(lines, byNote(by))
		}
		im.member(row, e, lines...)
	}
	im.placeholderTraffic(2*first.Calls, scenarios.DurationText(first.Period))
	im.attributes()
	return im
}

// head is the first line of the limit's comment: where it is written and
// what it says.
func (l *AzureLimit) head() string {
	key := l.Key.String()
	if l.Key.Kind == KeyGlobal && l.Key.Name != "" {
		key = fmt.Sprintf("the constant %q, %s", l.Key.Name, key)
	}
	s := fmt.Sprintf("%s:%d: %s calls=%d renewal-period=%d; key %s",
		filepath.Base(l.Where.File), l.Where.Line, l.Kind, l.Calls, int64(l.Period/time.Second), key)
	if l.Scope != "" {
		s = l.Scope + " scope, " + s
	}
	return s
}

// from is the scenario's head comment: where it is imported from, then
// what, the first of what going on the line of where.
func (a *Azure) from(what ...string) []string {
	if len(a.Scopes) < 2 {
		head := []string{"Imported from " + filepath.Base(a.File) + " by ratesim import --from azure: " + what[0]}
		return append(head, what[1:]...)
	}
	// the same words, after the scopes', wrapped again
	words := strings.Fields("Imported by ratesim import --from azure from the policy files of one operation's scopes, joined where each writes <base /> as APIM joins them: " +
		strings.Join(what, " "))
	var head []string
	line := ""
	for _, w := range words {
		if line != "" && len(line)+1+len(w) > 80 {
			head, line = append(head, line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(head, line)
}

// names lists the documents read, by their base names.
func (a *Azure) names() string {
	var names []string
	for _, f := range a.Scopes {
		names = append(names, filepath.Base(f.File))
	}
	return strings.Join(names, ", ")
}

// scopeNotes says, for several documents, how they are joined and what
// the join leaves out.
func (a *Azure) scopeNotes(im *Import) {
	if len(a.Scopes) < 2 {
		return
	}
	im.note("the policy scopes, outermost first:")
	for _, f := range a.Scopes {
		im.note("  " + f.Scope + ": " + f.File)
	}
	im.note(a.Notes...)
}

// together refuses the limits that a's document (or scopes) applies
// together but the rows cannot model together; each is an error naming
// file:line:col, and --scope still imports any one of them alone.
func (a *Azure) together() error {
	alone := func() string {
		var names []string
		for _, l := range a.Limits {
			names = append(names, l.Name())
		}
		return "; --scope imports one alone (" + strings.Join(names, ", ") + ")"
	}
	// "For each key value, a single counter is used for all scopes at
	// which the policy is configured" (learn.microsoft.com, "Limit call
	// rate by key", counter-key): two rate-limit-by-key of one key count
	// in one counter, and how the two then count a request is not
	// documented; rows or members apart would count it in two.
	for i, l := range a.Limits {
		for _, m := range a.Limits[:i] {
			if l.Kind == "rate-limit-by-key" && m.Kind == "rate-limit-by-key" && sameKey(l.Key, m.Key) {
				return &Error{File: l.Where.File, Line: l.Where.Line, Col: l.Where.Col, Msg: fmt.Sprintf(
					"rate-limit-by-key: the counter-key of the one at %s (%s): APIM keeps one counter per key value for every scope where the policy is configured, and does not document how two limits count a request in it, which limits apart do not model (give each its own key)%s", m.Where, m.Key, alone())}
			}
		}
	}
	if a.inOrder() {
		// An increment-condition counts the request once the response is
		// known; when a later limit refuses it, that response is the later
		// limit's 429, which the condition (typically a 2xx status) would
		// not count, whereas the all-of counts it as admitted.
		for _, l := range a.Limits[:len(a.Limits)-1] {
			if l.Increment {
				return &Error{File: l.Where.File, Line: l.Where.Line, Col: l.Where.Col, Msg: l.Kind +
					": increment-condition on a limit that another limit after it may refuse: whether the refused request counts depends on the condition read on that 429, which is not modelled" + alone()}
			}
		}
	}
	return nil
}

// pick returns the limits scope names, every one for "" (when they can
// be modelled together).
func (a *Azure) pick(scope string) ([]*AzureLimit, error) {
	if scope == "" {
		if err := a.together(); err != nil {
			return nil, err
		}
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

// LooksLikeAzure says whether data is an APIM policy document, with or
// without a limit (a scope joined to others may have none).
func LooksLikeAzure(data []byte) bool {
	return strings.Contains(string(data), "<policies")
}

func guessAzure(_ string, data []byte) bool {
	s := string(data)
	return strings.Contains(s, "<policies") && (strings.Contains(s, "<rate-limit ") || strings.Contains(s, "<rate-limit-by-key"))
}

// keyedLimits: each limit counts by its own counter-key, which replay
// --gateway reads from the log's field for it (docs/gateways.md).
func (*Azure) keyedLimits() {}
