package algorithms

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func allOf(t *testing.T, commit Commit, members ...Member) Limiter {
	t.Helper()
	l, err := New("all-of", Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, Commit: commit, Members: members})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func fw(rate int64, per time.Duration) Member {
	return Member{Name: "fixed-window", Params: Params{Policy: Policy{Rate: rate, Per: per, Burst: rate}}}
}

type allOfStep struct {
	at   time.Duration
	want Decision
	why  string
}

func runAllOf(t *testing.T, l Limiter, steps []allOfStep) {
	t.Helper()
	for i, s := range steps {
		if got := l.Decide(s.at, 0, 1); got != s.want {
			t.Errorf("step %d at %v (%s): got %+v, want %+v", i, s.at, s.why, got, s.want)
		}
	}
}

var (
	acc = Decision{Verdict: Accept}
	rej = func(d time.Duration) Decision { return Decision{Verdict: Reject, RetryAfter: d} }
)

// A: fixed-window 2 per 1s; B: fixed-window 3 per 10s; key 0, cost 1.
func TestAllOfAllOrNothing(t *testing.T) {
	l := allOf(t, AllOrNothing, fw(2, time.Second), fw(3, 10*time.Second))
	runAllOf(t, l, []allOfStep{
		{0, acc, "A 1, B 1"},
		{100 * ms, acc, "A 2, B 2"},
		{200 * ms, rej(800 * ms), "A full until 1s; B would admit but is not charged (stays 2)"},
		{1000 * ms, acc, "A 1 in window 1, B 3: B was not charged at 200ms"},
		{1100 * ms, rej(8900 * ms), "B full until 10s; A not charged (stays 1)"},
		{1200 * ms, rej(8800 * ms), "A would admit its 2nd: it was not charged at 1.1s"},
		{10 * time.Second, acc, "A 1, B 1 in new windows"},
	})
}

func TestAllOfEveryHit(t *testing.T) {
	l := allOf(t, EveryHit, fw(2, time.Second), fw(3, 10*time.Second))
	runAllOf(t, l, []allOfStep{
		{0, acc, "A 1, B 1"},
		{100 * ms, acc, "A 2, B 2"},
		{200 * ms, rej(800 * ms), "A rejects; B admits and is charged: B 3"},
		{1000 * ms, rej(9000 * ms), "B full until 10s; A admits and is charged: A 1"},
		{1100 * ms, rej(8900 * ms), "A 2, B full"},
		{1200 * ms, rej(8800 * ms), "A full (800ms) and B full (8.8s): the largest"},
	})
}

func TestAllOfInOrder(t *testing.T) {
	l := allOf(t, InOrder, fw(2, time.Second), fw(3, 10*time.Second))
	runAllOf(t, l, []allOfStep{
		{0, acc, "A 1, B 1"},
		{100 * ms, acc, "A 2, B 2"},
		{200 * ms, rej(800 * ms), "A rejects: B is not asked (stays 2)"},
		{1000 * ms, acc, "A 1, B 3"},
		{1100 * ms, rej(8900 * ms), "A charged (2), then B rejects: no refund"},
		{1200 * ms, rej(800 * ms), "A full: B not asked, its 8.8s does not count"},
	})
}

// nginx's two limits: the delay is the largest of the limits' delays
// (ngx_http_limit_req_account keeps the largest).
func TestAllOfNginxDelay(t *testing.T) {
	a := Member{Name: "nginx", Params: Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 1}, NginxBurst: 5, NginxBurstSet: true}}
	b := Member{Name: "nginx", Params: Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 1}, NginxBurst: 10, NginxBurstSet: true}}
	c := Member{Name: "nginx", Params: Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, NginxBurst: 2, NginxBurstSet: true, Nodelay: true}}
	l := allOf(t, AllOrNothing, a, b, c)
	del := func(d time.Duration) Decision { return Decision{Verdict: Delay, Delay: d} }
	runAllOf(t, l, []allOfStep{
		{0, acc, "fresh nodes: excess 0 everywhere"},
		{0, del(500 * ms), "A 1000 -> 100ms, B 1000 -> 500ms (rate 2000), C nodelay"},
		{0, del(1000 * ms), "A 2000 -> 200ms, B 2000 -> 1000ms, C 2000 = burst"},
		// C: 3000 > 2000 rejects; retry when C's excess fits:
		// last 0 + ceil((2000+1000-2000)*1000/1000) = 1000 ms.
		{0, rej(1000 * ms), "C over its burst: none charged"},
		// Not charged: at 1s A has drained 2000 -> 0+1000-... :
		// A: max(0, 2000-10000*1000/1000+1000) = 0; B: 2000-2000+1000 =
		// 1000 -> 500ms; C: 2000-1000+1000 = 2000 <= 2000, nodelay.
		{time.Second, del(500 * ms), "B's excess 1000 -> 500ms"},
	})
}

func TestAllOfNever(t *testing.T) {
	l := allOf(t, AllOrNothing, fw(2, time.Second), fw(5, time.Minute))
	if got := l.Decide(0, 0, 3); got != rej(Never) {
		t.Errorf("cost 3 over A's 2: got %+v, want Never", got)
	}
	if got := l.Decide(0, 0, 2); got != acc {
		t.Errorf("cost 2 after a Never, nothing charged: got %+v", got)
	}
}

func TestAllOfErrors(t *testing.T) {
	p := Policy{Rate: 1, Per: time.Second, Burst: 1}
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Policy: p}, "limits: none"},
		{Params{Policy: p, Commit: "sometimes", Members: []Member{fw(1, time.Second)}}, `commit: sometimes: want all-or-nothing, every-hit, in-order`},
		{Params{Policy: p, Members: []Member{fw(1, time.Second), {Name: "gcra", Params: Params{Policy: p}}}}, "limits[1]: name: gcra: an all-of limit must be nginx, fixed-window, sliding-window, token-bucket"},
		{Params{Policy: p, Members: []Member{{Name: "nginx", Params: Params{Policy: Policy{Rate: 1, Per: 2 * time.Second, Burst: 1}}}}}, "limits[0]: per: 2s: nginx takes a rate per 1s"},
		{Params{Policy: p, Members: []Member{{Name: "all-of", Params: Params{Policy: p, Members: []Member{fw(1, time.Second)}}}}}, "cannot themselves have limits"},
	} {
		_, err := New("all-of", c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.p, err, c.want)
		}
		var me *MemberError
		if strings.HasPrefix(c.want, "limits[") && !errors.As(err, &me) {
			t.Errorf("%v: not a MemberError", err)
		}
	}
}

// Every member alone, in any mode, decides as its own row (but a
// count-rejected member under all-or-nothing, which charges no reject).
func TestAllOfOneMemberIsTheMember(t *testing.T) {
	members := []Member{
		{Name: "nginx", Params: Params{Policy: Policy{Rate: 5, Per: time.Second, Burst: 3}}},
		{Name: "token-bucket", Params: Params{Policy: Policy{Rate: 5, Per: time.Second, Burst: 3}}},
		{Name: "sliding-window", Params: Params{Policy: Policy{Rate: 5, Per: time.Second, Burst: 5}}},
		{Name: "fixed-window", Params: Params{Policy: Policy{Rate: 5, Per: time.Second, Burst: 5}, CountRejected: true}},
	}
	for _, m := range members {
		for _, c := range Commits {
			if c == AllOrNothing && m.Params.CountRejected {
				continue // all-or-nothing charges no reject: below
			}
			ref, _ := New(m.Name, m.Params)
			l := allOf(t, c, m)
			var now time.Duration
			for i := range 400 {
				now += time.Duration(i*i%11) * 37 * ms / 3
				key := Key(i % 3)
				cost := int64(1 + i%2)
				if got, want := l.Decide(now, key, cost), ref.Decide(now, key, cost); got != want {
					t.Fatalf("%s %s step %d: got %+v, want %+v", m.Name, c, i, got, want)
				}
			}
			if got, want := l.Memory(), ref.Memory(); got != want {
				t.Errorf("%s %s memory: got %+v, want %+v", m.Name, c, got, want)
			}
		}
	}
}

// all-or-nothing charges nothing on a reject, even to a count-rejected
// member. A: fixed-window 3 per 10s with count-rejected; B: 1 per 1s.
func TestAllOfCountRejectedMember(t *testing.T) {
	a := fw(3, 10*time.Second)
	a.Params.CountRejected = true
	steps := func(at2 Decision) []allOfStep {
		return []allOfStep{
			{0, acc, "A 1, B 1"},
			{100 * ms, rej(900 * ms), "B full; every-hit charges A (2), all-or-nothing does not (1)"},
			{1000 * ms, acc, "B's new window: A 3 (every-hit) or 2"},
			{2000 * ms, at2, "A: 3 <= 3 (all-or-nothing) or 4 > 3 until 10s (every-hit)"},
		}
	}
	runAllOf(t, allOf(t, AllOrNothing, a, fw(1, time.Second)), steps(acc))
	runAllOf(t, allOf(t, EveryHit, a, fw(1, time.Second)), steps(rej(8*time.Second)))
}

// attrStep is one request to an all-of row whose members count by
// different attributes: attrs as DecideAttrs takes them.
type attrStep struct {
	at    time.Duration
	attrs []Key
	want  Decision
	why   string
}

func runAttrs(t *testing.T, l Limiter, steps []attrStep) {
	t.Helper()
	at, ok := l.(Attributed)
	if !ok || !at.ByAttributes() {
		t.Fatalf("%T does not decide by attributes", l)
	}
	for i, s := range steps {
		if got := at.DecideAttrs(s.at, s.attrs, 1); got != s.want {
			t.Errorf("step %d at %v (%s): got %+v, want %+v", i, s.at, s.why, got, s.want)
		}
	}
}

// A per-address limit (fixed-window 2 per 1s, by the request's key: the
// address) beside a global one (fixed-window 3 per 1s, every request), as
// nginx's two zones on $binary_remote_addr and $server_name in one server.
// Addresses a=0, b=1, c=2.
func TestAllOfPerKeyAndGlobal(t *testing.T) {
	perAddr, global := fw(2, time.Second), fw(3, time.Second)
	global.By = ByAll
	a, b, c := []Key{0}, []Key{1}, []Key{2}
	t.Run("all-or-nothing", func(t *testing.T) {
		runAttrs(t, allOf(t, AllOrNothing, perAddr, global), []attrStep{
			{0, a, acc, "a 1, global 1"},
			{0, a, acc, "a 2, global 2"},
			{0, a, rej(time.Second), "a full until 1s; global not charged (stays 2)"},
			{0, b, acc, "b 1, global 3"},
			{0, b, rej(time.Second), "global full until 1s; b not charged (stays 1)"},
			{0, c, rej(time.Second), "global full, whatever c's count"},
			{time.Second, c, acc, "new windows: c 1, global 1"},
			{time.Second, b, acc, "b 1, global 2"},
		})
	})
	t.Run("every-hit", func(t *testing.T) {
		runAttrs(t, allOf(t, EveryHit, perAddr, global), []attrStep{
			{0, a, acc, "a 1, global 1"},
			{0, a, acc, "a 2, global 2"},
			{0, a, rej(time.Second), "a over (stays 2); global admits and is charged: 3"},
			{0, b, rej(time.Second), "global over; b admits and is charged: 1"},
			{0, b, rej(time.Second), "global over; b charged: 2"},
			{0, b, rej(time.Second), "both over"},
			{time.Second, b, acc, "new windows: b 1, global 1"},
		})
	})
}

// A member that counts by an attribute the request does not carry is not
// asked and not charged (nginx does not account a request whose zone key
// is empty); one that counts by every request always is.
func TestAllOfAttributeMissing(t *testing.T) {
	perRoute := fw(1, time.Second)
	perRoute.By = 1 // the request's first attribute: a route
	global := fw(3, time.Second)
	global.By = ByAll
	checkout, none := Key(0), NoKey
	runAttrs(t, allOf(t, AllOrNothing, perRoute, global), []attrStep{
		{0, []Key{7, checkout}, acc, "route checkout 1, global 1"},
		{0, []Key{8, checkout}, rej(time.Second), "route checkout full; global stays 1"},
		{0, []Key{9, none}, acc, "no route: only the global limit, 2"},
		{0, []Key{9}, acc, "no attributes at all: global 3"},
		{0, []Key{9, none}, rej(time.Second), "global full"},
	})
	// Decide is DecideAttrs with the key alone: the route member is never
	// asked, the global one always
	l := allOf(t, AllOrNothing, perRoute, global)
	for i, want := range []Decision{acc, acc, acc, rej(time.Second)} {
		if got := l.Decide(0, Key(i), 1); got != want {
			t.Errorf("Decide %d: got %+v, want %+v", i, got, want)
		}
	}
}

// Fired names the limit that decided: in all-or-nothing the first that
// rejects, in order, though a later one rejects too; the one whose delay
// the request waits; none for a request admitted at once. Hand-computed
// with two nginx limits, 1r/s burst=1 nodelay and 2r/s burst=2 (no
// nodelay: delays): at 0 both admit at once; at 100ms the first admits
// (excess 900) and the second delays (excess 1000-200 = 800: waits 400ms);
// at 200ms the first rejects (1800 > 1000) and the second would delay.
func TestAllOfFired(t *testing.T) {
	a, err := New("all-of", Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, Members: []Member{
		{Name: "nginx", Params: Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, NginxBurst: 1, NginxBurstSet: true, Nodelay: true}},
		{Name: "nginx", Params: Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 1}, NginxBurst: 2, NginxBurstSet: true}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := a.(Firer)
	var got []string
	for _, at := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond} {
		d := a.Decide(at, 1, 1)
		got = append(got, fmt.Sprintf("%v %v %d", d.Verdict, d.Delay, f.Fired()))
	}
	if want := []string{"accept 0s -1", "delay 400ms 1", "reject 0s 0"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Two HAProxy tracked counters of one frontend, http_req_rate(1s): sc0 by
// the address (gt 2) and sc1 by a header (gt 3, the request's attribute 1).
// HAProxy counts a request in every counter tracked before the deny that
// rejects it. With every track before the denies (every-hit) a request
// denied by sc0 is still counted in sc1; with track-sc1 after sc0's deny
// (in-order) it is not. Hand-computed, every request in ms 0 (the rate is
// then the count of the current period): verdicts and the limit that fired.
func TestAllOfHAProxyCounters(t *testing.T) {
	src := Member{Name: "haproxy", Params: Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}}}
	hdr := Member{Name: "haproxy", Params: Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}}, By: 1}
	a, b, c := Key(0), Key(1), Key(2)
	h, g := Key(10), Key(11)
	reqs := [][]Key{{a, h}, {a, h}, {a, h}, {b, h}, {b, g}, {c, h}}
	for _, tc := range []struct {
		commit Commit
		want   []string
	}{
		// a1 h1, a2 h2, a3 (over) h3, b1 h4 (over), b2 g1, c1 h5 (over)
		{EveryHit, []string{"accept -1", "accept -1", "reject 0", "reject 1", "accept -1", "reject 1"}},
		// a1 h1, a2 h2, a3 (over: sc1 not tracked, h stays 2), b1 h3,
		// b2 g1, c1 h4 (over)
		{InOrder, []string{"accept -1", "accept -1", "reject 0", "accept -1", "accept -1", "reject 1"}},
	} {
		l := allOf(t, tc.commit, src, hdr)
		var got []string
		for _, r := range reqs {
			d := l.(Attributed).DecideAttrs(0, r, 1)
			got = append(got, fmt.Sprintf("%v %d", d.Verdict, l.(Firer).Fired()))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.commit, got, tc.want)
		}
	}
	// all-or-nothing would leave a denied request uncounted, which
	// HAProxy never does
	_, err := New("all-of", Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, Members: []Member{src, hdr}})
	if err == nil || !strings.Contains(err.Error(), "limits[0]: name: haproxy: haproxy counts every request it is asked about, admitted or not: want commit every-hit or in-order") {
		t.Fatalf("all-or-nothing with haproxy: got %v", err)
	}
}

// Two API Management limits in the order APIM evaluates a request's scopes
// (docs/gateways.md, Azure): a rate-limit-by-key of 2 calls per 10s by the
// request's key, then a rate-limit-by-key of 3 per 10s with a constant
// counter-key (every request, by: global), classic tiers (sliding
// windows), commit in-order. Hand-computed verdicts and the limit that
// fired, the count of each window before the request in brackets.
func TestAllOfAzureInOrder(t *testing.T) {
	const sec = time.Second
	byKey := Member{Name: "azure-rate-limit", Params: Params{Policy: Policy{Rate: 2, Per: 10 * sec, Burst: 2}}}
	all := Member{Name: "azure-rate-limit", Params: Params{Policy: Policy{Rate: 3, Per: 10 * sec, Burst: 3}}, By: ByAll}
	l := allOf(t, InOrder, byKey, all)
	a, b := Key(0), Key(1)
	for _, r := range []struct {
		at   time.Duration
		key  Key
		want string
	}{
		{0, a, "accept -1"},       // a [0] admits, every [0] admits
		{1 * sec, a, "accept -1"}, // a [1], every [1]
		{2 * sec, a, "reject 0"},  // a [2] refuses: the second limit is not reached, every stays 2
		{3 * sec, b, "accept -1"}, // b [0], every [2]
		{4 * sec, b, "reject 1"},  // b [1] admits and counts it, every [3] refuses
		{5 * sec, b, "reject 0"},  // b [2]: the count the second limit refused is not given back
		// 11.5s: the calls at 0s and 1s have left both windows: a [0],
		// every [1] (3s; the refused 4s call was never counted by it)
		{11*sec + sec/2, a, "accept -1"},
	} {
		d := l.Decide(r.at, r.key, 1)
		if got := fmt.Sprintf("%v %d", d.Verdict, l.(Firer).Fired()); got != r.want {
			t.Errorf("%v key %d: got %q, want %q", r.at, r.key, got, r.want)
		}
	}
	_, err := New("all-of", Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, Members: []Member{byKey, all}})
	if err == nil || !strings.Contains(err.Error(), "limits[0]: name: azure-rate-limit: azure-rate-limit logs each request it admits as it decides: want commit every-hit or in-order") {
		t.Fatalf("all-or-nothing with azure-rate-limit: got %v", err)
	}
}
