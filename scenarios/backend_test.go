package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// bh is the head of the backend snippets: 4 lines, so a backend section
// after it starts on line 5.
const bh = "name: t\nlimit: 10/s\nduration: 60s\ntraffic: [{type: steady, rate: 20/s}]\n"

// bw is a valid backend with workers whose last field is on line 7, for
// the snippets that add fields after it.
const bw = bh + "backend:\n  workers: 4\n  service: 20ms\n"

// invalidBackends are backend sections and retries' on with the exact
// errors Parse reports for them: one or more for each rule. FuzzParse is
// seeded with them too.
var invalidBackends = []struct {
	name, src, want string
}{
	// workers
	{"workers 0", bh + "backend: {workers: 0, service: 20ms}\n",
		`s.yaml:5:20: backend.workers: 0: want an integer from 1 to 1000000`},
	{"workers negative", bh + "backend: {workers: -2, service: 20ms}\n",
		`s.yaml:5:20: backend.workers: -2: want an integer from 1 to 1000000`},
	{"workers not an integer", bh + "backend: {workers: 2.5, service: 20ms}\n",
		`s.yaml:5:20: backend.workers: found number 2.5, want an integer from 1 to 1000000`},
	{"workers a string", bh + "backend: {workers: four, service: 20ms}\n",
		`s.yaml:5:20: backend.workers: found string "four", want an integer from 1 to 1000000`},
	{"workers above the bound", bh + "backend: {workers: 1000001, service: 20ms}\n",
		`s.yaml:5:20: backend.workers: 1000001: want an integer from 1 to 1000000`},
	{"backend not a mapping", bh + "backend: 20ms\n",
		`s.yaml:5:10: backend: found string "20ms", want a mapping {workers, service, queue, discipline, timeout, drop-expired, errors, faults, latency}`},
	// without workers: as before, service only
	{"queue without workers", bh + "backend: {service: 20ms, queue: 10}\n",
		`s.yaml:5:26: backend.queue: needs workers (add backend.workers: the number of servers; without workers the backend is a pure delay and takes only service)`},
	{"faults without workers", bh + "backend:\n  faults: [{type: pause, at: 1s, for: 1s}]\n",
		`s.yaml:6:3: backend.faults: needs workers (add backend.workers: the number of servers; without workers the backend is a pure delay and takes only service)`},
	{"distribution without workers", bh + "backend: {service: {dist: exponential, mean: 20ms}}\n",
		`s.yaml:5:20: backend.service: a distribution needs workers (add backend.workers, or write the pure delay as a duration like 20ms)`},
	{"unknown field without workers", bh + "backend: {service: 20ms, sevice: 10}\n",
		`s.yaml:5:26: backend.sevice: unknown field (want workers, service, queue, discipline, timeout, drop-expired, errors, faults or latency); did you mean "service"?`},
	{"unknown field", bw + "  errrors: 0.1\n",
		`s.yaml:8:3: backend.errrors: unknown field (want workers, service, queue, discipline, timeout, drop-expired, errors, faults or latency); did you mean "errors"?`},
	// service
	{"service missing", bh + "backend: {workers: 4}\n",
		`s.yaml:5:10: backend.service: missing (want a duration (constant) or a mapping {dist: exponential, mean: 20ms} or {dist: lognormal, mean: 20ms, p99: 120ms})`},
	{"service negative", bh + "backend:\n  workers: 4\n  service: -20ms\n",
		`s.yaml:7:12: backend.service: "-20ms": want a duration >= 0`},
	{"service a list", bh + "backend:\n  workers: 4\n  service: [20ms]\n",
		`s.yaml:7:12: backend.service: found a list, want a duration (constant) or a mapping {dist: exponential, mean: 20ms} or {dist: lognormal, mean: 20ms, p99: 120ms}`},
	{"lognormal p99 below its mean", bh + "backend:\n  workers: 4\n  service: {dist: lognormal, mean: 20ms, p99: 10ms}\n",
		`s.yaml:7:47: backend.service.p99: lognormal p99 10ms is below its mean 20ms: a lognormal's p99 is at least its mean`},
	{"lognormal p99 with no solution", bh + "backend:\n  workers: 4\n  service: {dist: lognormal, mean: 20ms, p99: 1s}\n",
		`s.yaml:7:47: backend.service.p99: lognormal p99 1s is 50 times its mean 20ms: at most 14.97 times is possible (exp(z99^2/2))`},
	{"lognormal without p99", bh + "backend:\n  workers: 4\n  service: {dist: lognormal, mean: 20ms}\n",
		`s.yaml:7:12: backend.service.p99: missing (want a duration >= the mean: the lognormal's 99th percentile)`},
	{"lognormal mean 0", bh + "backend:\n  workers: 4\n  service: {dist: lognormal, mean: 0s, p99: 10ms}\n",
		`s.yaml:7:36: backend.service.mean: "0s": want a duration > 0`},
	{"p99 of an exponential", bh + "backend:\n  workers: 4\n  service: {dist: exponential, mean: 20ms, p99: 10ms}\n",
		`s.yaml:7:44: backend.service.p99: applies only to dist: lognormal (an exponential distribution is given by its mean)`},
	{"exponential mean 0", bh + "backend:\n  workers: 4\n  service: {dist: exponential, mean: 0s}\n",
		`s.yaml:7:38: backend.service.mean: "0s": want a duration > 0`},
	{"unknown distribution", bh + "backend:\n  workers: 4\n  service: {dist: pareto, mean: 20ms}\n",
		`s.yaml:7:19: backend.service.dist: "pareto": unknown distribution (want constant, exponential or lognormal)`},
	{"distribution missing", bh + "backend:\n  workers: 4\n  service: {mean: 20ms}\n",
		`s.yaml:7:12: backend.service.dist: missing (want constant, exponential or lognormal)`},
	{"mean missing", bh + "backend:\n  workers: 4\n  service: {dist: exponential}\n",
		`s.yaml:7:12: backend.service.mean: missing (want a duration > 0: the mean service time)`},
	{"unknown service field", bh + "backend:\n  workers: 4\n  service: {dist: exponential, mean: 20ms, sd: 1ms}\n",
		`s.yaml:7:44: backend.service.sd: unknown field (want dist, mean or p99)`},
	// queue, discipline, timeout, drop-expired, errors
	{"queue negative", bw + "  queue: -1\n",
		`s.yaml:8:10: backend.queue: -1: want an integer >= 0 or unbounded`},
	{"queue a word", bw + "  queue: infinite\n",
		`s.yaml:8:10: backend.queue: found string "infinite", want an integer >= 0 or unbounded`},
	{"unknown discipline", bw + "  discipline: random\n",
		`s.yaml:8:15: backend.discipline: "random": unknown discipline (want fifo or lifo)`},
	{"timeout negative", bw + "  timeout: -1s\n",
		`s.yaml:8:12: backend.timeout: "-1s": want a duration >= 0`},
	{"drop-expired without a timeout", bw + "  drop-expired: true\n",
		`s.yaml:8:17: backend.drop-expired: true: applies only with a timeout > 0 (without one no client gives up, and nothing expires)`},
	{"drop-expired not a boolean", bw + "  timeout: 1s\n  drop-expired: yes\n",
		`s.yaml:9:17: backend.drop-expired: found string "yes", want true or false`},
	{"errors above 1", bw + "  errors: 1.5\n",
		`s.yaml:8:11: backend.errors: 1.5: outside [0, 1] (want a fraction from 0 to 1 like 0.01)`},
	{"errors negative", bw + "  errors: -0.1\n",
		`s.yaml:8:11: backend.errors: -0.1: outside [0, 1] (want a fraction from 0 to 1 like 0.01)`},
	{"errors as a percentage", bw + "  errors: 1%\n",
		`s.yaml:8:11: backend.errors: found string "1%", want a fraction from 0 to 1 like 0.01`},
	{"errors NaN", bw + "  errors: .nan\n",
		`s.yaml:8:11: backend.errors: found number .nan, want a fraction from 0 to 1 like 0.01`},
	// faults
	{"faults not a list", bw + "  faults: {type: pause, at: 6s, for: 1s}\n",
		`s.yaml:8:11: backend.faults: found a mapping, want a list of faults like {type: slow, at: 20s, for: 10s, factor: 5}`},
	{"unknown fault type", bw + "  faults:\n    - {type: crash, at: 1s, for: 1s}\n",
		`s.yaml:9:14: backend.faults[0].type: "crash": unknown fault type (want slow, pause, workers or trigger)`},
	{"fault without type", bw + "  faults:\n    - {at: 6s, for: 1s}\n",
		`s.yaml:9:7: backend.faults[0].type: missing (want slow, pause, workers or trigger)`},
	{"unknown fault field", bw + "  faults:\n    - {type: pause, at: 1s, for: 1s, until: 2s}\n",
		`s.yaml:9:38: backend.faults[0].until: unknown field (want type, at, for, factor or count)`},
	{"fault field of another type", bw + "  faults:\n    - {type: pause, at: 1s, for: 1s, factor: 2}\n",
		`s.yaml:9:38: backend.faults[0].factor: does not apply to a pause fault (its fields: at, for)`},
	{"overlapping slow faults", bw + "  faults:\n    - {type: slow, at: 1s, for: 10s, factor: 5}\n    - {type: slow, at: 5s, for: 1s, factor: 2}\n",
		`s.yaml:10:7: backend.faults[1]: slow fault over [5s, 6s) overlaps the slow fault over [1s, 11s) of backend.faults[0] at 9:7 (want the faults of one type apart: merge them into one)`},
	{"overlapping pauses out of order", bw + "  faults:\n    - {type: pause, at: 3s, for: 1s}\n    - {type: pause, at: 2500ms, for: 1s}\n",
		`s.yaml:9:7: backend.faults[0]: pause fault over [3s, 4s) overlaps the pause fault over [2.5s, 3.5s) of backend.faults[1] at 10:7 (want the faults of one type apart: merge them into one)`},
	{"slow without factor", bw + "  faults:\n    - {type: slow, at: 1s, for: 10s}\n",
		`s.yaml:9:7: backend.faults[0].factor: missing (want a number > 0 like 5: the service times' multiplier)`},
	{"slow factor 0", bw + "  faults:\n    - {type: slow, at: 1s, for: 10s, factor: 0}\n",
		`s.yaml:9:46: backend.faults[0].factor: 0: want a number > 0 like 5: the service times' multiplier`},
	{"workers cut to as many", bw + "  faults:\n    - {type: workers, at: 1s, for: 10s, count: 4}\n",
		`s.yaml:9:48: backend.faults[0].count: 4: want an integer from 0 to 3: the workers left, fewer than the 4 of the backend`},
	{"workers cut without count", bw + "  faults:\n    - {type: workers, at: 1s, for: 10s}\n",
		`s.yaml:9:7: backend.faults[0].count: missing (want an integer from 0 to 3: the workers left, fewer than the 4 of the backend)`},
	{"fault at negative", bw + "  faults:\n    - {type: pause, at: -1s, for: 1s}\n",
		`s.yaml:9:25: backend.faults[0].at: "-1s": want a duration >= 0`},
	{"fault for 0", bw + "  faults:\n    - {type: pause, at: 1s, for: 0s}\n",
		`s.yaml:9:34: backend.faults[0].for: "0s": want a duration > 0`},
	{"fault without for", bw + "  faults:\n    - {type: pause, at: 1s}\n",
		`s.yaml:9:7: backend.faults[0].for: missing (want a duration > 0: how long the fault lasts)`},
	{"fault after the end", bw + "  faults:\n    - {type: pause, at: 60s, for: 1s}\n",
		`s.yaml:9:25: backend.faults[0].at: "60s": at or after the scenario's end 1m0s, so the fault never happens`},
	{"fault beyond the end of time", bw + "  faults:\n    - {type: pause, at: 2562047h, for: 1h}\n",
		`s.yaml:9:25: backend.faults[0].at: at + for is beyond the largest time 2562047h47m16.854775807s`},
	// retries' on
	{"shed without workers", bh + "clients:\n  retry: {policy: fixed, delay: 1s, on: [reject, shed]}\n",
		`s.yaml:6:50: clients.retry.on[1]: "shed": only a backend with workers sheds, times out or fails requests (add backend.workers, or retry on reject only)`},
	{"timeout without workers, on a source", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at: [0s]\n    retry: {policy: backoff, delay: 1s, on: [timeout]}\n",
		`s.yaml:6:46: traffic[0].retry.on[0]: "timeout": only a backend with workers sheds, times out or fails requests (add backend.workers, or retry on reject only)`},
	{"error under a pure delay", bh + "backend: {service: 20ms}\nclients:\n  retry: {policy: immediate, on: [error]}\n",
		`s.yaml:7:35: clients.retry.on[0]: "error": only a backend with workers sheds, times out or fails requests (add backend.workers, or retry on reject only)`},
	{"unknown cause", bw + "clients:\n  retry: {policy: fixed, delay: 1s, on: [timeout, error, shed, retry]}\n",
		`s.yaml:9:64: clients.retry.on[3]: "retry": unknown cause (want reject, shed, timeout or error)`},
	{"empty on", bh + "clients:\n  retry: {policy: fixed, delay: 1s, on: []}\n",
		`s.yaml:6:41: clients.retry.on: empty list (want at least one of reject, shed, timeout or error; policy none retries nothing)`},
	{"on not a list", bh + "clients:\n  retry: {policy: fixed, delay: 1s, on: reject}\n",
		`s.yaml:6:41: clients.retry.on: found string "reject", want a list of causes: reject, shed, timeout or error`},
	{"cause twice", bh + "clients:\n  retry: {policy: fixed, delay: 1s, on: [reject, reject]}\n",
		`s.yaml:6:50: clients.retry.on[1]: "reject": listed twice (also clients.retry.on[0])`},
	{"on for policy none", bh + "clients:\n  retry: {policy: none, on: [reject]}\n",
		`s.yaml:6:25: clients.retry.on: does not apply to policy none (it takes no other field)`},
	// envoy-adaptive has no default interval, as in envoy: the entry
	// names it; a written bad value is pointed at
	{"envoy without interval", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [envoy-adaptive]\n",
		`s.yaml:6:14: algorithms[0]: interval: none: required, as in envoy (concurrency_update_interval): how often the limit is recalculated (for algorithm envoy-adaptive)`},
	{"envoy interval below 1ms", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [{name: envoy-adaptive, interval: 100us}]\n",
		`s.yaml:6:47: algorithms[0].interval: 100µs: want at least 1ms (envoy reads it in whole milliseconds)`},
	{"sre-throttle k not positive", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [{name: sre-throttle, k: 0}]\n",
		`s.yaml:6:38: algorithms[0].k: 0: want a multiplier > 0, like 2 or 1.5 (the book: 2)`},
	{"sre-throttle window not whole seconds", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [{name: sre-throttle, window: 1500ms}]\n",
		`s.yaml:6:43: algorithms[0].window: 1.5s: want a whole number of seconds, at least 1s (the book: 2m)`},
	{"sre-throttle without workers", bh + "algorithms: [sre-throttle]\n",
		`s.yaml:5:14: algorithms[0]: sre-throttle: an adaptive limit learns from the backend's answers: it needs a backend with workers (add backend.workers)`},
	{"k on another algorithm", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [{name: aimd, k: 2}]\n",
		`s.yaml:6:27: algorithms[0].k: aimd takes no option "k" (its options: window, min-samples, initial-limit, min-limit, max-limit)`},
	{"min-limit for vegas", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [{name: vegas, min-limit: 2}]\n",
		`s.yaml:6:28: algorithms[0].min-limit: vegas takes no option "min-limit" (its options: window, min-samples, initial-limit, max-limit); did you mean "max-limit"?`},
	{"min-limit 0", bh + "backend: {workers: 2, service: 10ms}\nalgorithms: [{name: aimd, min-limit: 0}]\n",
		`s.yaml:6:38: algorithms[0].min-limit: 0: want an integer from 1 to 2^30: requests in flight`},
	// an invalid workers is reported alone: on is not held against it
	{"on with invalid workers", bh + "backend: {workers: 0, service: 1ms}\nclients:\n  retry: {policy: fixed, delay: 1s, on: [timeout]}\n",
		`s.yaml:5:20: backend.workers: 0: want an integer from 1 to 1000000`},
}

func TestParseInvalidBackend(t *testing.T) {
	for _, tc := range invalidBackends {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.Nil(t, sc)
			require.EqualError(t, err, tc.want)
		})
	}
}

// Every problem of a backend section is reported, in order of position.
func TestParseBackendCollectsErrors(t *testing.T) {
	src := bh + `backend:
  workers: 0
  service: {dist: lognormal, mean: 20ms, p99: 10ms}
  queue: -3
  discipline: lilo
  errors: 2
  faults:
    - {type: slow, at: 1s, for: 2s, factor: 3}
    - {type: slow, at: 2s, for: 2s, factor: 3}
    - {type: stall, at: 1s, for: 1s}
clients:
  retry: {policy: fixed, delay: 1s, on: [shed, sometimes]}
`
	_, err := Parse("s.yaml", []byte(src))
	require.EqualError(t, err, strings.Join([]string{
		`s.yaml:6:12: backend.workers: 0: want an integer from 1 to 1000000`,
		`s.yaml:7:47: backend.service.p99: lognormal p99 10ms is below its mean 20ms: a lognormal's p99 is at least its mean`,
		`s.yaml:8:10: backend.queue: -3: want an integer >= 0 or unbounded`,
		`s.yaml:9:15: backend.discipline: "lilo": unknown discipline (want fifo or lifo); did you mean "lifo"?`,
		`s.yaml:10:11: backend.errors: 2: outside [0, 1] (want a fraction from 0 to 1 like 0.01)`,
		`s.yaml:13:7: backend.faults[1]: slow fault over [2s, 4s) overlaps the slow fault over [1s, 3s) of backend.faults[0] at 12:7 (want the faults of one type apart: merge them into one)`,
		`s.yaml:14:14: backend.faults[2].type: "stall": unknown fault type (want slow, pause, workers or trigger)`,
		`s.yaml:16:48: clients.retry.on[1]: "sometimes": unknown cause (want reject, shed, timeout or error)`,
	}, "\n"))
}

// specBackend is the backend section of docs/backend.md, with every field
// and fault type, and the retry policy that follows it there.
const specBackend = `backend:
  workers: 4
  service: {dist: exponential, mean: 20ms}
  queue: 100
  discipline: fifo
  timeout: 500ms
  drop-expired: false
  errors: 0.01
  faults:
    - {type: slow, at: 20s, for: 10s, factor: 5}
    - {type: pause, at: 30s, for: 1s}
    - {type: workers, at: 40s, for: 10s, count: 1}
clients:
  retry: {policy: backoff, delay: 50ms, max-attempts: 3, on: [reject, shed, timeout, error]}
`

// validBackends are valid backend sections and retries' on, and what Parse
// makes of them. FuzzParse is seeded with them too.
var validBackends = []struct {
	name, src string
	check     func(t *testing.T, sc *Scenario)
}{
	{"the documented backend", bh + specBackend, func(t *testing.T, sc *Scenario) {
		require.Equal(t, &backend.Config{
			Workers:    4,
			Service:    backend.Service{Dist: backend.Exponential, Mean: 20 * time.Millisecond},
			Queue:      100,
			Discipline: backend.FIFO,
			Timeout:    500 * time.Millisecond,
			Errors:     0.01,
			Faults: []backend.Fault{
				{Type: backend.Slow, At: 20 * time.Second, For: 10 * time.Second, Factor: 5},
				{Type: backend.Pause, At: 30 * time.Second, For: time.Second},
				{Type: backend.Workers, At: 40 * time.Second, For: 10 * time.Second, Count: 1},
			},
			Seed:   1,
			Bucket: 100 * time.Millisecond,
		}, sc.Backend)
		// the concurrency limiter assumes the mean
		require.Equal(t, 20*time.Millisecond, sc.Service)
		for _, a := range sc.Algorithms {
			require.Equal(t, 20*time.Millisecond, a.Params.Service, a.Name)
		}
		all := traffic.RetryOnOf(traffic.CauseReject, traffic.CauseShed, traffic.CauseTimeout, traffic.CauseError)
		require.Equal(t, traffic.RetryPolicy{Policy: "backoff", Delay: 50 * time.Millisecond, Factor: traffic.Fraction{Num: 2, Den: 1},
			Jitter: "none", MaxAttempts: 3, On: all}, sc.Retry)
		require.Equal(t, []traffic.RetryPolicy{sc.Retry}, sc.Retries)
	}},
	{"without workers, as before", bh + "backend: {service: 20ms}\n", func(t *testing.T, sc *Scenario) {
		require.Nil(t, sc.Backend)
		require.Equal(t, 20*time.Millisecond, sc.Service)
	}},
	{"without a backend", bh, func(t *testing.T, sc *Scenario) {
		require.Nil(t, sc.Backend)
		require.Zero(t, sc.Service)
	}},
	{"defaults", bh + "seed: 7\nreport: {bucket: 250ms}\nbackend:\n  workers: 1\n  service: 100ms\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, &backend.Config{
			Workers:    1,
			Service:    backend.Service{Dist: backend.Constant, Mean: 100 * time.Millisecond},
			Queue:      backend.Unbounded,
			Discipline: backend.FIFO,
			Seed:       7,
			Bucket:     250 * time.Millisecond,
		}, sc.Backend)
		require.Equal(t, 100*time.Millisecond, sc.Service)
		require.Equal(t, traffic.RetryPolicy{Policy: "none"}, sc.Retry)
	}},
	{"a constant written as a mapping, of 0", bh + "backend: {workers: 2, service: {dist: constant, mean: 0s}}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, backend.Service{Dist: backend.Constant}, sc.Backend.Service)
		require.Zero(t, sc.Service)
	}},
	{"lognormal, LIFO, a loss system", bh + "backend:\n  workers: 2\n  service: {dist: lognormal, mean: 20ms, p99: 120ms}\n  queue: 0\n  discipline: lifo\n  timeout: 1s\n  drop-expired: true\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, backend.Service{Dist: backend.Lognormal, Mean: 20 * time.Millisecond, P99: 120 * time.Millisecond}, sc.Backend.Service)
			require.Equal(t, 0, sc.Backend.Queue)
			require.Equal(t, backend.LIFO, sc.Backend.Discipline)
			require.Equal(t, time.Second, sc.Backend.Timeout)
			require.True(t, sc.Backend.DropExpired)
			require.Equal(t, 20*time.Millisecond, sc.Service)
		}},
	{"lognormal with p99 at its mean, queue unbounded", bh + "backend: {workers: 3, service: {dist: lognormal, mean: 20ms, p99: 20ms}, queue: unbounded}\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, backend.Unbounded, sc.Backend.Queue)
		}},
	{"errors read as written", bh + "backend: {workers: 1, service: 1ms, errors: 0.1}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, 0.1, sc.Backend.Errors) // the float64 nearest 0.1, as strconv reads it
	}},
	{"errors 1 and timeout 0", bh + "backend: {workers: 1, service: 1ms, errors: 1, timeout: 0}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, 1.0, sc.Backend.Errors)
		require.Zero(t, sc.Backend.Timeout)
	}},
	{"faults end to end, and of different types overlapping", bh + "backend:\n  workers: 2\n  service: 1ms\n  faults:\n" +
		"    - {type: pause, at: 1s, for: 10s}\n    - {type: slow, at: 5s, for: 1s, factor: 0.5}\n    - {type: pause, at: 11s, for: 1s}\n" +
		"    - {type: workers, at: 0s, for: 59s, count: 0}\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, []backend.Fault{
				{Type: backend.Pause, At: time.Second, For: 10 * time.Second},
				{Type: backend.Slow, At: 5 * time.Second, For: time.Second, Factor: 0.5},
				{Type: backend.Pause, At: 11 * time.Second, For: time.Second},
				{Type: backend.Workers, For: 59 * time.Second},
			}, sc.Backend.Faults)
		}},
	{"on per source, reject alone is the default", bh[:strings.Index(bh, "traffic:")] + "backend: {workers: 1, service: 10ms}\n" +
		"clients:\n  retry: {policy: fixed, delay: 1s, on: [timeout]}\ntraffic:\n" +
		"  - {type: steady, rate: 5/s}\n" +
		"  - {type: steady, rate: 5/s, retry: {policy: retry-after, on: [reject]}}\n" +
		"  - {type: steady, rate: 5/s, retry: {policy: immediate, on: [error, shed]}}\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, traffic.RetryOnOf(traffic.CauseTimeout), sc.Retry.On)
			require.Equal(t, []traffic.RetryOn{
				traffic.RetryOnOf(traffic.CauseTimeout),
				0,
				traffic.RetryOnOf(traffic.CauseShed, traffic.CauseError),
			}, []traffic.RetryOn{sc.Retries[0].On, sc.Retries[1].On, sc.Retries[2].On})
			require.False(t, sc.Retries[0].On.Retries(traffic.CauseReject))
			require.True(t, sc.Retries[1].On.Retries(traffic.CauseReject))
		}},
	{"on: [reject] without a backend", bh + "clients:\n  retry: {policy: fixed, delay: 1s, on: [reject]}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, traffic.RetryPolicy{Policy: "fixed", Delay: time.Second, MaxAttempts: 3}, sc.Retry)
	}},
	{"with a cluster", bh + "cluster: {nodes: 2}\nbackend: {workers: 8, service: {dist: exponential, mean: 5ms}}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, 8, sc.Backend.Workers)
		require.Equal(t, 2, sc.Cluster.Nodes)
	}},
}

func TestParseValidBackend(t *testing.T) {
	for _, tc := range validBackends {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			checkInvariants(t, sc)
			tc.check(t, sc)
		})
	}
}

// With replay traffic the faults are not held against a duration (the
// traces run until they end): they count from the first request.
func TestBackendWithReplay(t *testing.T) {
	src := replayHead + "  - {type: replay, path: ../traffic/testdata/replay/combined.log}\n" +
		"backend:\n  workers: 1\n  service: 1ms\n  faults: [{type: pause, at: 1h, for: 1s}]\n"
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, time.Hour, sc.Backend.Faults[0].At)
	require.Zero(t, sc.Backend.Start)
}

// Concurrency's own bound on the service time is reported at the mean.
func TestBackendServiceParamError(t *testing.T) {
	newLimiter = fakeNew
	defer func() { newLimiter = algorithms.New }()
	_, err := Parse("s.yaml", []byte(bh+"backend:\n  workers: 1\n  service: {dist: exponential, mean: 2h}\n"))
	require.EqualError(t, err, `s.yaml:7:38: backend.service.mean: 2h0m0s: want at most 1h (for algorithm concurrency)`)
}

// checkBackend checks what every accepted scenario's backend and retries
// satisfy.
func checkBackend(t testing.TB, sc *Scenario) {
	t.Helper()
	for _, a := range sc.Algorithms {
		require.Equal(t, sc.Service, a.Params.Service, a.Label)
	}
	b := sc.Backend
	if b == nil {
		// only a backend with workers sheds, times out or fails
		for _, p := range append([]traffic.RetryPolicy{sc.Retry}, sc.Retries...) {
			require.Equal(t, traffic.RetryOn(0), p.On)
		}
		return
	}
	require.NoError(t, b.Validate())
	require.Equal(t, sc.Seed, b.Seed)
	require.Equal(t, sc.Bucket, b.Bucket)
	require.Zero(t, b.Start)
	require.Equal(t, b.Service.Mean, sc.Service)
	require.NotEmpty(t, b.Service.Dist)
	require.NotEmpty(t, b.Discipline)
	if sc.Duration > 0 && len(sc.replays) == 0 {
		for _, f := range b.Faults {
			require.Less(t, f.At, sc.Duration)
		}
	}
	for _, f := range b.Faults {
		if f.Type == backend.Workers {
			require.Less(t, f.Count, b.Workers)
		}
	}
}

// TestBackendExtremeValues puts extreme values in every field of backend
// sections: whatever Parse accepts satisfies the invariants, and nothing
// panics.
func TestBackendExtremeValues(t *testing.T) {
	ints := []string{"0", "1", "3", "1000000", "9223372036854775807", "-1"}
	durations := []string{"0", "1ns", "59s", "1h", "2562047h47m16.854775807s", "-1s"}
	numbers := []string{"0", "0.5", "1", "1e-300", "5e-324", "1e308", "-0", "2"}
	templates := []string{
		"backend: {workers: %[1]s, service: %[2]s, queue: %[1]s, timeout: %[3]s, errors: %[4]s}\n",
		"backend: {workers: %[1]s, service: {dist: exponential, mean: %[2]s}, timeout: %[3]s, drop-expired: true}\n",
		"backend: {workers: %[1]s, service: {dist: lognormal, mean: %[2]s, p99: %[3]s}}\n",
		"backend: {workers: 2, service: 1ms, faults: [{type: slow, at: %[2]s, for: %[3]s, factor: %[4]s}, {type: workers, at: %[3]s, for: %[2]s, count: %[1]s}]}\n",
		"backend: {workers: %[1]s, service: 1ms, faults: [{type: pause, at: %[2]s, for: %[3]s}, {type: pause, at: %[3]s, for: %[2]s}, {type: workers, at: 0s, for: 1s, count: %[1]s}]}\n",
	}
	accepted, long := 0, false
	for i, tmpl := range templates {
		var combos [][]any
		combos, long = extremeArgs(t, i, ints, durations, durations, numbers)
		for _, args := range combos {
			src := bh + fmt.Sprintf(tmpl, args...)
			sc, err := Parse("s.yaml", []byte(src))
			if err != nil {
				require.Nil(t, sc)
				continue
			}
			accepted++
			checkInvariants(t, sc)
		}
	}
	t.Logf("%d scenarios accepted", accepted)
	if long {
		require.Greater(t, accepted, 500)
	} else {
		require.Greater(t, accepted, 500/extremeStride)
	}
}
