package gateway

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// KongDefaultNodes is the nodes of the cluster section Kong's import
// writes: Kong's config does not say how many nodes run it, so the
// scenario says 3 and asks the user to set theirs.
const KongDefaultNodes = 3

// kongMode is how a plugin's counters are kept, as a row's coordination,
// with the commit of its windows and whether they count rejected hits.
type kongMode struct {
	coordination string // local, central, racy, sync
	extra        string // the row's other cluster fields (write, sync, on-store-error)
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
func (p *KongPlugin) mode() kongMode {
	store := ""
	if !p.FaultTolerant {
		store = ", on-store-error: deny"
	}
	if p.Name == "rate-limiting" {
		switch p.Policy {
		case "local":
			return kongMode{coordination: "local", commit: "all-or-nothing",
				why: "policy local: each node counts alone; every window counts an admitted request only"}
		case "cluster":
			return kongMode{coordination: "racy", extra: ", write: incr" + store, commit: "all-or-nothing",
				why: "policy cluster: the database's counts are read, then an admitted request incremented (racy reads)"}
		}
		if p.SyncRate > 0 {
			if len(p.Windows) == 1 {
				return kongMode{coordination: "sync", extra: ", sync: " + seconds(p.SyncRate) + store, commit: "all-or-nothing",
					why: "policy redis, sync_rate " + strconv.FormatFloat(p.SyncRate, 'g', -1, 64) + ": each node counts locally and adds its counts to redis every sync_rate"}
			}
			return kongMode{coordination: "central", extra: store, commit: "every-hit", countRej: true,
				why:  "policy redis: one INCR per window per hit in redis; every window counts every hit, admitted or not",
				note: "sync_rate " + strconv.FormatFloat(p.SyncRate, 'g', -1, 64) + " (counts batched every sync_rate) is not modelled for several windows: the row counts every hit in redis at once"}
		}
		return kongMode{coordination: "central", extra: store, commit: "every-hit", countRej: true,
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
		m.coordination, m.extra, m.why = "central", store, "strategy redis, sync_rate 0: every hit counted in redis at once"+pen
	case p.SyncRate == 0:
		m.coordination, m.extra, m.why = "racy", ", write: incr"+store, "strategy cluster, sync_rate 0: the database's counts read, then incremented"+pen
		m.commit, m.countRej = "all-or-nothing", false
		if p.CountRejected {
			m.coordination, m.extra = "central", store
			m.commit, m.countRej = "every-hit", true
			m.note = "the database's counts are read and incremented for every hit: modelled as central (atomic), without the stale reads of the database"
		}
	case len(p.Windows) == 1:
		m.coordination, m.extra, m.why = "sync", ", sync: "+seconds(p.SyncRate)+store, "strategy "+p.Policy+", sync_rate "+strconv.FormatFloat(p.SyncRate, 'g', -1, 64)+": each node counts locally and syncs every sync_rate"+pen
		m.countRej = false
	default:
		m.coordination, m.extra, m.why = "central", store, "strategy "+p.Policy+pen
		m.note = "sync_rate " + strconv.FormatFloat(p.SyncRate, 'g', -1, 64) + " (counts synchronised every sync_rate) is not modelled for several windows: the row counts every hit in the store at once"
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

// Scenario writes the limits of k as a ratesim scenario (YAML): one
// algorithm row per scope, labelled by the scope's name, on a cluster of
// KongDefaultNodes nodes (see mode for each policy's coordination). A
// plugin with one window is a fixed-window row; one with several is an
// all-of row of a fixed-window per window (rate-limiting-advanced's
// sliding windows are sliding-window rows). Each row has comments naming
// the file and line of its route (or service), of its plugin and of each
// window.
func (k *Kong) Scenario(o Options) (string, error) {
	scopes, err := k.pick(o.Scope)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	base := filepath.Base(k.File)
	fmt.Fprintf(&b, "# Imported from %s by ratesim import --from kong: one row per route (or\n", base)
	b.WriteString("# service without routes) with the rate-limiting plugin that Kong runs there,\n")
	b.WriteString("# after its precedence (consumer > route > service > global), and one per\n")
	b.WriteString("# consumer whose own plugin applies instead. Several windows are one all-of row.\n")
	writeNames(&b, base, "The rate limits of "+base+".")
	first := scopes[0].Plugin.Windows[0]
	fmt.Fprintf(&b, "limit: {rate: %d, per: %s}\n", first.Rate(), first.Per)
	fmt.Fprintf(&b, "duration: %s\n", placeholderDuration(first.Per))
	fmt.Fprintf(&b, "# Kong's config does not say how many nodes run it: %d is a placeholder, set\n", KongDefaultNodes)
	b.WriteString("# nodes to yours (with 1 node, local is exact). The store (redis, or the\n")
	b.WriteString("# database of policy cluster) is 1 ms away: set store.rtt to yours.\n")
	fmt.Fprintf(&b, "cluster:\n  nodes: %d\n  store: {rtt: 1ms}\n", KongDefaultNodes)
	b.WriteString("algorithms:\n")
	names := labels{}
	for _, s := range scopes {
		k.writeRow(&b, base, s, names.unique(s.Name()), names, o.SplitLimits)
	}
	writePlaceholderTraffic(&b, 2*first.Rate(), rateUnit(first.Per))
	return b.String(), nil
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

// writeRow writes the row of scope s, labelled label, and with split,
// when it is an all-of, a row per window after it (labels unique in
// names).
func (k *Kong) writeRow(b *strings.Builder, base string, s *KongScope, label string, names labels, split bool) {
	p := s.Plugin
	m := p.mode()
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
	fmt.Fprintf(b, "  # %s:%d: %s; %s at %s:%d (on %s); rejects with %d\n", commentSafe(base), s.Where.Line, commentSafe(where),
		p.Name, commentSafe(base), p.Where.Line, commentSafe(p.scopeText()), p.ErrorCode)
	fmt.Fprintf(b, "  # %s\n", commentSafe(m.why))
	fmt.Fprintf(b, "  # %s\n", commentSafe(p.keyText()))
	if len(p.Ignored) > 0 {
		fmt.Fprintf(b, "  # not modelled: %s (the store is the cluster section's)\n", commentSafe(strings.Join(p.Ignored, ", ")))
	}
	if m.note != "" {
		fmt.Fprintf(b, "  # NOTE: %s\n", commentSafe(m.note))
	}
	alg := "fixed-window"
	if p.Sliding {
		alg = "sliding-window"
	}
	fields := func(w KongWindow) string {
		f := fmt.Sprintf("rate: %d, per: %s", w.Rate(), w.Per)
		if m.countRej {
			f += ", count-rejected: true"
		}
		return f
	}
	if len(p.Windows) == 1 {
		w := p.Windows[0]
		windowComment(b, base, p, w, "  ")
		fmt.Fprintf(b, "  - {name: %s, label: %s, %s, coordination: %s%s}\n", alg, yamlString(label), fields(w), m.coordination, m.extra)
		return
	}
	fmt.Fprintf(b, "  - name: all-of\n    label: %s\n    commit: %s\n    coordination: %s\n", yamlString(label), m.commit, m.coordination)
	for _, kv := range strings.Split(strings.TrimPrefix(m.extra, ", "), ", ") {
		if kv != "" {
			fmt.Fprintf(b, "    %s\n", kv)
		}
	}
	b.WriteString("    limits:\n")
	for _, w := range p.Windows {
		windowComment(b, base, p, w, "      ")
		fmt.Fprintf(b, "      - {name: %s, %s}\n", alg, fields(w))
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
		members = append(members, splitMember{label: w.Name, alg: alg, fields: fields(w),
			comment: func(b *strings.Builder, indent string) { windowComment(b, base, p, w, indent) }})
	}
	writeSplitRows(b, names, label, why, members, ", coordination: "+m.coordination+m.extra)
}

// windowComment writes where a window is written, and why its rate is
// what it is when the limit is not whole.
func windowComment(b *strings.Builder, base string, p *KongPlugin, w KongWindow, indent string) {
	lim := strconv.FormatFloat(w.Limit, 'g', -1, 64)
	name := w.Name
	if p.Name == "rate-limiting-advanced" {
		name = "limit " + lim + " per window_size " + strings.TrimSuffix(w.Name, "s")
		fmt.Fprintf(b, "%s# %s:%d: %s", indent, commentSafe(base), w.Where.Line, name)
	} else {
		fmt.Fprintf(b, "%s# %s:%d: %s: %s", indent, commentSafe(base), w.Where.Line, name, lim)
	}
	switch w.Per {
	case "1mo":
		b.WriteString(" (the calendar month, UTC)")
	case "1y":
		b.WriteString(" (the calendar year, UTC)")
	}
	if float64(w.Rate()) != w.Limit {
		fmt.Fprintf(b, " (Kong admits while the count is below %s: %d a window)", lim, w.Rate())
	}
	b.WriteString("\n")
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
// route one key; consumer, credential, consumer-group and path are
// KeyOther (a log does not carry them).
func (k *Kong) Keys(o Options) ([]Key, error) {
	scopes, err := k.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, s := range scopes {
		p := s.Plugin
		key := Key{Kind: KeyOther, Name: p.LimitBy, Where: p.Where}
		switch p.LimitBy {
		case "ip":
			key.Kind, key.Name = KeyAddr, ""
		case "header":
			key.Kind, key.Name = KeyHeader, strings.ToLower(p.HeaderName)
		case "service", "route":
			key.Kind, key.Name = KeyGlobal, ""
		}
		keys = addKey(keys, key)
	}
	return keys, nil
}
