package gateway

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
)

// This file says which of a config's keys is the request's and which are
// attributes of it, for every gateway (docs/gateways.md, "Each limit's own
// key"). The request's key is the first key of Keys that is not
// KeyGlobal: replay takes it from the log with --key-field, and the
// limits that count by it count by the default, key. A limit by
// KeyGlobal counts every request together (by: global); a limit by any
// other key counts by an attribute named after it (Key.attr), which
// replay takes from its own field of the log.

// keyedLimits is a Config whose Scenario gives each limit its own key
// (by: on an all-of member) when the limits count by different keys;
// replay --gateway then reads each key from the log. Other configs'
// replays take one key for every limit.
type keyedLimits interface {
	keyedLimits()
}

// primaryOf is the request's key among keys: the first that is not
// KeyGlobal, an nginx map's variable (whose value may be empty, which
// limits nothing), a key with a Default (a request without it has one),
// an HAProxy counter's key where its track's condition holds (which a
// request may lack) nor a key replay derives (Kong's limit_by path); ok
// is false when every one is (or there is none).
func primaryOf(keys []Key) (Key, bool) {
	for _, k := range keys {
		if k.Kind != KeyGlobal && k.mapped == nil && k.Default == "" && k.cond == nil && k.kongPath == "" {
			return k, true
		}
	}
	return Key{}, false
}

// byOf is the by: of a limit that counts by k when primary is the
// request's key (ok false: there is none): "" for the key, "global", or
// the attribute named after k.
func byOf(k Key, primary Key, ok bool) string {
	switch {
	case k.Kind == KeyGlobal:
		return "global"
	case ok && sameKey(k, primary):
		return ""
	}
	return k.attr()
}

// attr names the attribute of a key that is not the request's: the
// client address remote_addr, a header http_NAME (nginx's variable),
// Key.Attr where the reader names it (Kong's consumer), else the nginx
// variable without its $.
func (k Key) attr() string {
	if k.cond != nil {
		// an HAProxy counter's key, counted only where its track's
		// condition holds: an attribute of its own
		base := k
		base.cond = nil
		return fmt.Sprintf("%s_sc%d", base.attr(), k.sc)
	}
	switch {
	case k.Kind == KeyAddr:
		return "remote_addr"
	case k.Kind == KeyHeader:
		return "http_" + strings.ReplaceAll(k.Name, "-", "_")
	case k.Attr != "":
		return k.Attr
	}
	r := strings.NewReplacer("${", "", "}", "", "$", "")
	name := r.Replace(k.Name)
	if name == "" || name == "key" || name == "global" {
		name = "var_" + name
	}
	return name
}

// byNote says in a row's comment what its by: means.
func byNote(by string) string {
	if by == "global" {
		return "one counter for every request (by: global)"
	}
	return "counts by " + by + ", not by the request's key (by: " + by + ")"
}

// attributes gives the placeholder traffic every attribute that a limit
// of the scenario counts by, valued by its own name, so that the import
// loads (replay --gateway reads each from its field of the log).
func (im *Import) attributes() {
	var names []string
	for _, a := range im.File.Algorithms {
		for _, m := range a.Limits {
			if by := m.By.Text; m.By.Set() && by != "global" && by != "key" && !slices.Contains(names, by) {
				names = append(names, by)
			}
		}
	}
	if len(names) == 0 || len(im.File.Traffic) == 0 {
		return
	}
	src := &im.File.Traffic[0]
	for _, n := range names {
		src.Attributes = append(src.Attributes, scenarios.Attribute{Name: n, Value: str(n)})
	}
}
