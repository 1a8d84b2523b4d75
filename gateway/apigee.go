package gateway

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/scenarios"
)

// Apigee is an Apigee policy file read: one SpikeArrest or Quota policy
// (apiproxy/policies/NAME.xml of a proxy bundle), as Apigee's "SpikeArrest
// policy" and "Quota policy" references describe their elements.
type Apigee struct {
	File   string
	Policy *ApigeePolicy
}

// ApigeePolicy is one policy: its kind (SpikeArrest or Quota), its name
// attribute, and the row it is.
type ApigeePolicy struct {
	Kind, Name string
	Where      Pos
	// Rate and Per: a SpikeArrest's <Rate> (N per 1s or 1m), a Quota's
	// <Allow count> per <Interval> <TimeUnit>; Per is "1mo" for a month.
	Rate int64
	Per  string
	// UseEffectiveCount (SpikeArrest) and QuotaType (Quota: calendar,
	// flexi, rollingwindow; "" when the policy has no type).
	UseEffectiveCount bool
	QuotaType         string
	Key               Key
	// Notes are what the row does not model, each with its line.
	Notes []string
}

// apigeeNode is one element of the policy, with where it starts.
type apigeeNode struct {
	name     string
	attrs    map[string]string
	text     string
	line     int
	col      int
	children []*apigeeNode
}

func (n *apigeeNode) child(name string) *apigeeNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// parseApigeeXML reads data into a tree of elements with their positions.
func parseApigeeXML(file string, data []byte) (*apigeeNode, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []*apigeeNode
	var root *apigeeNode
	for {
		line, col := d.InputPos()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, &Error{File: file, Line: se.Line, Col: 1, Msg: "not well-formed XML: " + se.Msg}
			}
			return nil, &Error{File: file, Msg: "not well-formed XML: " + err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &apigeeNode{name: t.Name.Local, attrs: map[string]string{}, line: line, col: col}
			for _, a := range t.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, &Error{File: file, Line: line, Col: col, Msg: "a second top-level element: want one policy per file"}
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, &Error{File: file, Msg: "no element: want an Apigee SpikeArrest or Quota policy"}
	}
	return root, nil
}

// ReadApigee reads an Apigee SpikeArrest or Quota policy. What it cannot
// map (a rate or count from a flow variable alone, Quota's per-class
// counts, UseQuotaConfigInAPIProduct, an unknown element) is an error
// naming file:line:col.
func ReadApigee(file string, data []byte) (*Apigee, error) {
	root, err := parseApigeeXML(file, data)
	if err != nil {
		return nil, err
	}
	at := func(n *apigeeNode, format string, args ...any) error {
		return &Error{File: file, Line: n.line, Col: n.col, Msg: fmt.Sprintf(format, args...)}
	}
	p := &ApigeePolicy{Kind: root.name, Name: root.attrs["name"], Where: Pos{Line: root.line, Col: root.col}}
	if p.Name == "" {
		p.Name = strings.ToLower(root.name)
	}
	base := filepath.Base(file)
	note := func(n *apigeeNode, format string, args ...any) {
		p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: ", base, n.line)+fmt.Sprintf(format, args...))
	}
	if root.attrs["enabled"] == "false" {
		note(root, "enabled=\"false\": Apigee does not enforce this policy; the row does")
	}
	var allowed []string
	switch root.name {
	case "SpikeArrest":
		allowed = []string{"DisplayName", "Properties", "Identifier", "MessageWeight", "Rate", "UseEffectiveCount"}
	case "Quota":
		allowed = []string{"DisplayName", "Properties", "Identifier", "MessageWeight", "Allow", "Interval", "TimeUnit",
			"StartTime", "Distributed", "Synchronous", "AsynchronousConfiguration"}
	default:
		return nil, at(root, "<%s>: want an Apigee SpikeArrest or Quota policy", root.name)
	}
	for _, c := range root.children {
		if !slices.Contains(allowed, c.name) {
			return nil, at(c, "<%s>: not an element of %s that ratesim reads (want %s)", c.name, root.name, strings.Join(allowed, ", "))
		}
	}
	p.Key = Key{Kind: KeyGlobal}
	if id := root.child("Identifier"); id != nil {
		p.Key = apigeeKey(id.attrs["ref"], Pos{Line: id.line, Col: id.col})
		if p.Key.Kind == KeyOther {
			note(id, "Identifier ref=%q: each value of it is a key", id.attrs["ref"])
		}
	}
	if w := root.child("MessageWeight"); w != nil {
		note(w, "MessageWeight ref=%q: the weight is the traffic's cost", w.attrs["ref"])
	}
	switch root.name {
	case "SpikeArrest":
		err = p.readSpikeArrest(root, at, note)
	case "Quota":
		err = p.readQuota(root, at, note)
	}
	if err != nil {
		return nil, err
	}
	return &Apigee{File: file, Policy: p}, nil
}

// apigeeKey is what an Identifier's flow variable counts by.
func apigeeKey(ref string, where Pos) Key {
	switch {
	case strings.HasPrefix(ref, "request.header."):
		return Key{Kind: KeyHeader, Name: strings.ToLower(strings.TrimPrefix(ref, "request.header.")), Where: where}
	case ref == "client.ip" || ref == "proxy.client.ip":
		return Key{Kind: KeyAddr, Where: where}
	}
	return Key{Kind: KeyOther, Name: ref, Where: where}
}

var apigeeRate = regexp.MustCompile(`^([0-9]+)(ps|pm)$`)

func (p *ApigeePolicy) readSpikeArrest(root *apigeeNode, at func(*apigeeNode, string, ...any) error, note func(*apigeeNode, string, ...any)) error {
	r := root.child("Rate")
	if r == nil {
		return at(root, "<SpikeArrest> has no <Rate> (it is required)")
	}
	text := strings.TrimSpace(r.text)
	if ref := r.attrs["ref"]; ref != "" {
		if text == "" {
			return at(r, "<Rate ref=%q>: the rate comes from a flow variable; write the rate as the element's text (Apigee's fallback) to import it", ref)
		}
		note(r, "Rate ref=%q: the row takes the fallback %s", ref, text)
	}
	m := apigeeRate.FindStringSubmatch(text)
	if m == nil {
		return at(r, "<Rate>%s: want Nps or Npm, like 30ps or 100pm", text)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n < 1 {
		return at(r, "<Rate>%s: want a rate of at least 1", text)
	}
	p.Rate, p.Per = n, "1s"
	if m[2] == "pm" {
		p.Per = "1m"
	}
	if u := root.child("UseEffectiveCount"); u != nil {
		switch strings.TrimSpace(u.text) {
		case "true":
			p.UseEffectiveCount = true
		case "false":
		default:
			return at(u, "<UseEffectiveCount>%s: want true or false", strings.TrimSpace(u.text))
		}
	}
	if !p.UseEffectiveCount {
		note(r, "%s is smoothed: one request every %v, per message processor", text, apigeeInterval(n, p.Per))
	}
	return nil
}

// apigeeInterval is per/rate, for the comment.
func apigeeInterval(n int64, per string) time.Duration {
	d := time.Second
	if per == "1m" {
		d = time.Minute
	}
	return d / time.Duration(n)
}

var apigeeUnits = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour}

func (p *ApigeePolicy) readQuota(root *apigeeNode, at func(*apigeeNode, string, ...any) error, note func(*apigeeNode, string, ...any)) error {
	switch t := root.attrs["type"]; t {
	case "", algorithms.QuotaCalendar, algorithms.QuotaFlexi, algorithms.QuotaRollingWindow:
		p.QuotaType = t
	default:
		return at(root, "<Quota type=%q>: want calendar, flexi or rollingwindow", t)
	}
	allow := root.child("Allow")
	if allow == nil {
		return at(root, "<Quota> has no <Allow>")
	}
	if len(allow.children) > 0 {
		return at(allow.children[0], "<Allow> with <%s>: per-class counts are not modelled", allow.children[0].name)
	}
	count := allow.attrs["count"]
	if count == "" {
		return at(allow, "<Allow> has no count (a countRef alone comes from a flow variable; give count as its fallback)")
	}
	if ref := allow.attrs["countRef"]; ref != "" {
		note(allow, "Allow countRef=%q: the row takes the fallback count %s", ref, count)
	}
	n, err := strconv.ParseInt(count, 10, 64)
	if err != nil || n < 1 {
		return at(allow, "<Allow count=%q>: want an integer of at least 1", count)
	}
	p.Rate = n
	iv, tu := root.child("Interval"), root.child("TimeUnit")
	if iv == nil || tu == nil {
		return at(root, "<Quota> needs <Interval> and <TimeUnit>")
	}
	k, err := strconv.ParseInt(strings.TrimSpace(iv.text), 10, 64)
	if err != nil || k < 1 {
		return at(iv, "<Interval>%s: want an integer of at least 1 (a ref alone comes from a flow variable)", strings.TrimSpace(iv.text))
	}
	unit := strings.TrimSpace(tu.text)
	switch d, ok := apigeeUnits[unit]; {
	case unit == "month":
		if k != 1 {
			return at(iv, "<Interval>%d with month: ratesim counts one calendar month (per: 1mo), not %d", k, k)
		}
		if p.QuotaType == algorithms.QuotaFlexi || p.QuotaType == algorithms.QuotaRollingWindow {
			return at(tu, "<TimeUnit>month with type %s: only calendar months are modelled", p.QuotaType)
		}
		p.Per = "1mo"
	case ok:
		p.Per = scenarios.DurationText(time.Duration(k) * d)
		if unit == "week" && p.QuotaType != algorithms.QuotaFlexi && p.QuotaType != algorithms.QuotaRollingWindow {
			note(tu, "weeks are aligned to the Unix epoch (a Thursday, UTC)")
		}
	default:
		return at(tu, "<TimeUnit>%s: want minute, hour, day, week or month", unit)
	}
	if st := root.child("StartTime"); st != nil {
		note(st, "StartTime %s: windows are aligned to the Unix epoch in UTC, not to it", strings.TrimSpace(st.text))
	}
	for _, name := range []string{"Distributed", "Synchronous"} {
		if c := root.child(name); c != nil && strings.TrimSpace(c.text) == "true" {
			note(c, "%s true: one counter for every message processor; the row is one node's", name)
		}
	}
	return nil
}

// Scenario makes the policy one row: apigee-spike-arrest or apigee-quota,
// labelled by the policy's name, with comments naming the lines of what it
// does not model. The scenario's limit is the row's; its traffic a
// placeholder at twice that rate.
func (a *Apigee) Scenario(o Options) (*Import, error) {
	p := a.Policy
	if o.Scope != "" && o.Scope != p.Name {
		return nil, fmt.Errorf("--scope %q: no scope of %s has that name (its scopes: %q)", o.Scope, a.File, p.Name)
	}
	base := filepath.Base(a.File)
	im := newImport(base, "The "+p.Kind+" policy of "+base+".",
		"Imported from "+base+" by ratesim import --from apigee: the policy's row,",
		"its key "+p.Key.String()+".")
	im.File.Limit = limit(p.Rate, p.Per)
	im.File.Duration = scenarios.DurationOf("10s")
	if p.Per == "1mo" || p.Per != "1s" && p.Per != "1m" {
		im.File.Duration = scenarios.DurationOf("72h")
	}
	im.note(append([]string{fmt.Sprintf("%s:%d: %s %s", base, p.Where.Line, p.Kind, p.Name)}, p.Notes...)...)
	e := scenarios.AlgEntry{Label: str(p.Name), Rate: scenarios.IntOf(p.Rate), Per: scenarios.DurationOf(p.Per)}
	switch p.Kind {
	case "SpikeArrest":
		e.Name = str("apigee-spike-arrest")
		if p.UseEffectiveCount {
			e.UseEffectiveCount = scenarios.BoolOf(true)
		}
	default:
		e.Name = str("apigee-quota")
		if p.QuotaType != "" {
			e.QuotaType = str(p.QuotaType)
		}
	}
	im.row(e)
	unit := p.Per
	if unit == "1mo" {
		unit = "1h"
	}
	im.placeholderTraffic(2*p.Rate, unit)
	return im, nil
}

// Keys returns the policy's Identifier.
func (a *Apigee) Keys(o Options) ([]Key, error) {
	if o.Scope != "" && o.Scope != a.Policy.Name {
		return nil, fmt.Errorf("--scope %q: no scope of %s has that name (its scopes: %q)", o.Scope, a.File, a.Policy.Name)
	}
	return []Key{a.Policy.Key}, nil
}

func guessApigee(_ string, data []byte) bool {
	s := string(data)
	return strings.Contains(s, "<SpikeArrest") || strings.Contains(s, "<Quota")
}
