package gateway

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
)

// KongDefaultNodes is the nodes of the cluster section Kong's import
// writes: Kong's config does not say how many nodes run it, so the
// scenario says 3 and asks the user to set theirs.
const KongDefaultNodes = 3

// kongMode is how a plugin's counters are kept, as a row's coordination,
// with the commit of its windows and whether they count rejected hits.
type kongMode struct {
	coordination string // local, central, racy, sync
	write        string // the row's other cluster fields, "" when unset
	sync         string
	onStoreError string
	commit       string // all-or-nothing or every-hit
	countRej     bool
	why          string // the comment that says so
	note         string // a NOTE when the row only approaches Kong
}

// mode maps a plugin's policy to its rows (docs/cluster.md and docs/gateways.md):
//   - rate-limiting, policy local: each node counts in its own shared
//     memory (policies/init.lua, local), every window incremented only when
//     the request is admitted (handler.lua returns before increment when
//     a window is over): coordination local, commit all-or-nothing.
//   - policy redis, sync_rate -1: usage() is one INCR per window per hit,
//     returning the count before it, so every window counts every hit,
//     admitted or not (Kong 3.4 and later): coordination central, commit
//     every-hit, count-rejected. With sync_rate S > 0 the node counts
//     locally and adds its deltas to redis every S: coordination sync
//     (one window; several windows keep central, with a NOTE).
//   - policy cluster: the database's counters are read (SELECT), the
//     decision made on the node, and an admitted request incremented
//     (UPSERT value + 1): coordination racy, write incr, all-or-nothing.
//   - rate-limiting-advanced: every-hit, counting rejected hits unless
//     disable_penalty; strategy local (or sync_rate -1) is local, sync_rate
//     0 central (redis) or racy (cluster), sync_rate S > 0 sync.
func (p *KongPlugin) mode() kongMode { return p.modeOf(false) }

// modeOf is mode, except that with byOther (the plugin counts by another
// key than the request's, an all-of row's by:) a sync_rate S > 0 keeps
// central, with a NOTE, as several windows do: an all-of row has no sync
// mode.
func (p *KongPlugin) modeOf(byOther bool) kongMode {
	notSync := "for several windows"
	if byOther {
		notSync = "for a limit by another key than the request's"
	}
	store := ""
	if !p.FaultTolerant {
		store = "deny"
	}
	if p.Name == "rate-limiting" {
		switch p.Policy {
		case "local":
			return kongMode{coordination: "local", commit: "all-or-nothing",
				why: "policy local: each node counts alone; every window counts an admitted request only"}
		case "cluster":
			return kongMode{coordination: "racy", write: "incr", onStoreError: store, commit: "all-or-nothing",
				why: "policy cluster: the database's counts are read, then an admitted request incremented (racy reads)"}
		}
		if p.SyncRate > 0 {
			if len(p.Windows) == 1 && !byOther {
				return kongMode{coordination: "sync", sync: seconds(p.SyncRate), onStoreError: store, commit: "all-or-nothing",
					why: "policy redis, sync_rate " + strconv.FormatFloat(p.SyncRate, 'g', -1, 64) + ": each node counts locally and adds its counts to redis every sync_rate"}
			}
			return kongMode{coordination: "central", onStoreError: store, commit: "every-hit", countRej: true,
				why:  "policy redis: one INCR per window per hit in redis; every window counts every hit, admitted or not",
				note: "sync_rate " + strconv.FormatFloat(p.SyncRate, 'g', -1, 64) + " (counts batched every sync_rate) is not modelled " + notSync + ": the row counts every hit in redis at once"}
		}
		return kongMode{coordination: "central", onStoreError: store, commit: "every-hit", countRej: true,
			why: "policy redis: one INCR per window per hit in redis; every window counts every hit, admitted or not"}
	}
	m := kongMode{commit: "every-hit", countRej: p.CountRejected}
	pen := "; rejected hits count (disable_penalty false)"
	if !p.CountRejected {
		pen = "; rejected hits do not count (disable_penalty true)"
	}
	switch {
	case p.Policy == "local" || p.SyncRate == -1:
		m.coordination, m.why = "local", "strategy "+p.Policy+", sync_rate -1: each node counts alone"+pen
	case p.SyncRate == 0 && p.Policy == "redis":
		m.coordination, m.onStoreError, m.why = "central", store, "strategy redis, sync_rate 0: every hit counted in redis at once"+pen
	case p.SyncRate == 0:
		m.coordination, m.write, m.onStoreError, m.why = "racy", "incr", store, "strategy cluster, sync_rate 0: the database's counts read, then incremented"+pen
		m.commit, m.countRej = "all-or-nothing", false
		if p.CountRejected {
			m.coordination, m.write = "central", ""
			m.commit, m.countRej = "every-hit", true
			m.note = "the database's counts are read and incremented for every hit: modelled as central (atomic), without the stale reads of the database"
		}
	case len(p.Windows) == 1 && !byOther:
		m.coordination, m.sync, m.onStoreError, m.why = "sync", seconds(p.SyncRate), store, "strategy "+p.Policy+", sync_rate "+strconv.FormatFloat(p.SyncRate, 'g', -1, 64)+": each node counts locally and syncs every sync_rate"+pen
		m.countRej = false
	default:
		m.coordination, m.onStoreError, m.why = "central", store, "strategy "+p.Policy+pen
		m.note = "sync_rate " + strconv.FormatFloat(p.SyncRate, 'g', -1, 64) + " (counts synchronised every sync_rate) is not modelled " + notSync + ": the row counts every hit in the store at once"
	}
	return m
}

// seconds writes Kong's sync_rate (seconds, maybe fractional) as a
// duration.
func seconds(s float64) string {
	ms := int64(float64(s*1000) + 0.5) // the product rounded: no FMA
	if ms%1000 == 0 {
		return strconv.FormatInt(ms/1000, 10) + "s"
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// Scenario makes the limits of k a ratesim scenario: one algorithm row
// per scope, labelled by the scope's name, on a cluster of
// KongDefaultNodes nodes (see mode for each policy's coordination). A
// plugin with one window is a fixed-window row; one with several is an
// all-of row of a fixed-window per window (rate-limiting-advanced's
// sliding windows are sliding-window rows). Each row has comments naming
// the file and line of its route (or service), of its plugin and of each
// window.
//
// When the plugins count by different keys (limit_by, identifier), the
// request's key is the first that is not one for every request (keys.go,
// primaryOf), and a row whose plugin counts by another counts by it (by:
// on each window, an all-of row of one window when the plugin has one):
// replay --gateway reads each from its own field of the log.
func (k *Kong) Scenario(o Options) (*Import, error) {
	scopes, err := k.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	keys, err := k.Keys(o)
	if err != nil {
		return nil, err
	}
	primary, hasPrimary := primaryOf(keys)
	differ := slices.ContainsFunc(keys, func(x Key) bool { return !sameKey(x, keys[0]) || x.kongPath != "" })
	base := filepath.Base(k.File)
	im := newImport(base, "The rate limits of "+base+".",
		"Imported from "+base+" by ratesim import --from kong: one row per route (or",
		"service without routes) with the rate-limiting plugin that Kong runs there,",
		"after its precedence (consumer > route > service > global), and one per",
		"consumer whose own plugin applies instead. Several windows are one all-of row.")
	first := scopes[0].Plugin.Windows[0]
	im.File.Limit = limit(first.Rate(), first.Per)
	im.File.Duration = scenarios.DurationOf(placeholderDuration(first.Per))
	im.Layout.Head["cluster"] = []string{
		fmt.Sprintf("Kong's config does not say how many nodes run it: %d is a placeholder, set", KongDefaultNodes),
		"nodes to yours (with 1 node, local is exact). The store (redis, or the",
		"database of policy cluster) is 1 ms away: set store.rtt to yours.",
	}
	im.File.Cluster = &scenarios.Cluster{Nodes: scenarios.IntOf(KongDefaultNodes), Store: &scenarios.Store{RTT: scenarios.DurationOf("1ms")}}
	names := labels{}
	for _, s := range scopes {
		by := ""
		if differ {
			by = byOf(s.Plugin.key(), primary, hasPrimary)
		}
		k.addRow(im, base, s, names.unique(s.Name()), names, o.SplitLimits, by)
	}
	im.placeholderTraffic(2*first.Rate(), rateUnit(first.Per))
	im.attributes()
	return im, nil
}

// placeholderDuration is two windows of per, at least 10s.
func placeholderDuration(per string) string {
	switch per {
	case "1s":
		return "10s"
	case "1mo":
		return "1440h"
	case "1y":
		return "17520h"
	}
	n, unit := per[:len(per)-1], per[len(per)-1:]
	v, _ := strconv.ParseInt(n, 10, 64)
	if unit == "s" && 2*v < 10 {
		return "10s"
	}
	return strconv.FormatInt(2*v, 10) + unit
}

// rateUnit writes per as a traffic rate's unit (calendar months and years
// as 720h and 8760h: the placeholder is steady traffic).
func rateUnit(per string) string {
	switch per {
	case "1s":
		return "s"
	case "1m":
		return "m"
	case "1h":
		return "h"
	case "1mo":
		return "720h"
	case "1y":
		return "8760h"
	}
	return per
}

// allOfOrder is the order of an all-of row's fields: its coordination
// before its limits.
var allOfOrder = []string{"name", "label", "commit", "coordination", "write", "sync", "on-store-error"}

// cluster sets the row's cluster fields.
func (m kongMode) cluster(e *scenarios.AlgEntry) {
	e.Coordination = str(m.coordination)
	if m.write != "" {
		e.Write = str(m.write)
	}
	if m.sync != "" {
		e.Sync = scenarios.DurationOf(m.sync)
	}
	if m.onStoreError != "" {
		e.OnStoreError = str(m.onStoreError)
	}
}

// addRow adds the row of scope s, labelled label, and with split, when it
// is an all-of, a row per window after it (labels unique in names). by is
// what the plugin counts by when not the request's key ("" when it is):
// each window counts by it, in an all-of row.
func (k *Kong) addRow(im *Import, base string, s *KongScope, label string, names labels, split bool, by string) {
	p := s.Plugin
	m := p.modeOf(by != "")
	where := "route " + s.Route
	switch {
	case s.Route == "" && s.Service == "":
		where = "every request (no route or service)"
	case s.Route == "":
		where = "service " + s.Service + " (no route)"
	case s.Service != "":
		where += " (service " + s.Service + ")"
	}
	if s.Consumer != "" {
		where += ", consumer " + s.Consumer
	}
	im.note(fmt.Sprintf("%s:%d: %s; %s at %s:%d (on %s); rejects with %d", base, s.Where.Line, where,
		p.Name, base, p.Where.Line, p.scopeText(), p.ErrorCode), m.why, p.keyText())
	if len(p.Ignored) > 0 {
		im.note("not modelled: " + strings.Join(p.Ignored, ", ") + " (the store is the cluster section's)")
	}
	if m.note != "" {
		im.note("NOTE: " + m.note)
	}
	alg := "fixed-window"
	if p.Sliding {
		alg = "sliding-window"
	}
	entry := func(w KongWindow) scenarios.AlgEntry {
		e := scenarios.AlgEntry{Name: str(alg), Rate: scenarios.IntOf(w.Rate()), Per: scenarios.DurationOf(w.Per)}
		if m.countRej {
			e.CountRejected = scenarios.BoolOf(true)
		}
		if by != "" {
			e.By = str(by)
		}
		return e
	}
	if by != "" {
		im.note(byNote(by))
	}
	if len(p.Windows) == 1 && by != "" {
		// a limit by another key than the request's: an all-of of its
		// one window, counting by its own key
		row := scenarios.AlgEntry{Name: str("all-of"), Label: str(label), Commit: str(m.commit)}
		m.cluster(&row)
		i := im.row(row)
		im.Layout.Order[fmt.Sprintf("algorithms[%d]", i)] = allOfOrder
		im.member(i, entry(p.Windows[0]), windowComment(base, p, p.Windows[0]))
		return
	}
	if len(p.Windows) == 1 {
		w := p.Windows[0]
		e := entry(w)
		e.Label = str(label)
		m.cluster(&e)
		im.note(windowComment(base, p, w))
		im.row(e)
		return
	}
	row := scenarios.AlgEntry{Name: str("all-of"), Label: str(label), Commit: str(m.commit)}
	m.cluster(&row)
	i := im.row(row)
	im.Layout.Order[fmt.Sprintf("algorithms[%d]", i)] = allOfOrder
	for _, w := range p.Windows {
		im.member(i, entry(w), windowComment(base, p, w))
	}
	if !split {
		return
	}
	// Each window alone keeps the all-of row's coordination fields: every
	// mode a row of several windows has (local, central, racy) runs one
	// window too. The commit is the all-of's alone: one window has none.
	why := []string{
		"--split-limits: each window above on its own, with the row's coordination (it",
		"admits what its own window allows, whatever the others decide), to compare",
		"with the all-of row",
	}
	if m.note != "" && p.SyncRate > 0 {
		why = append(why, "the NOTE above holds for these rows too (a plugin of one window would be coordination sync)")
	} else if m.note != "" {
		why = append(why, "the NOTE above holds for these rows too")
	}
	var members []splitMember
	for _, w := range p.Windows {
		e := entry(w)
		if by != "" { // an all-of of one window, by its key
			e = scenarios.AlgEntry{Name: str("all-of"), Commit: str(m.commit), Limits: []scenarios.AlgEntry{e}}
		}
		members = append(members, splitMember{label: w.Name, entry: e, comment: []string{windowComment(base, p, w)}})
	}
	from := len(im.File.Algorithms)
	im.splitRows(names, label, why, members, m.cluster)
	for i := from; by != "" && i < len(im.File.Algorithms); i++ {
		im.Layout.Order[fmt.Sprintf("algorithms[%d]", i)] = allOfOrder
	}
}

// windowComment says where a window is written, and why its rate is what
// it is when the limit is not whole.
func windowComment(base string, p *KongPlugin, w KongWindow) string {
	lim := strconv.FormatFloat(w.Limit, 'g', -1, 64)
	var c string
	if p.Name == "rate-limiting-advanced" {
		c = fmt.Sprintf("%s:%d: limit %s per window_size %s", base, w.Where.Line, lim, strings.TrimSuffix(w.Name, "s"))
	} else {
		c = fmt.Sprintf("%s:%d: %s: %s", base, w.Where.Line, w.Name, lim)
	}
	switch w.Per {
	case "1mo":
		c += " (the calendar month, UTC)"
	case "1y":
		c += " (the calendar year, UTC)"
	}
	if float64(w.Rate()) != w.Limit {
		c += fmt.Sprintf(" (Kong admits while the count is below %s: %d a window)", lim, w.Rate())
	}
	return c
}

// keyText says what the plugin counts by.
func (p *KongPlugin) keyText() string {
	field := "limit_by"
	if p.Name == "rate-limiting-advanced" {
		field = "identifier"
	}
	switch p.LimitBy {
	case "ip":
		return field + " ip: one count per client address"
	case "header":
		return field + " header: one count per value of the header " + p.HeaderName + " (the client address without it)"
	case "service":
		return field + " service: one count for the whole service"
	case "route":
		return field + " route: one count for the whole route"
	case "path":
		return field + " path: one count for requests to " + p.Path + " (others by client address)"
	}
	return field + " " + p.LimitBy + ": one count per " + p.LimitBy + " (the client address without one)"
}

// pick returns the scopes that scope names: all when "", else those whose
// name it is, or else those of the route or service of that name.
func (k *Kong) pick(scope string) ([]*KongScope, error) {
	return pickNamed(k.Scopes, scope, k.File, "route or service", (*KongScope).Name,
		func(s *KongScope, name string) bool { return s.Route == name || s.Service == name })
}

// Keys returns what the plugins of the scopes o picks count by, each once:
// ip is the client address, header the header (lower case), service and
// route one key; consumer, credential and consumer-group are KeyOther,
// which replay reads from the field of that name (consumer_group) of a
// CSV, TSV or JSON lines trace, and path KeyOther too.
func (k *Kong) Keys(o Options) ([]Key, error) {
	scopes, err := k.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, s := range scopes {
		keys = addKey(keys, s.Plugin.key())
	}
	return keys, nil
}

// key is what p counts by (Kong.Keys).
func (p *KongPlugin) key() Key {
	key := Key{Kind: KeyOther, Name: p.LimitBy, Where: p.Where}
	if p.LimitBy == "consumer" || p.LimitBy == "credential" || p.LimitBy == "consumer-group" {
		// the field of that name in a CSV, TSV or JSON lines trace
		key.Attr = strings.ReplaceAll(p.LimitBy, "-", "_")
	}
	switch p.LimitBy {
	case "ip":
		key.Kind, key.Name = KeyAddr, ""
	case "header":
		key.Kind, key.Name = KeyHeader, strings.ToLower(p.HeaderName)
	case "service", "route":
		key.Kind, key.Name = KeyGlobal, ""
	case "path":
		// the path for a request to it, the client address for any
		// other: a key of its own per path, which replay derives
		key.Name, key.kongPath = "path "+p.Path, p.Path
		key.Attr = "path_or_ip" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, p.Path)
	}
	return key
}

// kongPathDeriver gives a request the key of a Kong plugin with limit_by
// path (Key.kongPath): the plugin's path when the request's path, without
// its query, is that path, else its client address, as Kong's
// get_identifier does (kong/plugins/rate-limiting/handler.lua).
type kongPathDeriver struct {
	path    string
	vars    []string // the request's path (or request line), its address
	request bool     // vars[0] is a request line
}

func (d *kongPathDeriver) Vars() []string { return d.vars }

func (d *kongPathDeriver) Derive(vals []string) string {
	p := vals[0]
	if d.request {
		// METHOD PATH PROTOCOL
		if f := strings.Fields(p); len(f) >= 2 {
			p = f[1]
		}
	}
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == d.path {
		return d.path
	}
	return vals[1]
}

func (*Kong) keyedLimits() {}
