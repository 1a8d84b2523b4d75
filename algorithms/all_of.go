package algorithms

import (
	"fmt"
	"strings"
	"time"
)

// Commit is how an all-of row charges its member limits.
type Commit string

const (
	// AllOrNothing checks every member on a copy of its state and charges
	// them all only when every one admits the request: nginx's limit_req
	// with several limits (ngx_http_limit_req_module.c: the handler looks
	// each limit up with account = 0 but the last, stops at the first that
	// returns NGX_BUSY and unlocks the others uncharged; only when all pass
	// does ngx_http_limit_req_account charge them, and the delay is the
	// largest of theirs), and Kong's local policy (every window is
	// incremented only on accept).
	AllOrNothing Commit = "all-or-nothing"
	// EveryHit decides every member on the request as it alone would, so
	// that each counts every hit by its own rule (a member that admits is
	// charged even when another rejects; one with count-rejected counts
	// its rejects too): envoy's ratelimit service (each descriptor's
	// counter is incremented by the hit, and the request is OVER_LIMIT if
	// any is over) and Kong's redis policy.
	EveryHit Commit = "every-hit"
	// InOrder decides the members in order, each charged as it admits,
	// stopping at the first that rejects; what the earlier ones took is
	// not refunded: envoy's local_ratelimit with several token buckets
	// (the descriptors' buckets are consumed in order until one has no
	// token).
	InOrder Commit = "in-order"
)

// Commits lists the commit modes, the default first.
var Commits = []Commit{AllOrNothing, EveryHit, InOrder}

// Member is one limit of an all-of row: an algorithm with its params, and
// what it counts by.
type Member struct {
	Name   string
	Params Params
	// By is what the member counts requests by: ByKey, the request's key
	// (the zero value); ByAll, one count shared by every request (a global
	// limit: nginx's limit_req_zone on $server_name in one server block);
	// or j >= 1, the request's attribute j-1, attrs[j] of DecideAttrs.
	By int
	// Label names the member where outputs say which limit fired (an
	// import's "zone=perclient (nginx.conf:8)"); "" for limits[i].
	Label string
}

// The members' By that are not an attribute.
const (
	ByKey = 0
	ByAll = -1
)

// AllOfMembers lists the algorithms an all-of row takes as members: those
// that can decide on a copy of a key's state and keep it or drop it.
var AllOfMembers = []string{"nginx", "fixed-window", "sliding-window", "token-bucket"}

// AllOfOptInMembers are the opt-in rows an all-of row also takes as
// members (an API Gateway usage plan's quota beside its throttles); like
// every opt-in row they are not named in messages.
var AllOfOptInMembers = []string{"aws-usage-plan"}

// AllOfCountingMembers are the algorithms an all-of row takes as members
// with commit every-hit or in-order only: they count every request they
// are asked about, admitted or not, so no all-or-nothing commit can leave
// them uncharged. HAProxy's track-scN counts the request before any deny
// reads the rate (src/http_act.c: http_action_track_sc): several tracked
// counters of one frontend are every-hit when every track comes before
// the first deny, in-order when each counter's track comes after the
// previous counter's deny (a denied request stops the rules).
// azure-rate-limit keeps each request in its log as it decides (its
// sliding log cannot decide on a copy): API Management applies the
// rate-limit policies of a request's scopes one after the other, each
// counting the request as it admits it, the first that refuses answering
// 429 (docs/gateways.md, Azure), which is in-order.
var AllOfCountingMembers = []string{"haproxy", "azure-rate-limit"}

// CountingWhy says why member name, one of AllOfCountingMembers, takes no
// all-or-nothing commit.
func CountingWhy(name string) string {
	if name == "azure-rate-limit" {
		return "azure-rate-limit logs each request it admits as it decides"
	}
	return name + " counts every request it is asked about, admitted or not"
}

// AllOf is several limits applied to one request, as a gateway enforces
// the limits that apply to it together (docs/gateways.md).
//
// Rule, by Commit (see each mode for its source):
//   - all-or-nothing: every member decides on a copy of its state; the
//     request is rejected iff any member rejects, and then no member is
//     charged (not even a member with count-rejected); otherwise every
//     member keeps its copy.
//   - every-hit: every member decides and keeps its own result, as if it
//     were alone; rejected iff any member rejects.
//   - in-order: the members decide in order, each keeping its result,
//     stopping at the first that rejects (the later ones are not asked);
//     rejected iff one rejects.
//
// An admitted request is delayed by the largest of the members' delays
// (nginx: the largest delay of the limits); nodelay members delay nothing.
// A rejected request's retry_after is the largest of the rejecting
// members' (Never if any says Never); in every-hit and in-order, only the
// members asked count.
//
// State: the members' own, per key, each released as the member releases
// it. Memory: BytesPerKeyMax is the sum of the members' (a key may hold
// state in all of them), BytesPeak the most bytes the members held
// together right after a decision, and KeysPeak the most keys any one
// member held at once then (a lower bound of the keys holding state in
// some member, exact when every member holds the same keys).
//
// Members are nginx (without zone), fixed-window, sliding-window,
// token-bucket and aws-usage-plan: what all-or-nothing needs from them is
// a decision on a copy of a key's state, kept or dropped (peek and commit
// below), which each builds from its own rule, so each member decides as
// its row alone would. haproxy and azure-rate-limit (AllOfCountingMembers)
// are members in every-hit and in-order only, where each member decides as
// its row alone.
//
// Members may count by different attributes of a request (Member.By): a
// per-address limit beside a global one. Each is then asked about the
// request under its own key; a member whose attribute the request does not
// carry is not asked and not charged, as nginx does not account a request
// whose limit_req_zone key is empty (ngx_http_limit_req_handler skips the
// limit when the key's length is 0).
type AllOf struct {
	commit  Commit
	members []member
	peekers []peekMember // all-or-nothing: members, each able to peek
	by      []int        // each member's Member.By
	byAttrs bool         // some member counts by other than the request's key
	changed []bool       // all-or-nothing: whether each member's peek changed its copy
	keys    []Key        // each member's key for the request being decided
	asked   []bool       // whether each member applies to it
	one     [1]Key       // DecideAttrs' attrs when Decide is called
	mem     Memory
	fired   int // Fired's answer for the last request
}

var (
	_ Limiter    = (*AllOf)(nil)
	_ Reserver   = (*AllOf)(nil)
	_ Attributed = (*AllOf)(nil)
)

// member is a Limiter whose held state the row can read.
type member interface {
	Limiter
	Reserver
	held() (keys, bytes int64)
}

// peekMember is a member that can also decide on a copy of a key's state
// (peek) and then store that copy (commit, after a peek on the same key
// with no other call in between): the members all-or-nothing takes.
type peekMember interface {
	member
	peek(now time.Duration, key Key, cost int64) (d Decision, changed bool)
	commit(key Key)
}

func newAllOfLimiter(p Params) (Limiter, error) {
	// The row's own policy only names the row's rate in tables: a
	// calendar period is its members' business (fixed-window's).
	if err := checkCalendarPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("all-of", p); err != nil {
		return nil, err
	}
	commit := p.Commit
	if commit == "" {
		commit = AllOrNothing
	}
	if !containsCommit(commit) {
		return nil, &ParamError{Field: "commit", Found: string(commit),
			Want: fmt.Sprintf("want %s", joinCommits())}
	}
	if len(p.Members) == 0 {
		return nil, &ParamError{Field: "limits", Found: "none",
			Want: "want at least one limit, e.g. [{name: nginx, rate: 10, per: 1s}]"}
	}
	a := &AllOf{commit: commit}
	for i, m := range p.Members {
		mb, err := newMember(m)
		if err != nil {
			return nil, &MemberError{Index: i, Err: err}
		}
		if commit == AllOrNothing {
			pm, ok := mb.(peekMember)
			if !ok {
				return nil, &MemberError{Index: i, Err: &ParamError{Field: "name", Found: m.Name,
					Want: fmt.Sprintf("%s: want commit %s or %s", CountingWhy(m.Name), EveryHit, InOrder)}}
			}
			a.peekers = append(a.peekers, pm)
		}
		if m.By < ByAll {
			return nil, &MemberError{Index: i, Err: &ParamError{Field: "by", Found: fmt.Sprint(m.By),
				Want: "want the request's key, every request or an attribute"}}
		}
		a.members = append(a.members, mb)
		a.by = append(a.by, m.By)
		a.byAttrs = a.byAttrs || m.By != ByKey
	}
	a.changed = make([]bool, len(a.members))
	a.keys = make([]Key, len(a.members))
	a.asked = make([]bool, len(a.members))
	return a, nil
}

// MemberError is an error in an all-of row's member Index.
type MemberError struct {
	Index int
	Err   error
}

func (e *MemberError) Error() string { return fmt.Sprintf("limits[%d]: %v", e.Index, e.Err) }
func (e *MemberError) Unwrap() error { return e.Err }

func containsCommit(c Commit) bool {
	for _, k := range Commits {
		if k == c {
			return true
		}
	}
	return false
}

func joinCommits() string {
	var s []string
	for _, c := range Commits {
		s = append(s, string(c))
	}
	return strings.Join(s, ", ")
}

// newMember builds a member of an all-of row.
func newMember(m Member) (member, error) {
	if len(m.Params.Members) > 0 || m.Params.Commit != "" {
		return nil, &ParamError{Field: "name", Found: m.Name, Want: "an all-of row's limits cannot themselves have limits"}
	}
	if m.Params.Calendar != NotCalendar && m.Name != "fixed-window" && m.Name != "aws-usage-plan" {
		return nil, errCalendar(m.Name, m.Params.Calendar)
	}
	var build func(Params) (Limiter, error)
	switch m.Name {
	case "nginx":
		build = newNginxLimiter
	case "fixed-window":
		build = newFixedWindowLimiter
	case "sliding-window":
		build = newSlidingWindowLimiter
	case "token-bucket":
		build = newTokenBucketLimiter
	case "aws-usage-plan":
		build = newAWSUsagePlanLimiter
	case "haproxy":
		build = newHAProxyLimiter
	case "azure-rate-limit":
		build = newAzureRateLimitLimiter
	default:
		return nil, &ParamError{Field: "name", Found: m.Name,
			Want: fmt.Sprintf("an all-of limit must be %s (the algorithms that can check a request without charging it)", strings.Join(AllOfMembers, ", "))}
	}
	if m.Name == "nginx" && m.Params.NginxZone != 0 {
		return nil, &ParamError{Field: "zone", Found: fmt.Sprint(m.Params.NginxZone),
			Want: "an all-of limit takes no nginx zone (its nodes are not modelled across limits)"}
	}
	l, err := build(m.Params)
	if err != nil {
		return nil, err
	}
	switch l := l.(type) {
	case *Nginx:
		return &peeker[nginxState]{Limiter: l, k: &l.keyed, rule: func(cp *nginxState, now time.Duration, key Key, cost int64) (Decision, bool) {
			return l.decide(cp, l.isLive(key), now, cost)
		}}, nil
	case *FixedWindow:
		return &peeker[fixedWindowState]{Limiter: l, k: &l.keyed, rule: func(cp *fixedWindowState, now time.Duration, _ Key, cost int64) (Decision, bool) {
			k, left := l.windowOf(now)
			return l.decideIn(cp, k, left, cost)
		}}, nil
	case *SlidingWindow:
		return &peeker[slidingWindowState]{Limiter: l, k: &l.keyed, rule: func(cp *slidingWindowState, now time.Duration, _ Key, cost int64) (Decision, bool) {
			k, e := l.clock.at(now, l.window)
			return l.decideIn(cp, k, e, cost)
		}}, nil
	case *AWSUsagePlan:
		return &peeker[fixedWindowState]{Limiter: l, k: &l.keyed, rule: func(cp *fixedWindowState, now time.Duration, _ Key, cost int64) (Decision, bool) {
			return l.decideOn(cp, now, cost)
		}}, nil
	case *HAProxy:
		return &counter[haproxyState]{Limiter: l, k: &l.keyed}, nil
	case *SlidingLog: // azure-rate-limit, classic tiers
		return &counter[costLog]{Limiter: l, k: &l.keyed}, nil
	case *AzureRateLimit: // classic, increment-condition
		return &counter[costLog]{Limiter: l, k: &l.keyed}, nil
	case *TokenBucket:
		return &peeker[tokenBucketState]{Limiter: l, k: &l.keyed, rule: func(cp *tokenBucketState, now time.Duration, key Key, cost int64) (Decision, bool) {
			return l.decide(cp, now >= 0 || l.isLive(key), now, cost)
		}}, nil
	}
	return nil, fmt.Errorf("all-of: %s built an unexpected %T", m.Name, l)
}

// Decide decides the request on every member as the commit mode says, each
// member counting by key; a member that counts by an attribute is not
// asked (the request carries none), a global one is.
func (a *AllOf) Decide(now time.Duration, key Key, cost int64) Decision {
	a.one[0] = key
	return a.DecideAttrs(now, a.one[:], cost)
}

// ByAttributes reports whether some member counts by other than the
// request's key (Attributed).
func (a *AllOf) ByAttributes() bool { return a.byAttrs }

// DecideAttrs decides the request on every member that applies to it, each
// under its own key from attrs (Attributed), as the commit mode says.
func (a *AllOf) DecideAttrs(now time.Duration, attrs []Key, cost int64) Decision {
	memberKeys(a.by, attrs, a.keys, a.asked)
	var d Decision
	a.fired = -1
	switch a.commit {
	case AllOrNothing:
		rejected := false
		for i, m := range a.peekers {
			if !a.asked[i] {
				continue
			}
			md, changed := m.peek(now, a.keys[i], cost)
			a.changed[i] = changed
			a.blame(i, d, md)
			rejected = merge(&d, md) || rejected
		}
		if !rejected {
			for i, m := range a.peekers {
				if a.asked[i] && a.changed[i] {
					m.commit(a.keys[i])
				}
			}
		}
	case EveryHit:
		for i, m := range a.members {
			if a.asked[i] {
				md := m.Decide(now, a.keys[i], cost)
				a.blame(i, d, md)
				merge(&d, md)
			}
		}
	case InOrder:
		for i, m := range a.members {
			if !a.asked[i] {
				continue
			}
			md := m.Decide(now, a.keys[i], cost)
			a.blame(i, d, md)
			if merge(&d, md) {
				break
			}
		}
	}
	if d.Verdict != Reject && d.Delay > 0 {
		d.Verdict = Delay
	}
	a.account()
	return d
}

// memberKeys sets, for each member of by (Member.By), its key for a
// request of attributes attrs (Attributed's) in keys, and in asked whether
// the member applies to the request: one key (0) for by: global, the
// request's key or attribute value otherwise, none when the request does
// not carry the member's attribute.
func memberKeys(by []int, attrs []Key, keys []Key, asked []bool) {
	for i, b := range by {
		switch {
		case b == ByAll:
			keys[i], asked[i] = 0, true
		case b < len(attrs) && attrs[b] != NoKey:
			keys[i], asked[i] = attrs[b], true
		default:
			asked[i] = false
		}
	}
}

// blame keeps member i as the one that fired when its decision md, about
// to be merged into d, decides the request: the first member, in order,
// that rejects (nginx's ngx_http_limit_req_handler checks its limits in
// order and stops at the first that rejects), else the first with the
// largest delay (the delay the request waits).
func (a *AllOf) blame(i int, d, md Decision) { blameInto(&a.fired, i, d, md) }

// blameInto sets *fired to i when member i's decision md, about to be
// merged into d, decides the request (AllOf.blame's rule).
func blameInto(fired *int, i int, d, md Decision) {
	switch {
	case d.Verdict == Reject:
	case md.Verdict == Reject:
		*fired = i
	case md.Delay > d.Delay:
		*fired = i
	}
}

// Firer is a limiter of several limits that says which of them decided
// the last request (AllOf).
type Firer interface {
	Fired() int
}

var _ Firer = (*AllOf)(nil)

// Fired returns the member that decided the last request (the index of
// Params.Members): the first that rejected it, else the one whose delay
// it waits; -1 when it was admitted at once.
func (a *AllOf) Fired() int { return a.fired }

// merge folds a member's decision md into d: a reject wins, with the
// largest retry_after (Never wins over any wait); otherwise the largest
// delay. It reports whether md is a reject.
func merge(d *Decision, md Decision) bool {
	if md.Verdict == Reject {
		switch {
		case d.Verdict != Reject:
			*d = md
		case d.RetryAfter == Never || md.RetryAfter == Never:
			d.RetryAfter = Never
		default:
			d.RetryAfter = max(d.RetryAfter, md.RetryAfter)
		}
		return true
	}
	if d.Verdict != Reject {
		d.Delay = max(d.Delay, md.Delay)
	}
	return false
}

// account updates the peaks from what the members hold now.
func (a *AllOf) account() {
	var keys, bytes, perKey int64
	for _, m := range a.members {
		k, b := m.held()
		keys, bytes = max(keys, k), bytes+b
		perKey += m.Memory().BytesPerKeyMax
	}
	a.mem.KeysPeak = max(a.mem.KeysPeak, keys)
	a.mem.BytesPeak = max(a.mem.BytesPeak, bytes)
	a.mem.BytesPerKeyMax = max(a.mem.BytesPerKeyMax, perKey)
}

// Memory reports the peaks as the type's doc says.
func (a *AllOf) Memory() Memory { return a.mem }

// Reserve sizes the tables of every member that counts by key (Reserver):
// the engine's n is the number of keys, not of an attribute's values.
func (a *AllOf) Reserve(n int) {
	for i, m := range a.members {
		if a.by[i] == ByKey {
			m.Reserve(n)
		}
	}
}

// peeker is a member: it peeks with its limiter's own rule on a copy of
// the key's state, exactly as its Decide decides on the state itself, and
// commits the copy.
type peeker[S any] struct {
	Limiter
	k    *keyed[S]
	rule func(cp *S, now time.Duration, key Key, cost int64) (Decision, bool)
	cp   S
}

func (m *peeker[S]) peek(now time.Duration, key Key, cost int64) (Decision, bool) {
	m.cp = *m.k.get(now, key)
	return m.rule(&m.cp, now, key, cost)
}

func (m *peeker[S]) commit(key Key) {
	m.k.state[key] = m.cp
	m.k.touch(key, 0)
}

func (m *peeker[S]) held() (int64, int64) { return m.k.keys, m.k.bytes }

func (m *peeker[S]) Reserve(n int) { m.k.Reserve(n) }

// counter is a member that decides only as its row alone does (Decide),
// for the commit modes that never undo a decision.
type counter[S any] struct {
	Limiter
	k *keyed[S]
}

func (m *counter[S]) held() (int64, int64) { return m.k.keys, m.k.bytes }

func (m *counter[S]) Reserve(n int) { m.k.Reserve(n) }
