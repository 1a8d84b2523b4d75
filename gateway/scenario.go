package gateway

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scenario writes the limits of n as a ratesim scenario (YAML): one
// algorithm row per scope, labelled by the scope's name. A scope with one
// limit_req is an nginx row; one with several is an all-of row with
// commit all-or-nothing, nginx's rule for several limits (a request
// charges no zone unless every zone passes it, and waits the largest
// delay). Each row has a comment naming the file and line of each of its
// limit_req, and of its limit_req_zone. o.Scope, when not empty, keeps
// the one scope whose name it is (or whose location it is, when that is
// unique).
//
// The scenario's limit is the first row's first limit, and its traffic a
// placeholder (a steady source at twice that rate) for the user to
// replace: the config says nothing of the traffic.
func (n *Nginx) Scenario(o Options) (string, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	base := filepath.Base(n.File)
	fmt.Fprintf(&b, "# Imported from %s by ratesim import --from nginx: one row per location,\n", base)
	b.WriteString("# with the limit_req that apply there (inherited from server and http when\n")
	b.WriteString("# the location has none of its own). Several limit_req are one all-of row:\n")
	b.WriteString("# nginx charges no zone unless all pass, and delays by the largest delay.\n")
	writeNames(&b, base, "The limit_req of "+base+".")
	first := scopes[0].Limits[0].Zone
	fmt.Fprintf(&b, "limit: {rate: %d, per: %s}\n", first.Rate, per(first))
	b.WriteString("duration: 10s\n")
	b.WriteString("algorithms:\n")
	names := labels{}
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
		fmt.Fprintf(&b, "  # %s:%d: %s; rejects with %d", commentSafe(base), s.Where.Line, commentSafe(where), s.Status)
		if s.DryRun {
			b.WriteString("; limit_req_dry_run on: nginx passes every request and only logs the verdict")
		}
		b.WriteString("\n")
		if len(s.Limits) == 1 {
			l := s.Limits[0]
			limitComment(&b, base, l, "  ")
			fmt.Fprintf(&b, "  - {name: nginx, label: %s, %s}\n", yamlString(label), limitFields(l))
			continue
		}
		if keys := distinctKeys(s.Limits); len(keys) > 1 {
			fmt.Fprintf(&b, "  # NOTE: these limits have different keys (%s); the row applies them all\n", commentSafe(strings.Join(keys, ", ")))
			b.WriteString("  # to the one key of each request, so it is nginx's only when those keys agree.\n")
		}
		fmt.Fprintf(&b, "  - name: all-of\n    label: %s\n    commit: all-or-nothing\n    limits:\n", yamlString(label))
		for _, l := range s.Limits {
			limitComment(&b, base, l, "      ")
			fmt.Fprintf(&b, "      - {name: nginx, %s}\n", limitFields(l))
		}
		if o.SplitLimits {
			var members []splitMember
			for _, l := range s.Limits {
				members = append(members, splitMember{label: "zone=" + l.Zone.Name, alg: "nginx", fields: limitFields(l),
					comment: func(b *strings.Builder, indent string) { limitComment(b, base, l, indent) }})
			}
			writeSplitRows(&b, names, label, []string{
				"--split-limits: each limit_req above on its own (it charges every request",
				"it passes, whatever the others decide), to compare with the all-of row",
			}, members, "")
		}
	}
	writePlaceholderTraffic(&b, 2*first.Rate, map[int64]string{1: "s", 60: "m"}[first.PerS])
	return b.String(), nil
}

func per(z *NginxZone) string {
	if z.PerS == 60 {
		return "1m"
	}
	return "1s"
}

// limitComment writes the comment line of one limit_req: where it and its
// zone are, and nginx's truncated rate when it is not whole.
func limitComment(b *strings.Builder, base string, l NginxLimit, indent string) {
	z := l.Zone
	fmt.Fprintf(b, "%s# %s:%d: %s; zone %s at %s:%d: key %s, rate=%d%s",
		indent, commentSafe(base), l.Where.Line, commentSafe(l.Text), commentSafe(z.Name), commentSafe(base), z.Where.Line, commentSafe(z.Key), z.Rate, map[int64]string{1: "r/s", 60: "r/m"}[z.PerS])
	if milli := z.Rate * 1000 / z.PerS; z.Rate*1000%z.PerS != 0 {
		fmt.Fprintf(b, " (nginx keeps %d milli-requests/s: one request every %s)", milli, msPer(milli))
	}
	fmt.Fprintf(b, ", %s (the zone's size is not modelled)\n", commentSafe(z.Size))
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

// limitFields writes the row fields of one limit_req.
func limitFields(l NginxLimit) string {
	s := fmt.Sprintf("rate: %d, per: %s, burst: %d", l.Zone.Rate, per(l.Zone), l.Burst)
	if l.Nodelay {
		s += ", nodelay: true"
	}
	if l.Delay > 0 {
		s += fmt.Sprintf(", delay: %d", l.Delay)
	}
	return s
}

// yamlString quotes s for YAML when it needs it (a double-quoted YAML
// string reads Go's quoting of printable ASCII alike).
func yamlString(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			plain = false
		}
	}
	if plain {
		if _, err := strconv.ParseFloat(s, 64); err != nil && s != "true" && s != "false" && s != "null" {
			return s
		}
	}
	return strconv.Quote(s)
}

// distinctKeys returns the zones' keys of limits, each once, in order.
func distinctKeys(limits []NginxLimit) []string {
	var keys []string
	for _, l := range limits {
		if !slices.Contains(keys, l.Zone.Key) {
			keys = append(keys, l.Zone.Key)
		}
	}
	return keys
}

// commentSafe keeps text from a config on one comment line: a quoted
// nginx word may hold line breaks.
func commentSafe(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
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

// Keys returns the keys of the zones that the scopes o picks use, each
// once, in order: $binary_remote_addr and $remote_addr are the client
// address, $http_NAME the header NAME (nginx's underscores are dashes),
// anything else a variable replay cannot find in a log.
func (n *Nginx) Keys(o Options) ([]Key, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	var keys []Key
	seen := map[string]bool{}
	for _, s := range scopes {
		for _, l := range s.Limits {
			z := l.Zone
			if seen[z.Key] {
				continue
			}
			seen[z.Key] = true
			keys = append(keys, nginxKey(z))
		}
	}
	return keys, nil
}

func nginxKey(z *NginxZone) Key {
	k := Key{Kind: KeyOther, Name: z.Key, Where: z.Where}
	switch {
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
