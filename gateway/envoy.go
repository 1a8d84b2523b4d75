package gateway

import (
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// This file reads the config of envoy's ratelimit service
// (github.com/envoyproxy/ratelimit), to the letter of its loader,
// src/config/config_impl.go (loadDescriptors, validateYamlKeys, GetLimit),
// and writes it as fixed-window rows, the rule of its Redis and memcached
// caches (src/redis/fixed_cache_impl.go DoLimit: INCRBY the window's key,
// then compare; src/limiter/cache_key.go GenerateCacheKey: the window is
// (now/divider)*divider in Unix seconds).

// EnvoyUnits are the units of a rate_limit, in seconds as
// src/utils/utilities.go UnitToDivider has them: a month is 30 days, a
// year 365, and every window is aligned to the Unix epoch (a week starts
// on Thursday, as 1970-01-01 was one).
var EnvoyUnits = []struct {
	Name string
	Per  time.Duration
}{
	{"SECOND", time.Second},
	{"MINUTE", time.Minute},
	{"HOUR", time.Hour},
	{"DAY", 24 * time.Hour},
	{"WEEK", 7 * 24 * time.Hour},
	{"MONTH", 30 * 24 * time.Hour},
	{"YEAR", 365 * 24 * time.Hour},
}

func envoyUnit(s string) (time.Duration, bool) {
	for _, u := range EnvoyUnits {
		if u.Name == strings.ToUpper(s) {
			return u.Per, true
		}
	}
	return 0, false
}

func envoyUnitNames() string {
	var names []string
	for _, u := range EnvoyUnits {
		names = append(names, u.Name)
	}
	return strings.Join(names, ", ")
}

// EnvoyEntry is one entry of a descriptor: its key and value ("" when the
// config gives none: every value of the key, each counted apart).
type EnvoyEntry struct {
	Key, Value string
}

func (e EnvoyEntry) String() string {
	if e.Value == "" {
		return e.Key
	}
	return e.Key + "=" + e.Value
}

// varies reports whether requests with different values of the entry
// have different counters: no value, or a wildcard one (prefix*, or with
// * inside) without share_threshold.
func (e EnvoyEntry) varies(shared bool) bool {
	return e.Value == "" || (strings.Contains(e.Value, "*") && !shared)
}

// EnvoyDescriptor is one descriptor of the config with a rate_limit: its
// path of entries from the domain down, and its limit.
type EnvoyDescriptor struct {
	Entries []EnvoyEntry
	// Unlimited is rate_limit.unlimited: the service never limits it.
	Unlimited bool
	// Rate requests (requests_per_unit) per Per, a window of Unit.
	Rate int64
	Unit string // as written
	Per  time.Duration
	// LimitName is rate_limit.name and Replaces the names it replaces.
	LimitName string
	Replaces  []string
	// ShadowMode: the service logs the verdict and answers OK; QuotaMode:
	// over the limit rejects only when every quota descriptor of the
	// request is over; ShareThreshold: the values a wildcard matches share
	// one counter.
	ShadowMode, QuotaMode, ShareThreshold bool
	// Siblings are the values of this level's key that have descriptors of
	// their own, for an entry without a value (they do not count here).
	Siblings []string
	Where    Pos // the descriptor's key
}

// Path is the descriptor's name, as --scope and the rows' labels spell it:
// its entries, key or key=value, joined by "/".
func (d *EnvoyDescriptor) Path() string { return entriesPath(d.Entries) }

// Envoy is what an envoy ratelimit service config limits: its domain and
// its descriptors with a rate_limit, in file order (parents first).
type Envoy struct {
	File        string
	Domain      string
	Descriptors []*EnvoyDescriptor
}

var (
	envoyTopFields   = []string{"domain", "descriptors"}
	envoyDescFields  = []string{"key", "value", "rate_limit", "descriptors", "shadow_mode", "quota_mode", "detailed_metric", "value_to_metric", "share_threshold", "metadata"}
	envoyLimitFields = []string{"unit", "requests_per_unit", "unlimited", "name", "replaces"}
	// envoyKeys are config_impl.go's validKeys: the names its loader
	// accepts at any level (and ignores where they mean nothing).
	envoyKeys = slices.Concat(envoyTopFields, envoyDescFields, envoyLimitFields)
)

// unknownEnvoy is the message for a field that is not one of fields; one
// that envoy's loader accepts elsewhere is one it ignores here.
func unknownEnvoy(fields []string) func(string) string {
	return func(k string) string {
		msg := unknownField(fields)(k)
		if slices.Contains(envoyKeys, k) {
			msg += "; envoy's ratelimit accepts the name at any level but ignores it at this one"
		}
		return msg
	}
}

// ReadEnvoy reads the config of envoy's ratelimit service as its loader
// does (config_impl.go ConfigFileContentToYaml and loadDescriptors): a
// domain, required, and descriptors nested to any depth, each with a key
// (required) and an optional value. Refused, with the file, line and
// column: a field the loader does not know (or one it would ignore where
// it is written), an empty key, two descriptors with the same key and
// value at one level, a unit that is not one of SECOND, MINUTE, HOUR,
// DAY, WEEK, MONTH, YEAR (or one given with unlimited: true), a
// requests_per_unit missing or 0 (envoy reads it as 0 and rejects every
// request), an empty replaces name or one naming its own limit,
// share_threshold without a wildcard, and a config without any rate_limit.
func ReadEnvoy(file string, data []byte) (*Envoy, error) {
	r := &envoyReader{e: &Envoy{File: file}}
	top, err := readYAMLAsRead(file, data)
	if err != nil {
		return nil, err
	}
	if err := top.mappingOf("a mapping with domain and descriptors", envoyTopFields, unknownEnvoy(envoyTopFields)); err != nil {
		return nil, err
	}
	if r.e.Domain, err = top.at("domain").requiredText("config file cannot have empty domain (want domain: NAME)"); err != nil {
		return nil, err
	}
	if err := r.descriptors(top.at("descriptors"), nil); err != nil {
		return nil, err
	}
	if len(r.e.Descriptors) == 0 {
		return nil, noLimits(file, fmt.Sprintf("no descriptor of domain %q has a rate_limit", r.e.Domain))
	}
	if !slices.ContainsFunc(r.e.Descriptors, func(d *EnvoyDescriptor) bool { return !d.Unlimited }) {
		return nil, noLimits(file, fmt.Sprintf("every rate_limit of domain %q is unlimited", r.e.Domain))
	}
	return r.e, nil
}

type envoyReader struct {
	e *Envoy
}

// descriptors reads one level of descriptors under the entries parent.
func (r *envoyReader) descriptors(v *tree, parent []EnvoyEntry) error {
	items, err := v.listOf("a list of descriptors")
	if err != nil {
		return err
	}
	seen := map[string]*tree{}
	var level []*EnvoyDescriptor // this level's descriptors with a rate_limit
	values := map[string][]string{}
	for _, item := range items {
		if err := item.mappingOf("a descriptor (a mapping with key, value, rate_limit, descriptors)", envoyDescFields, unknownEnvoy(envoyDescFields)); err != nil {
			return err
		}
		keyNode := item.at("key")
		key, err := keyNode.requiredText("descriptor has empty key (want key: NAME)")
		if err != nil {
			return err
		}
		value, err := item.at("value").scalarText()
		if err != nil {
			return err
		}
		entry := EnvoyEntry{Key: key, Value: value}
		final := key
		if value != "" {
			final += "_" + value
			values[key] = append(values[key], value)
		}
		if first, dup := seen[final]; dup {
			return keyNode.errAt("duplicate descriptor %s (first at %d:%d)", entry, first.pos.Line, first.pos.Col)
		}
		seen[final] = keyNode
		path := append(slices.Clone(parent), entry)
		d := &EnvoyDescriptor{Entries: path, Where: item.pos}
		for _, f := range []struct {
			name string
			to   *bool
		}{{"shadow_mode", &d.ShadowMode}, {"quota_mode", &d.QuotaMode}, {"share_threshold", &d.ShareThreshold}, {"detailed_metric", new(bool)}, {"value_to_metric", new(bool)}} {
			if *f.to, err = item.at(f.name).boolOr(false); err != nil {
				return err
			}
		}
		if d.ShareThreshold && !strings.Contains(final, "*") {
			return item.at("share_threshold").errAt("share_threshold can only be used with wildcard values (containing '*'), but found %s", entry)
		}
		if lim := item.get("rate_limit"); !lim.isNull() {
			if err := r.limit(lim, d); err != nil {
				return err
			}
			r.e.Descriptors = append(r.e.Descriptors, d)
			level = append(level, d)
		}
		if err := r.descriptors(item.at("descriptors"), path); err != nil {
			return err
		}
	}
	for _, d := range level {
		if last := d.Entries[len(d.Entries)-1]; last.Value == "" {
			d.Siblings = values[last.Key]
		}
	}
	return nil
}

// limit reads a descriptor's rate_limit as loadDescriptors does.
func (r *envoyReader) limit(m *tree, d *EnvoyDescriptor) error {
	if err := m.mappingOf("a rate_limit (a mapping with unit and requests_per_unit)", envoyLimitFields, unknownEnvoy(envoyLimitFields)); err != nil {
		return err
	}
	var err error
	if d.Unlimited, err = m.at("unlimited").boolOr(false); err != nil {
		return err
	}
	unit := m.at("unit")
	if d.Unit, err = unit.scalarText(); err != nil {
		return err
	}
	per, valid := envoyUnit(d.Unit)
	switch {
	case d.Unlimited && valid:
		return unit.errAt("should not specify rate limit unit when unlimited (remove unit, or unlimited)")
	case !d.Unlimited && m.get("unit") == nil:
		return unit.errAt("missing (want unit: one of %s)", envoyUnitNames())
	case !d.Unlimited && !valid:
		return unit.errAt("invalid rate limit unit %q (want one of %s)", d.Unit, envoyUnitNames())
	}
	d.Per = per
	switch rpu := m.get("requests_per_unit"); {
	case rpu != nil:
		if d.Rate, err = rpu.uint32(false, "a whole number of requests per unit, at least 1"); err != nil {
			return err
		}
		if d.Rate == 0 && !d.Unlimited {
			return rpu.errAt("0: envoy's ratelimit would reject every request of this descriptor (want at least 1; to never limit it, write unlimited: true)")
		}
	case !d.Unlimited:
		return m.at("requests_per_unit").errAt("missing (want requests_per_unit: N, N >= 1; envoy's ratelimit reads it as 0 and rejects every request)")
	}
	if d.LimitName, err = m.at("name").scalarText(); err != nil {
		return err
	}
	reps, err := m.at("replaces").listOf("a list of {name: NAME}")
	if err != nil {
		return err
	}
	for _, rep := range reps {
		if err := rep.mappingOf("a mapping {name: NAME}", []string{"name"}, unknownEnvoy([]string{"name"})); err != nil {
			return err
		}
		name, err := rep.at("name").requiredText("should not have an empty replaces entry (want name: NAME)")
		if err != nil {
			return err
		}
		if name == d.LimitName {
			return rep.at("name").errAt("replaces should not contain name of same descriptor (%q)", name)
		}
		d.Replaces = append(d.Replaces, name)
	}
	return nil
}

// pick returns the descriptors scope names: all of them when it is "",
// else those whose paths it names, joined by " + " (the descriptors one
// request carries).
func (e *Envoy) pick(scope string) ([]*EnvoyDescriptor, error) {
	if scope == "" {
		return e.Descriptors, nil
	}
	if i := slices.IndexFunc(e.Descriptors, func(d *EnvoyDescriptor) bool { return d.Path() == scope }); i >= 0 {
		return e.Descriptors[i : i+1], nil // a path may hold a +
	}
	var picked []*EnvoyDescriptor
	for _, part := range strings.Split(scope, "+") {
		part = strings.TrimSpace(part)
		i := slices.IndexFunc(e.Descriptors, func(d *EnvoyDescriptor) bool { return d.Path() == part })
		if i < 0 {
			var names []string
			for _, d := range e.Descriptors {
				names = append(names, fmt.Sprintf("%q", d.Path()))
			}
			return nil, fmt.Errorf("--scope %q: no descriptor of %s with a rate_limit is %q (its descriptors: %s; join several with \" + \")", scope, e.File, part, strings.Join(names, ", "))
		}
		if slices.Contains(picked, e.Descriptors[i]) {
			return nil, fmt.Errorf("--scope %q: %q is named twice", scope, part)
		}
		picked = append(picked, e.Descriptors[i])
	}
	return picked, nil
}

// checked returns the limits envoy's service checks for a request that
// carries the descriptors ds, as src/service/ratelimit.go
// constructLimitsToCheck does: an unlimited limit is not checked (but its
// replaces count), and a named limit that another limit of the request
// replaces is not checked. dropped says why each other one is not.
func checked(ds []*EnvoyDescriptor) (kept []*EnvoyDescriptor, dropped []string) {
	replacing := map[string]string{}
	for _, d := range ds {
		for _, name := range d.Replaces {
			replacing[name] = d.Path()
		}
	}
	for _, d := range ds {
		switch by, ok := replacing[d.LimitName]; {
		case d.Unlimited:
			dropped = append(dropped, d.Path()+" is unlimited")
		case d.LimitName != "" && ok:
			dropped = append(dropped, fmt.Sprintf("%s (named %s) is replaced by %s", d.Path(), d.LimitName, by))
		default:
			kept = append(kept, d)
		}
	}
	return kept, dropped
}

// Scenario makes the limits of e a ratesim scenario: one fixed-window
// row with count-rejected per descriptor with a rate_limit (envoy's
// ratelimit increments a window's counter by every hit, over the limit
// too, and then compares), labelled by its path; an unlimited one is a
// comment. o.Scope names one descriptor, or several joined by " + "
// (those one request carries, as envoy's rate_limits actions build them):
// one row, an all-of with commit every-hit when several limits are checked
// (the service increments every descriptor's counter and answers
// OVER_LIMIT if any is over).
func (e *Envoy) Scenario(o Options) (*Import, error) {
	ds, err := e.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(e.File)
	im := newImport(base, fmt.Sprintf("The rate limits of domain %s in %s.", e.Domain, base),
		"Imported from "+base+" by ratesim import --from envoy: the rate limits of",
		"domain "+e.Domain+" for envoy's ratelimit service, one row per descriptor, labelled",
		"by its path of key or key=value entries. The service counts every hit, over",
		"the limit too, in fixed windows aligned to the Unix epoch (a week starts on",
		"Thursday, a month is 30 days, a year 365): fixed-window with count-rejected.",
		"Which descriptors a request carries is set by envoy's rate_limits actions,",
		"not in this file: --scope \"A + B\" writes the row of a request carrying A and B.",
		"No cluster section: every instance of the service counts in one Redis with",
		"INCRBY, one atomic counter per window, which one limiter decides alike.")
	var first *EnvoyDescriptor
	if o.Scope != "" {
		kept, dropped := checked(ds)
		if len(kept) == 0 {
			return nil, fmt.Errorf("--scope %q: envoy's ratelimit checks no limit for such a request (%s)", o.Scope, strings.Join(dropped, "; "))
		}
		first = kept[0]
		e.header(im, first)
		e.requestRow(im, base, o.Scope, kept, dropped, o)
	} else {
		first = ds[slices.IndexFunc(ds, func(d *EnvoyDescriptor) bool { return !d.Unlimited })]
		e.header(im, first)
		primary, hasPrimary := primaryOf(envoyKeysOf(ds))
		for _, d := range ds {
			im.note(e.comments(base, d)...)
			if d.Unlimited {
				continue
			}
			row := envoyEntry(d)
			if by := envoyBy(d, primary, hasPrimary); by != "" {
				// a limit by another key than the request's: an all-of
				// of one, counting by its own key
				im.note(byNote(by))
				row.By = str(by)
				row = scenarios.AlgEntry{Name: str("all-of"), Limits: []scenarios.AlgEntry{row}}
			}
			row.Label = str(d.Path())
			im.row(row)
		}
	}
	im.placeholderTraffic(2*first.Rate, scenarios.DurationText(first.Per))
	im.attributes()
	return im, nil
}

// envoyKeysOf are the keys of the descriptors ds, each once, in order.
func envoyKeysOf(ds []*EnvoyDescriptor) []Key {
	var keys []Key
	for _, d := range ds {
		if d.Unlimited {
			continue
		}
		for _, k := range envoyDescKeys(d) {
			keys = addKey(keys, k)
		}
	}
	return keys
}

// envoyBy is the by: of descriptor d's limit when primary is the
// request's key (ok false: there is none): "" for the key, "global" when
// every entry has its value, the attribute of its one varying entry; ""
// too when no descriptor's value varies (one key for every request);
// a descriptor of several varying entries counts by them together, which
// no one attribute is: "" (Keys refuses it to replay).
func envoyBy(d *EnvoyDescriptor, primary Key, ok bool) string {
	keys := envoyDescKeys(d)
	if !ok || len(keys) != 1 {
		return "" // every limit counts every request together, or d's pair
	}
	return byOf(keys[0], primary, ok)
}

func (*Envoy) keyedLimits() {}

// header sets the scenario's limit (the first row's) and duration.
func (e *Envoy) header(im *Import, first *EnvoyDescriptor) {
	im.File.Limit = limit(first.Rate, scenarios.DurationText(first.Per))
	im.File.Duration = scenarios.DurationOf("10s")
}

// requestRow adds the one row of a request carrying the descriptors of
// --scope: kept are the limits the service checks. With o.SplitLimits,
// an all-of row is followed by a row per member (--split-limits); with
// o.LimitLabels, each member is labelled by its descriptor and line.
func (e *Envoy) requestRow(im *Import, base, scope string, kept []*EnvoyDescriptor, dropped []string, o Options) {
	split := o.SplitLimits
	im.note("--scope " + scope + ": a request that carries these descriptors")
	for _, why := range dropped {
		im.note("not checked: " + why)
	}
	kept, shadow := enforcedOnly(kept)
	for _, d := range shadow {
		im.note("left out: " + d.Path() + " is in shadow_mode (counted, never rejecting: it changes no verdict)")
	}
	if len(kept) == 1 {
		im.note(e.comments(base, kept[0])...)
		row := envoyEntry(kept[0])
		row.Label = str(scope)
		im.row(row)
		return
	}
	primary, hasPrimary := primaryOf(envoyKeysOf(kept))
	im.note("envoy's ratelimit increments every descriptor's counter by the hit and answers",
		"OVER_LIMIT if any is over: all-of with commit every-hit; each limit counts by",
		"its descriptor's own key (by:).")
	if slices.ContainsFunc(kept, func(d *EnvoyDescriptor) bool { return d.QuotaMode }) {
		im.note("NOTE: a quota_mode limit rejects only when every quota limit of the request is",
			"over; the row rejects when any is (quota_mode is not modelled together).")
	}
	row := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str(scope), Commit: str("every-hit")})
	for _, d := range kept {
		m := envoyEntry(d)
		if by := envoyBy(d, primary, hasPrimary); by != "" {
			m.By = str(by)
		}
		if o.LimitLabels {
			m.Label = str(fmt.Sprintf("descriptor %s (%s:%d)", d.Path(), base, d.Where.Line))
		}
		im.member(row, m, e.comments(base, d)...)
	}
	if !split {
		return
	}
	var members []splitMember
	for _, d := range kept {
		m := envoyEntry(d)
		if by := envoyBy(d, primary, hasPrimary); by != "" {
			// alone, a limit by another key is an all-of of one
			m.By = str(by)
			m = scenarios.AlgEntry{Name: str("all-of"), Limits: []scenarios.AlgEntry{m}}
		}
		members = append(members, splitMember{label: "(" + d.Path() + " alone)", entry: m, comment: e.comments(base, d)})
	}
	im.splitRows(labels{}, scope, []string{
		"--split-limits: each descriptor's limit above on its own (its counter counts",
		"every hit as in the all-of row, and it rejects only when that counter is over),",
		"to compare with the all-of row",
	}, members, nil)
}

// comments are the comment lines of one descriptor: where it is, its
// limit and key, and what of it the row does not do.
func (e *Envoy) comments(base string, d *EnvoyDescriptor) []string {
	head := fmt.Sprintf("%s:%d: descriptor %s", base, d.Where.Line, d.Path())
	if d.Unlimited {
		return []string{head + ": unlimited: the service never limits it (no row)"}
	}
	head += fmt.Sprintf(": %d per %s", d.Rate, strings.ToUpper(d.Unit))
	if strings.ToUpper(d.Unit) == "WEEK" {
		head += " (weeks start on Thursday, 00:00 UTC)"
	}
	if u := strings.ToUpper(d.Unit); u == "MONTH" || u == "YEAR" {
		head += fmt.Sprintf(" (%s days, from the Unix epoch)", map[string]string{"MONTH": "30", "YEAR": "365"}[u])
	}
	keys := envoyDescKeys(d)
	if len(keys) == 1 && keys[0].Kind == KeyGlobal {
		head += ", one counter for every request that carries it"
	} else {
		var ks []string
		for _, k := range keys {
			ks = append(ks, k.short())
		}
		head += ", a counter per " + strings.Join(ks, " and ")
	}
	lines := []string{head}
	if len(d.Siblings) > 0 {
		last := d.Entries[len(d.Entries)-1]
		var vs []string
		for _, v := range d.Siblings {
			vs = append(vs, last.Key+"="+v)
		}
		which := "which has a descriptor of its own"
		if len(vs) > 1 {
			which = "which have descriptors of their own"
		}
		lines = append(lines, fmt.Sprintf("  not for %s, %s", strings.Join(vs, ", "), which))
	}
	for _, en := range d.Entries {
		if strings.Contains(en.Value, "*") {
			how := "each value counted apart"
			if d.ShareThreshold {
				how = "share_threshold: all of them in one counter"
			}
			lines = append(lines, fmt.Sprintf("  %s matches every value of %s that fits the wildcard (%s)", en.String(), en.Key, how))
		}
	}
	if d.LimitName != "" {
		named := "  named " + d.LimitName
		if by := e.replacedBy(d.LimitName); len(by) > 0 {
			named += ": not checked for a request that also carries " + strings.Join(by, " or ") + " (replaces)"
		}
		lines = append(lines, named)
	}
	if len(d.Replaces) > 0 {
		lines = append(lines, "  replaces "+strings.Join(d.Replaces, ", ")+": a request carrying both is not checked against those")
	}
	if d.ShadowMode {
		lines = append(lines, "  shadow_mode: the service only logs an over-limit verdict and answers OK;",
			"  the row decides as if it were enforced")
	}
	if d.QuotaMode {
		lines = append(lines, "  quota_mode: over the limit rejects only when every quota descriptor of the",
			"  request is over (alone, as here, that is when this one is)")
	}
	return lines
}

// enforcedOnly leaves out the limits in shadow_mode when others remain:
// every-hit members decide apart, so one that never rejects changes no
// verdict.
func enforcedOnly(ds []*EnvoyDescriptor) (kept, shadow []*EnvoyDescriptor) {
	for _, d := range ds {
		if d.ShadowMode {
			shadow = append(shadow, d)
		} else {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		return shadow, nil
	}
	return kept, shadow
}

// keyNote is a NOTE when the keys of an all-of row's members differ:
// the row applies every member to the one key of each request.
func keyNote(keys iter.Seq[Key]) []string {
	var names []string
	for k := range keys {
		if s := k.short(); !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	if len(names) < 2 {
		return nil
	}
	return []string{
		"NOTE: these limits count by different keys (" + strings.Join(names, ", ") + "); the row applies them",
		"all to the one key of each request, so it is envoy's only when those keys agree.",
	}
}

// replacedBy returns the paths of the descriptors whose limits replace
// the limit called name.
func (e *Envoy) replacedBy(name string) []string {
	var by []string
	for _, d := range e.Descriptors {
		if slices.Contains(d.Replaces, name) {
			by = append(by, d.Path())
		}
	}
	return by
}

// envoyEntry is a descriptor's fixed-window row.
func envoyEntry(d *EnvoyDescriptor) scenarios.AlgEntry {
	return scenarios.AlgEntry{Name: str("fixed-window"), Rate: scenarios.IntOf(d.Rate), Per: scenarios.DurationOf(scenarios.DurationText(d.Per)),
		CountRejected: scenarios.BoolOf(true)}
}

// Keys returns what the descriptors o.Scope picks count by, each once, in
// order: the client address for a remote_address entry without a value,
// one key for every request when every entry has a value, and otherwise
// the descriptor key, whose value envoy's rate_limits actions set (a
// request_headers action names its header in envoy's route config, not in
// this file).
func (e *Envoy) Keys(o Options) ([]Key, error) {
	ds, err := e.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	if o.Scope != "" {
		ds, _ = checked(ds)
		ds, _ = enforcedOnly(ds)
	}
	for _, d := range ds {
		if ks := envoyDescKeys(d); !d.Unlimited && len(ks) > 1 {
			var names []string
			for _, k := range ks {
				names = append(names, k.short())
			}
			return nil, fmt.Errorf("%s: descriptor %s counts by %s together, which no one field of a log holds: keep a scope without it with --scope", d.Where, d.Path(), strings.Join(names, " and "))
		}
	}
	return envoyKeysOf(ds), nil
}

// envoyDescKeys returns the keys of one descriptor: one per entry whose
// value varies, or the global key when none does.
func envoyDescKeys(d *EnvoyDescriptor) []Key {
	var keys []Key
	for _, en := range d.Entries {
		if en.varies(d.ShareThreshold) {
			keys = append(keys, envoyKey(en.Key, d.Where))
		}
	}
	if len(keys) == 0 {
		keys = append(keys, Key{Kind: KeyGlobal, Where: d.Where})
	}
	return keys
}

// envoyKey is the key of a descriptor entry called key whose value
// varies: remote_address is the client address (envoy's remote_address
// action); any other key is set by an action of envoy's route config
// (request_headers names a header there), which this file does not say.
func envoyKey(key string, where Pos) Key {
	if key == "remote_address" {
		return Key{Kind: KeyAddr, Where: where}
	}
	return Key{Kind: KeyOther, Name: "descriptor entry " + key + " (its value comes from envoy's rate_limits actions, e.g. request_headers with its header, in envoy's route config, not in this file)", Where: where, Attr: key}
}

// short names a key in a row's comment.
func (k Key) short() string {
	switch k.Kind {
	case KeyAddr:
		return "client address"
	case KeyOther:
		if name, ok := strings.CutPrefix(k.Name, "descriptor entry "); ok {
			name, _, _ = strings.Cut(name, " ")
			return "value of " + name
		}
	}
	return k.String()
}
