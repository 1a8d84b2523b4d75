// Package redislua holds ratesim's algorithms as Redis Lua scripts, each
// decision for decision the same as its Go twin in package algorithms, and
// the means to run them on a real Redis: the calling convention (Args), the
// key names (Key), the range in which a script is exact (CheckRange) and a
// pipelined Runner.
//
// Every script takes the calling convention of docs/redis.md:
//
//	EVALSHA sha 1 KEY now cost rate per burst [OPTION VALUE]...
//
// all integers, now in ns since the caller's epoch and per in ns, and
// returns {verdict, delay_ns, retry_after_ns}: verdict 0 accept, 1 delay,
// 2 reject, retry_after -1 for never, as algorithms.Decision. The script of
// an all-of row (AllOf) takes several limits, each with its own key, and
// names the one that fired (AllOfArgs).
//
// Lua in Redis 7 is Lua 5.1: every number is a double, exact for integers
// below 2^53. The scripts compute in integers only, keep every intermediate
// below 2^53 for the policies CheckRange accepts, write values back with
// string.format('%d') (never tostring, which is %.14g) and return integers
// (Redis truncates a returned number to an integer).
//
// A script has two variants built from one body: ClockArg, where now is
// ARGV[1] (the replay of a simulation's virtual time, one tick = 1 ns, keys
// never expire), and ClockRedis, the production variant, where now is
// Redis's TIME in microseconds (one tick = 1 us) and each write sets a
// PEXPIRE for when the key's state becomes fresh.
//
// The package never prints and never exits.
package redislua

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/internal/version"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// Clock says where a script's now comes from.
type Clock int

const (
	// ClockArg takes now from ARGV[1], in ns since the caller's epoch;
	// keys never expire (the caller's clock need not run at Redis's speed).
	ClockArg Clock = iota
	// ClockRedis reads Redis's TIME (microseconds since the Unix epoch)
	// and ignores ARGV[1]; every write sets a PEXPIRE for when the key's
	// state is fresh again, so idle keys vanish.
	ClockRedis
)

// String returns the clock as --clock spells it: arg or redis.
func (c Clock) String() string {
	if c == ClockRedis {
		return "redis"
	}
	return "arg"
}

// ParseClock parses --clock's value: arg or redis.
func ParseClock(s string) (Clock, error) {
	switch s {
	case "arg":
		return ClockArg, nil
	case "redis":
		return ClockRedis, nil
	}
	return 0, fmt.Errorf("clock %q: want arg (now passed as ARGV[1], ns) or redis (now from Redis TIME, us)", s)
}

// tick returns the ns of one tick of the clock.
func (c Clock) tick() int64 {
	if c == ClockRedis {
		return 1000
	}
	return 1
}

// script describes one algorithm's script.
type script struct {
	name    string
	file    string   // the body in lua/
	goFile  string   // the Go twin, in algorithms/
	zset    bool     // the state is a sorted set (zset.lua), else a hash
	state   string   // what KEYS[1] holds
	options []string // OPTION VALUE pairs the script takes, as ARGV spells them
	exact   string   // the exact range, in ticks
}

var scripts = []script{
	{"fixed-window", "fixed_window.lua", "fixed_window.go", false,
		"a hash {w = window index, c = its count}",
		[]string{"count-rejected 0|1"},
		"now + per < 2^53"},
	{"sliding-log", "sliding_log.lua", "sliding_log.go", true,
		"a sorted set, one member per unit of cost still counting, scored by when it stops",
		[]string{"count-rejected 0|1"},
		"now + per < 2^53"},
	{"sliding-window", "sliding_window.lua", "sliding_window.go", false,
		"a hash {w = window index, p = previous count, c = current count}",
		[]string{"count-rejected 0|1"},
		"rate*per < 2^53 and now + 2*per < 2^53"},
	{"token-bucket", "token_bucket.lua", "token_bucket.go", false,
		"a hash {d = (burst - tokens)*per/g, t = last update}, g = gcd(rate, per)",
		[]string{"max-delay NS"},
		"(burst*per + (max-delay+1)*rate)/gcd(rate, per) < 2^53 and now + burst*per/rate + max-delay + 2 < 2^53"},
	{"gcra", "gcra.lua", "gcra.go", false,
		"a hash {n, r}: TAT = n + r/(rate/g) ticks, g = gcd(rate, per)",
		[]string{"max-delay NS"},
		"burst*per/gcd(rate, per) < 2^53 and now + burst*per/rate + max-delay + 2 < 2^53"},
	{"leaky-bucket", "leaky_bucket.lua", "leaky_bucket.go", false,
		"a hash {n, r}: TAT = n + r/(rate/g) ticks, when the queue is empty, g = gcd(rate, per)",
		nil,
		"burst*per/gcd(rate, per) < 2^53 and now + burst*per/rate + 2 < 2^53"},
	{"nginx", "nginx.lua", "nginx.go", false,
		"a hash {e = excess in milli-requests, l = last in ms}",
		[]string{"nginx-burst N (default burst-1)", "nodelay 0|1", "delay N"},
		"rate*1000 < 2^53, (nginx-burst+1)*10^6 < 2^53 and now + the drain time of the burst < 2^53"},
	{"concurrency", "concurrency.lua", "concurrency.go", true,
		"a sorted set, one member per unit in flight, scored by its completion",
		[]string{"max N (0: burst)", "service NS (the backend's service time; 0: nothing in flight)"},
		"now + service < 2^53"},
}

// optInScripts are the scripts of the opt-in rows (docs/algorithms.md,
// libraries' and vendors' rows): lookup, Script and the Runner know them;
// Names does not list them, as no default set holds their rows.
var optInScripts = []script{
	{"guava-bursty", "guava.lua", "guava.go", false,
		"a hash {n = nextFreeTicketMicros, s = storedPermits as %.17g}",
		[]string{"max-delay NS (tryAcquire's timeout)", "max-burst NS (maxBurstSeconds; default 1s)"},
		"now/1000 + (cost + max-burst*rate/per) * per/rate/1000 < 2^53 (us)"},
	{"guava-warming-up", "guava.lua", "guava.go", false,
		"a hash {n = nextFreeTicketMicros, s = storedPermits as %.17g}",
		[]string{"max-delay NS (tryAcquire's timeout)", "warmup NS (required)", "cold-factor N (an integer; default 3)"},
		"now/1000 + cost * cold-factor * per/rate/1000 + warmup/1000 < 2^53 (us)"},
	{"uber-ratelimit", "uber.lua", "uber.go", false,
		"a hash {n = the next permission's instant}",
		[]string{"slack N (default 10; 0 is WithoutSlack)"},
		"the next permission, now plus the backlog of every Take (Take never refuses), < 2^53"},
}

// OptInNames returns the opt-in rows that have a script, which Names
// leaves out.
func OptInNames() []string {
	names := make([]string, len(optInScripts))
	for i, s := range optInScripts {
		names[i] = s.name
	}
	return names
}

// ErrColdFactor refuses a guava-warming-up whose cold-factor is not a
// whole number: the calling convention passes integers only.
var ErrColdFactor = errors.New("cold-factor: guava.lua takes a whole cold-factor (ARGV holds integers); a fractional one runs in the simulation only")

// ErrCalendar refuses a fixed-window of calendar months or years (per: 1mo,
// per: 1y): its script counts windows of one fixed length, floor(now/per),
// and has no calendar. Such a row runs in every cluster mode of the
// simulation (its store decides with the Go rule), but not on Redis.
var ErrCalendar = errors.New("per 1mo or 1y: fixed_window.lua counts windows of one fixed length (floor(now/per)) and has no calendar; a calendar month or year runs in the simulation only, not on Redis")

// ErrDiscrete refuses a token-bucket with fill-interval (discrete refill):
// token_bucket.lua refills continuously. Such a row runs in every cluster
// mode of the simulation, but not on Redis.
var ErrDiscrete = errors.New("fill-interval: token_bucket.lua refills continuously and has no discrete refill; it runs in the simulation only, not on Redis")

// Unsupported returns why a row with params p has no script although its
// algorithm has one (ErrCalendar, ErrDiscrete), or nil.
//
// For an all-of row it looks at each limit: one without a script, or whose
// params its script does not take, refuses the row with a MemberError
// that names it.
func Unsupported(p algorithms.Params) error {
	for i, m := range p.Members {
		if err := unsupportedMember(m); err != nil {
			return &MemberError{Index: i, Member: m, Err: err}
		}
	}
	switch {
	case p.Calendar != algorithms.NotCalendar:
		return ErrCalendar
	case p.FillInterval != 0:
		return ErrDiscrete
	case p.ColdFactor != 0 && p.ColdFactor != float64(int64(p.ColdFactor)):
		return ErrColdFactor
	}
	return nil
}

// AllOf is the name of the all-of row, whose script (all_of.lua) combines
// the rules of its limits, each with a key of its own (AllOfArgs).
const AllOf = "all-of"

// allOfScript is the all-of row's script.
var allOfScript = script{AllOf, "all_of.lua", "all_of.go", false,
	"one Redis key per limit that applies to the request, each holding that limit's state as its own script keeps it",
	nil, "each limit is within its own script's range"}

// AllOfRules lists the algorithms that an all-of script takes as limits:
// the all-of members (algorithms.AllOfMembers) whose scripts are split into
// a rule that decides without writing and a commit (lua/member.lua), so
// that all-or-nothing can check every limit before it charges any.
var AllOfRules = []string{"nginx", "fixed-window", "sliding-window", "token-bucket"}

// isRule reports whether name's script is built from a rule of member.lua.
func isRule(name string) bool { return slices.Contains(AllOfRules, name) }

func lookup(name string) (script, error) {
	if name == AllOf {
		return allOfScript, nil
	}
	for _, s := range slices.Concat(scripts, optInScripts) {
		if s.name == name {
			return s, nil
		}
	}
	if name == "x-time-rate" {
		return script{}, fmt.Errorf("x-time-rate has no Lua script: it is the golang.org/x/time/rate library, which decides in floating point (want one of %s)", strings.Join(Names(), ", "))
	}
	if why := NoScript(name); why != "" {
		return script{}, fmt.Errorf("%s has no Lua script: %s (want one of %s)", name, why, strings.Join(Names(), ", "))
	}
	hint := ""
	if s := didyoumean.Closest(name, Names()); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	return script{}, fmt.Errorf("unknown algorithm %q (want one of %s)%s", name, strings.Join(Names(), ", "), hint)
}

// NoScript says why an algorithm of ratesim that limits a rate has no
// script, each its own reason, or "" for a name it does not know.
func NoScript(name string) string {
	switch name {
	case "x-time-rate":
		return "it decides in floating point"
	case "haproxy":
		return "ratesim has no script of HAProxy's stick-table counter (freq_ctr.c, in integers), which the simulation runs to the letter"
	case "aws-usage-plan":
		return "ratesim has no script of API Gateway's usage-plan quota (its periods are UTC days, weeks and calendar months)"
	case "azure-rate-limit":
		return "ratesim has no script of API Management's rate-limit policies"
	}
	return ""
}

// Names returns the algorithms that have a script, in report order: every
// algorithm but x-time-rate.
func Names() []string {
	names := make([]string, len(scripts))
	for i, s := range scripts {
		names[i] = s.name
	}
	return names
}

// Has reports whether the algorithm called name has a script.
func Has(name string) bool {
	_, err := lookup(name)
	return err == nil
}

func mustRead(file string) string {
	b, err := luaFiles.ReadFile("lua/" + file)
	if err != nil {
		panic("redislua: missing embedded " + file) // the embed pattern holds them all
	}
	return string(b)
}

// Script returns the Lua script of the algorithm called name for the given
// clock: a header comment (KEYS, ARGV, the return value, the exact range
// and ratesim's version), then the shared helpers, the clock's prologue and
// the algorithm's body. Both clocks share the body.
//
// The rules an all-of row combines (AllOfRules) are written as a rule that
// decides without writing and a commit (member.lua): their script is the
// rule, then single.lua, which decides, commits and replies; all-of's is
// every rule, then all_of.lua.
func Script(name string, clock Clock) (string, error) {
	s, err := lookup(name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if name == AllOf {
		b.WriteString(allOfHeader(clock))
	} else {
		b.WriteString(header(s, clock))
	}
	fmt.Fprintf(&b, "\nlocal ALGORITHM = '%s'\n\n", s.name)
	b.WriteString(mustRead("lib.lua"))
	b.WriteString("\n")
	if clock == ClockRedis {
		b.WriteString(mustRead("clock_redis.lua"))
	} else {
		b.WriteString(mustRead("clock_arg.lua"))
	}
	b.WriteString("\n")
	b.WriteString(mustRead("call.lua"))
	if s.zset {
		b.WriteString("\n")
		b.WriteString(mustRead("zset.lua"))
	}
	if name == AllOf || isRule(name) {
		b.WriteString("\n")
		b.WriteString(mustRead("member.lua"))
	}
	b.WriteString("\n")
	if name == AllOf {
		for _, r := range AllOfRules {
			rs, _ := lookup(r)
			b.WriteString(mustRead(rs.file))
			b.WriteString("\n")
		}
		b.WriteString(mustRead(s.file))
		return b.String(), nil
	}
	b.WriteString(mustRead(s.file))
	if isRule(name) {
		b.WriteString("\n")
		b.WriteString(mustRead("single.lua"))
	}
	return b.String(), nil
}

func header(s script, clock Clock) string {
	var b strings.Builder
	w := func(format string, args ...any) {
		if format == "" {
			b.WriteString("--\n")
			return
		}
		fmt.Fprintf(&b, "-- "+format+"\n", args...)
	}
	w("ratesim %s: %s as a Redis Lua script (Redis 7 or later), printed by", version.String(), s.name)
	w("`ratesim lua %s --clock %s`. It decides as ratesim's algorithms/%s,", s.name, clock, s.goFile)
	w("decision for decision: ratesim's tests run it on a real redis-server against")
	if clock == ClockRedis {
		w("the Go rule on randomised multi-key traces (with --clock arg, whose body this")
		w("variant shares; only how now is read differs).")
	} else {
		w("the Go rule on randomised multi-key traces.")
	}
	w("")
	w("Call:    EVALSHA sha 1 KEY now cost rate per burst [OPTION VALUE]...")
	w("KEYS[1]: the limited key's state: %s.", s.state)
	if s.zset {
		w("         One Redis key per limited key (in Redis Cluster, scripts touch only it).")
	}
	w("         ratesim names it ratesim:{RUN}:LABEL:KEY.")
	w("ARGV:    integers only.")
	if clock == ClockRedis {
		w("         now: ignored (send 0); the script reads Redis TIME, in microseconds")
	} else {
		w("         now: ns since your epoch (a multiple of per, and of 1 ms for nginx,")
		w("         keeps fixed windows aligned); calls for one key in non-decreasing now")
	}
	w("         cost >= 1; rate >= 1 requests per per ns; burst >= 1")
	if len(s.options) == 0 {
		w("         options: none")
	} else {
		w("         options: %s", strings.Join(s.options, ", "))
	}
	w("Returns: {verdict, delay_ns, retry_after_ns}: verdict 0 accept, 1 delay (admitted,")
	w("         released after delay_ns), 2 reject; retry_after_ns is the shortest wait")
	w("         after which the same request would be admitted, -1 for never, 0 when")
	w("         admitted. A bad argument is an error reply starting 'ratesim: '.")
	if clock == ClockRedis {
		w("Clock:   redis: one tick is 1 us, so per, max-delay and service must be whole")
		w("         microseconds (an error reply otherwise); delays and waits come back in ns,")
		w("         multiples of 1000. Every write sets a PEXPIRE (rounded up to 1 ms) for when")
		w("         the state is fresh again. Exact at microsecond resolution, for every")
		w("         policy of whole microseconds within the range below, until the year 2100.")
	} else {
		w("Clock:   arg: one tick is 1 ns; keys get no expiry (delete them when done).")
	}
	w("Exact:   every intermediate is an integer below 2^53, so every decision is exact,")
	w("         when %s", s.exact)
	w("         (times in ticks); ratesim refuses a policy outside it (redislua.CheckRange).")
	if s.file == "guava.lua" {
		w("Doubles: the stored permits and the waits are doubles, as Guava's, each")
		w("         operation a Lua operation of its own (rounded, never fused): the same")
		w("         IEEE operations as algorithms/guava.go, so the same bits; the times are")
		w("         integers below 2^53.")
	}
	return b.String()
}

// Key returns the Redis key of one limited key of one row of a run:
// ratesim:{RUN}:LABEL:KEY. The hash tag {RUN} puts every key of a run in
// one slot of a Redis Cluster, so that a script's key and any name derived
// from it by a suffix share a slot.
func Key(run, label, key string) string {
	return "ratesim:{" + run + "}:" + label + ":" + key
}

// Args returns the ARGV of one decision: now, cost, rate, per, burst and
// the algorithm's options from p, in the calling convention. Options left
// at their defaults are not sent.
func Args(name string, p algorithms.Params, now time.Duration, cost int64) []any {
	a := []any{int64(now), cost, p.Rate, int64(p.Per), p.Burst}
	return appendOptions(a, name, p)
}

func appendOptions(a []any, name string, p algorithms.Params) []any {
	switch name {
	case "fixed-window", "sliding-window", "sliding-log":
		if p.CountRejected {
			a = append(a, "count-rejected", int64(1))
		}
	case "token-bucket", "gcra":
		if p.MaxDelay != 0 {
			a = append(a, "max-delay", int64(p.MaxDelay))
		}
	case "nginx":
		if p.NginxBurstSet {
			a = append(a, "nginx-burst", p.NginxBurst)
		}
		if p.Nodelay {
			a = append(a, "nodelay", int64(1))
		}
		if p.NginxDelay != 0 {
			a = append(a, "delay", p.NginxDelay)
		}
	case "guava-bursty", "guava-warming-up":
		if p.MaxDelay != 0 {
			a = append(a, "max-delay", int64(p.MaxDelay))
		}
		if p.MaxBurst != 0 {
			a = append(a, "max-burst", int64(p.MaxBurst))
		}
		if p.Warmup != 0 {
			a = append(a, "warmup", int64(p.Warmup))
		}
		if p.ColdFactor != 0 {
			a = append(a, "cold-factor", int64(p.ColdFactor))
		}
	case "uber-ratelimit":
		if p.SlackSet {
			a = append(a, "slack", p.Slack)
		}
	case "concurrency":
		if p.Max != 0 {
			a = append(a, "max", p.Max)
		}
		if p.Service != 0 {
			a = append(a, "service", int64(p.Service))
		}
	}
	return a
}

// SHA1 returns the SHA1 of a script as Redis names it (SCRIPT LOAD's reply,
// EVALSHA's argument).
func SHA1(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}
