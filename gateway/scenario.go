package gateway

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// Scenario makes the limits of n a ratesim scenario: one algorithm row
// per scope, labelled by the scope's name. A scope with one limit_req is
// an nginx row; one with several is an all-of row with commit
// all-or-nothing, nginx's rule for several limits (a request charges no
// zone unless every zone passes it, and waits the largest delay). Each
// row has a comment naming the file and line of each of its limit_req,
// and of its limit_req_zone. o.Scope, when not empty, keeps the one scope
// whose name it is (or whose location it is, when that is unique).
//
// The scenario's limit is the first row's first limit, and its traffic a
// placeholder (a steady source at twice that rate) for the user to
// replace: the config says nothing of the traffic.
func (n *Nginx) Scenario(o Options) (*Import, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(n.File)
	im := newImport(base, "The limit_req of "+base+".",
		"Imported from "+base+" by ratesim import --from nginx: one row per location,",
		"with the limit_req that apply there (inherited from server and http when",
		"the location has none of its own). Several limit_req are one all-of row:",
		"nginx charges no zone unless all pass, and delays by the largest delay.")
	first := scopes[0].Limits[0].Zone
	im.File.Limit = limit(first.Rate, per(first))
	im.File.Duration = scenarios.DurationOf("10s")
	names := labels{}
	primary, hasPrimary := primaryKey(scopes)
	var attrs []string // the attributes the members count by, in order
	for _, s := range scopes {
		label := s.Name()
		if label == "" {
			label = "server"
		}
		label = names.unique(label)
		where := "location " + s.Location
		if s.Location == "" {
			where = "server"
		}
		if s.Server != "" {
			where += " (server " + s.Server + ")"
		}
		head := fmt.Sprintf("%s:%d: %s; rejects with %d", base, s.Where.Line, where, s.Status)
		if s.DryRun {
			head += "; limit_req_dry_run on: nginx passes every request and only logs the verdict"
		}
		im.note(head)
		if len(s.Limits) == 1 && zoneBy(s.Limits[0].Zone, primary, hasPrimary) == "" {
			l := s.Limits[0]
			e := limitEntry(l)
			e.Label = str(label)
			im.note(limitComment(base, l))
			im.row(e)
			continue
		}
		// several limits, or one that counts by another key than the
		// request's: an all-of row, each member by its zone's key
		row := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str(label), Commit: str("all-or-nothing")})
		for _, l := range s.Limits {
			e := limitEntry(l)
			if o.LimitLabels {
				e.Label = str(fmt.Sprintf("zone=%s (%s:%d)", l.Zone.Name, base, l.Where.Line))
			}
			by := zoneBy(l.Zone, primary, hasPrimary)
			if by != "" {
				e.By = str(by)
				if by != "global" && !slices.Contains(attrs, by) {
					attrs = append(attrs, by)
				}
			}
			im.member(row, e, limitComment(base, l)+byComment(l.Zone, by))
		}
		if o.SplitLimits {
			var members []splitMember
			for _, l := range s.Limits {
				e := limitEntry(l)
				if by := zoneBy(l.Zone, primary, hasPrimary); by != "" {
					// alone, a limit by another key is an all-of of one
					m := e
					m.By = str(by)
					e = scenarios.AlgEntry{Name: str("all-of"), Limits: []scenarios.AlgEntry{m}}
				}
				members = append(members, splitMember{label: "zone=" + l.Zone.Name, entry: e, comment: []string{limitComment(base, l)}})
			}
			im.splitRows(names, label, []string{
				"--split-limits: each limit_req above on its own (it charges every request",
				"it passes, whatever the others decide), to compare with the all-of row",
			}, members, nil)
		}
	}
	im.placeholderTraffic(2*first.Rate, map[int64]string{1: "s", 60: "m"}[first.PerS])
	for _, a := range attrs {
		src := &im.File.Traffic[0]
		src.Attributes = append(src.Attributes, scenarios.Attribute{Name: a, Value: str(a)})
	}
	return im, nil
}

func per(z *NginxZone) string {
	if z.PerS == 60 {
		return "1m"
	}
	return "1s"
}

// limitComment is the comment line of one limit_req: where it and its
// zone are, and nginx's truncated rate when it is not whole.
func limitComment(base string, l NginxLimit) string {
	z := l.Zone
	c := fmt.Sprintf("%s:%d: %s; zone %s at %s:%d: key %s, rate=%d%s",
		base, l.Where.Line, l.Text, z.Name, base, z.Where.Line, z.Key, z.Rate, map[int64]string{1: "r/s", 60: "r/m"}[z.PerS])
	if milli := z.Rate * 1000 / z.PerS; z.Rate*1000%z.PerS != 0 {
		c += fmt.Sprintf(" (nginx keeps %d milli-requests/s: one request every %s)", milli, msPer(milli))
	}
	return c + ", " + z.Size + " (the zone's size is not modelled)"
}

// msPer returns the time one request takes at milli milli-requests/s,
// 1000/milli s, in whole ns (with ~ when it is not whole).
func msPer(milli int64) string {
	const oneRequestNs = 1000 * int64(time.Second) // 1000 milli-requests, in ns*milli/s
	d := time.Duration(oneRequestNs / milli)
	if oneRequestNs%milli != 0 {
		return "~" + d.String()
	}
	return d.String()
}

// limitEntry is the nginx row of one limit_req.
func limitEntry(l NginxLimit) scenarios.AlgEntry {
	e := scenarios.AlgEntry{Name: str("nginx"), Rate: scenarios.IntOf(l.Zone.Rate), Per: scenarios.DurationOf(per(l.Zone)), Burst: scenarios.IntOf(l.Burst)}
	if l.Nodelay {
		e.Nodelay = scenarios.BoolOf(true)
	}
	if l.Delay > 0 {
		e.Delay = scenarios.IntOf(l.Delay)
	}
	return e
}

// pick returns the scopes that scope names: all of them when it is "",
// else the one whose name it is or, failing that, whose location it is.
func (n *Nginx) pick(scope string) ([]*NginxScope, error) {
	if scope == "" {
		return n.Scopes, nil
	}
	var picked []*NginxScope
	for _, s := range n.Scopes {
		if s.Name() == scope {
			picked = append(picked, s)
		}
	}
	if len(picked) == 0 {
		for _, s := range n.Scopes {
			if s.Location == scope {
				picked = append(picked, s)
			}
		}
	}
	if len(picked) != 1 {
		var names []string
		for _, s := range n.Scopes {
			names = append(names, strconv.Quote(s.Name()))
		}
		what := "no scope"
		if len(picked) > 1 {
			what = "more than one scope"
		}
		return nil, fmt.Errorf("--scope %q: %s of %s has that name (its scopes: %s)", scope, what, n.File, strings.Join(names, ", "))
	}
	return picked, nil
}

// Keys returns what the limits of the scopes o picks count by, for replay
// (nginxkeys.go): the request's key first, the first variable key in the
// order of the config, then the other variable keys, each once, which the
// rows count by as attributes. $binary_remote_addr and $remote_addr are
// the client address, $http_NAME the header NAME (nginx's underscores are
// dashes), anything else a variable replay cannot find in a log. When
// every zone's key is constant, the one key is KeyGlobal.
func (n *Nginx) Keys(o Options) ([]Key, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	primary, ok := primaryKey(scopes)
	var keys []Key
	if !ok {
		// no request's key: one for every request, and the maps' keys
		// (none when every zone's key is constant) as attributes
		keys = []Key{{Kind: KeyGlobal, Where: scopes[0].Limits[0].Zone.Where}}
	}
	for _, s := range scopes {
		for _, l := range s.Limits {
			z := l.Zone
			if zoneConstant(z) {
				continue
			}
			k := nginxKey(z)
			if sameKey(k, primary) {
				k = primary // where the request's key is first named
			}
			if !slices.ContainsFunc(keys, func(have Key) bool { return sameKey(have, k) }) {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil // the request's key is the first variable key (or global): first
}

func nginxKey(z *NginxZone) Key {
	k := Key{Kind: KeyOther, Name: z.Key, Where: z.Where}
	switch {
	case z.Map != nil:
		k.Attr, k.mapped = z.Map.Var, z.Map
	case z.Key == "$binary_remote_addr" || z.Key == "$remote_addr":
		k.Kind = KeyAddr
	case strings.HasPrefix(z.Key, "$http_") && len(z.Key) > len("$http_"):
		k.Kind, k.Name = KeyHeader, strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(z.Key, "$http_")), "_", "-")
	}
	return k
}

// AccessLogs returns the access logs of the scopes o picks, each path and
// format once, in the order of the config: the logs their requests are
// written to, after inheritance (Logger).
func (n *Nginx) AccessLogs(o Options) ([]AccessLog, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var out []AccessLog
	for _, s := range scopes {
		for _, l := range s.Logs {
			if !slices.ContainsFunc(out, func(m AccessLog) bool { return m.Path == l.Path && m.Format == l.Format }) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// RejectStatuses returns the limit_req_status of the scopes o picks, each
// once, in order (Rejecter).
func (n *Nginx) RejectStatuses(o Options) ([]int, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, s := range scopes {
		if !slices.Contains(out, s.Status) {
			out = append(out, s.Status)
		}
	}
	return out, nil
}

var (
	_ Config   = (*Nginx)(nil)
	_ Logger   = (*Nginx)(nil)
	_ Rejecter = (*Nginx)(nil)
)
