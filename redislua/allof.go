package redislua

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/version"
)

// MemberError is a limit of an all-of row that its script cannot run:
// limit Index of the row's Params.Members, and why.
type MemberError struct {
	Index  int
	Member algorithms.Member
	Err    error
}

func (e *MemberError) Error() string {
	name := fmt.Sprintf("limits[%d]", e.Index)
	if e.Member.Label != "" {
		name = e.Member.Label
	}
	return name + ": " + e.Err.Error()
}

func (e *MemberError) Unwrap() error { return e.Err }

// unsupportedMember says why limit m of an all-of row has no rule in the
// all-of script, or nil.
func unsupportedMember(m algorithms.Member) error {
	if !isRule(m.Name) {
		why := NoScript(m.Name)
		if why == "" {
			why = "ratesim has no Lua script of it"
		}
		return fmt.Errorf("%s has no script: %s (an all-of script takes %s)", m.Name, why, strings.Join(AllOfRules, ", "))
	}
	return Unsupported(m.Params)
}

// MemberKey returns the Redis key of limit i of an all-of row, for the
// limited key key of that limit: ratesim:{RUN}:LABEL:i:KEY, i counted from
// 0 as limits[i].
func MemberKey(run, label string, i int, key string) string {
	return Key(run, label, fmt.Sprintf("%d:%s", i, key))
}

// AllOfArgs returns the ARGV of one decision of an all-of row with params
// p (docs/redis.md, all-of):
//
//	now cost commit N, then for each of the N limits:
//	name key options rate per burst [OPTION VALUE]...
//
// key is the limit's index in KEYS (1 for the first limit asked), 0 for a
// limit not asked; options is the number of OPTION VALUE pairs. asked says
// which limits apply to the request (nil: every one); KEYS holds the keys
// of those, in order.
func AllOfArgs(p algorithms.Params, now time.Duration, cost int64, asked []bool) []any {
	commit := p.Commit
	if commit == "" {
		commit = algorithms.AllOrNothing
	}
	a := []any{int64(now), cost, string(commit), int64(len(p.Members))}
	k := int64(0)
	for i, m := range p.Members {
		idx := int64(0)
		if asked == nil || asked[i] {
			k++
			idx = k
		}
		opts := appendOptions(nil, m.Name, m.Params)
		a = append(a, m.Name, idx, int64(len(opts)/2), m.Params.Rate, int64(m.Params.Per), m.Params.Burst)
		a = append(a, opts...)
	}
	return a
}

// allOfHeader is the header comment of the all-of script.
func allOfHeader(clock Clock) string {
	var b strings.Builder
	w := func(format string, args ...any) {
		if format == "" {
			b.WriteString("--\n")
			return
		}
		fmt.Fprintf(&b, "-- "+format+"\n", args...)
	}
	w("ratesim %s: all-of as a Redis Lua script (Redis 7 or later), printed by", version.String())
	w("`ratesim lua all-of --clock %s`. Several limits on one request, each with its own", clock)
	w("key, charged as the commit mode says; it decides as ratesim's algorithms/all_of.go,")
	w("decision for decision, and names the limit that fired: ratesim's tests run it on")
	w("a real redis-server against the Go rule on randomised traces in every mode.")
	w("")
	w("Call:    EVALSHA sha K KEY... now cost commit N LIMIT...")
	w("         each LIMIT: name key options rate per burst [OPTION VALUE]...")
	w("KEYS:    one per limit that applies to the request, in the limits' order: that")
	w("         limit's state, as its own script keeps it. ratesim names limit i's")
	w("         ratesim:{RUN}:LABEL:i:KEY.")
	w("ARGV:    now, cost: as every script's (cost >= 1).")
	if clock == ClockRedis {
		w("         now: ignored (send 0); the script reads Redis TIME, in microseconds")
	}
	w("         commit: all-or-nothing (every limit checked, all charged or none),")
	w("         every-hit (each limit decides and is charged as alone) or in-order (in")
	w("         order, each charged as it admits, stopping at the first that rejects).")
	w("         N: the number of limits, then each limit's block:")
	w("         name: %s;", strings.Join(AllOfRules, ", "))
	w("         key: its index in KEYS, 0 when the limit does not apply (not asked);")
	w("         options: how many OPTION VALUE pairs follow burst;")
	w("         rate per burst [OPTION VALUE]...: as that algorithm's own script takes them.")
	w("Returns: {verdict, delay_ns, retry_after_ns, fired}: the largest delay of the limits")
	w("         asked, or the largest retry_after of those that rejected (-1 for never if")
	w("         any says never); fired is 1 + the index of the limit that decided the")
	w("         request (the first that rejected, else the first with the largest delay),")
	w("         0 when none did. A bad argument is an error reply starting 'ratesim: ',")
	w("         before any key is written.")
	if clock == ClockRedis {
		w("Clock:   redis: one tick is 1 us (see each algorithm's own script).")
	} else {
		w("Clock:   arg: one tick is 1 ns; keys get no expiry (delete them when done).")
	}
	w("Exact:   when every limit is within its own script's exact range")
	w("         (redislua.CheckRange checks each).")
	return b.String()
}
