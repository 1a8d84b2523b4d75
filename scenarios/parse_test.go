package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// invalid are scenario snippets and the exact errors Parse reports for them
// (file "s.yaml"). FuzzParse is seeded with them too.
var invalid = []struct {
	name, src, want string
}{
	{"empty file", "", `s.yaml:1:1: no scenario: the file is empty or only comments (want a mapping with name, limit and traffic)`},
	{"only comments", "# a scenario\n\n# to come\n", `s.yaml:1:1: no scenario: the file is empty or only comments (want a mapping with name, limit and traffic)`},
	{"top level list", "- name: t\n", `s.yaml:1:1: found a list, want a mapping with name, limit and traffic`},
	{"top level string", "double-burst\n", `s.yaml:1:1: found string "double-burst", want a mapping with name, limit and traffic`},
	{"two documents", "name: t\n---\nname: u\n", `s.yaml:3:1: found a second YAML document, want one scenario per file`},
	{"syntax error", "name: t\nlimit: {rate: 10\n", `s.yaml:2:8: YAML syntax error: could not find flow mapping end token '}'`},
	{"syntax error indentation", "name: t\n limit: 10/s\n", `s.yaml:1:7: YAML syntax error: mapping value is not allowed in this context`},
	{"unknown top-level field", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\ndurtion: 3s\n",
		`s.yaml:4:1: durtion: unknown field (want name, description, seed, duration, limit, algorithms, traffic, clients, backend, report, cluster or expect); did you mean "duration"?`},
	{"missing name", "limit: 10/s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:1:1: name: missing (want a string naming the scenario)`},
	{"name not a string", "name: 42\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:1:7: name: found integer 42, want a string (quote it: "42")`},
	{"empty name", "name: ''\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:1:7: name: "": want a non-empty string`},
	{"null value", "name: t\ndescription:\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:13: description: found null, want a string`},
	{"missing traffic", "name: t\nlimit: 10/s\n", `s.yaml:1:1: traffic: missing (want a list of traffic sources)`},
	{"empty traffic", "name: t\nlimit: 10/s\ntraffic: []\n", `s.yaml:3:10: traffic: empty list (want at least one traffic source)`},
	{"missing limit", "name: t\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:1:1: limit: missing (want a rate like 10/s or a mapping {rate, per, burst})`},
	{"limit list", "name: t\nlimit: [10, 1s]\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:8: limit: found a list, want a rate like 10/s or a mapping {rate, per, burst}`},
	{"limit bare number", "name: t\nlimit: 10\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:8: limit: 10: not a rate (want 10/s, 600/m, 5/100ms)`},
	{"limit burst 0", "name: t\nlimit: {rate: 10, burst: 0}\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:26: limit.burst: 0: want an integer >= 1`},
	{"limit without rate", "name: t\nlimit: {per: 1s}\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:8: limit.rate: missing (want an integer >= 1 (requests per per))`},
	{"limit rate as string", "name: t\nlimit:\n  rate: 10/s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:9: limit.rate: found string "10/s", want an integer >= 1 (requests per per)`},
	{"limit per 0", "name: t\nlimit: {rate: 10, per: 0s}\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:24: limit.per: "0s": want a duration > 0`},
	{"integer out of range", "name: t\nlimit: {rate: 99999999999999999999}\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:15: limit.rate: 99999999999999999999: out of range (want an integer >= 1 (requests per per))`},
	{"hex integer", "name: t\nlimit: {rate: 0x10}\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:2:15: limit.rate: 0x10: not a decimal integer (want an integer >= 1 (requests per per))`},
	{"bad rate unit", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - type: steady\n    rate: 10/x\n",
		`s.yaml:6:11: traffic[0].rate: "10/x": unknown unit "x" (want 10/s, 600/m, 5/100ms)`},
	{"negative duration", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    start: -1s\n    at: [0s]\n", `s.yaml:5:12: traffic[0].start: "-1s": want a duration >= 0`},
	{"negative scenario duration", "name: t\nlimit: 10/s\nduration: -3s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:11: duration: "-3s": want a duration > 0`},
	{"bare number duration", "name: t\nlimit: 10/s\nduration: 3\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:11: duration: 3: no unit (add one: ns, us, ms, s, m or h, e.g. 3s)`},
	{"duration with fraction of a ns", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [1ns, 0.5ns]}]\n", `s.yaml:3:35: traffic[0].at[1]: "0.5ns": not a whole number of nanoseconds`},
	{"duration out of range", "name: t\nlimit: 10/s\nduration: 300y\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:11: duration: "300y": unknown unit "y" (want ns, us, ms, s, m or h)`},
	{"duration list", "name: t\nlimit: 10/s\nduration: [3s]\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:11: duration: found a list, want a duration like 900ms`},
	{"adaptive min-samples below the Java's", "name: t\nlimit: 10/s\nbackend: {workers: 1, service: 10ms}\nalgorithms:\n  - {name: aimd, window: 1s, min-samples: 5}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:5:43: algorithms[0].min-samples: 5: want an integer >= 10 (samples a window needs, as the Java requires)`},
	{"window on a non-adaptive algorithm", "name: t\nlimit: 10/s\nalgorithms:\n  - {name: gcra, window: 1s}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:18: algorithms[0].window: gcra takes no option "window" (its options: max-delay)`},
	{"adaptive without workers", "name: t\nlimit: 10/s\nalgorithms: [gcra, aimd]\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:3:20: algorithms[1]: aimd: an adaptive limit learns from the backend's answers: it needs a backend with workers (add backend.workers)`},
	{"unknown algorithm", "name: t\nlimit: 10/s\nalgorithms: [fixed-window, token-buckets]\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:3:28: algorithms[1]: "token-buckets": unknown algorithm (want fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency, x-time-rate, none, aimd, vegas, gradient2, envoy-adaptive or sre-throttle); did you mean "token-bucket"?`},
	// case and _ for - are the slips a name's suggestion must cover
	{"algorithm in snake case", "name: t\nlimit: 10/s\nalgorithms: [leaky_bucket, GCRA]\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:3:14: algorithms[0]: "leaky_bucket": unknown algorithm (want fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency, x-time-rate, none, aimd, vegas, gradient2, envoy-adaptive or sre-throttle); did you mean "leaky-bucket"?
s.yaml:3:28: algorithms[1]: "GCRA": unknown algorithm (want fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency, x-time-rate, none, aimd, vegas, gradient2, envoy-adaptive or sre-throttle); did you mean "gcra"?`},
	{"unknown algorithm in a mapping", "name: t\nlimit: 10/s\nalgorithms:\n  - name: fixed\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:11: algorithms[0].name: "fixed": unknown algorithm (want fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency, x-time-rate, none, aimd, vegas, gradient2, envoy-adaptive or sre-throttle)`},
	{"option not taken", "name: t\nlimit: 10/s\nalgorithms:\n  - token-bucket\n  - name: fixed-window\n    nodelay: true\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:6:5: algorithms[1].nodelay: fixed-window takes no option "nodelay" (its options: count-rejected)`},
	{"option of an algorithm without options", "name: t\nlimit: 10/s\nalgorithms:\n  - name: leaky-bucket\n    lable: lb\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:5:5: algorithms[0].lable: leaky-bucket takes no option "lable" (it has none besides rate, per and burst); did you mean "label"?`},
	{"option of the wrong type", "name: t\nlimit: 10/s\nalgorithms:\n  - name: nginx\n    nodelay: yes\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:5:14: algorithms[0].nodelay: found string "yes", want true or false`},
	{"zone with a bad unit", "name: t\nlimit: 10/s\nalgorithms:\n  - name: nginx\n    zone: 10x\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:5:11: algorithms[0].zone: "10x": want a size as nginx writes it: bytes, or k or m for KiB or MiB (32k, 10m)`},
	{"zone too small", "name: t\nlimit: 10/s\nalgorithms:\n  - {name: nginx, zone: 16k}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:25: algorithms[0].zone: "16k": want a zone of at least 32k (nginx's smallest: 8 pages of 4 KiB)`},
	{"zone too large", "name: t\nlimit: 10/s\nalgorithms:\n  - {name: nginx, zone: 99999999999m}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:25: algorithms[0].zone: "99999999999m": want a zone of at most 1048576m`},
	{"zone negative", "name: t\nlimit: 10/s\nalgorithms:\n  - {name: nginx, zone: -1}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:25: algorithms[0].zone: -1: want a size as nginx writes it: bytes, or k or m for KiB or MiB (32k, 10m)`},
	{"zone on another algorithm", "name: t\nlimit: 10/s\nalgorithms:\n  - {name: gcra, zone: 1m}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:18: algorithms[0].zone: gcra takes no option "zone" (its options: max-delay)`},
	{"zone on a cluster", "name: t\nlimit: 10/s\ncluster: {nodes: 2}\nalgorithms:\n  - {name: nginx, zone: 1m}\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:5:19: algorithms[0].zone: "1m": nginx's zone is one nginx's shared memory: it is not modelled on a cluster (remove zone or the cluster section)`},
	{"entry without name", "name: t\nlimit: 10/s\nalgorithms:\n  - label: x\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:4:5: algorithms[0].name: missing (want an algorithm: fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency, x-time-rate, none, aimd, vegas, gradient2, envoy-adaptive or sre-throttle)`},
	{"entry a number", "name: t\nlimit: 10/s\nalgorithms: [1]\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:14: algorithms[0]: found integer 1, want an algorithm name or a mapping with a name`},
	{"empty algorithms", "name: t\nlimit: 10/s\nalgorithms: []\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:13: algorithms: empty list (want at least one algorithm, or no algorithms field for all of them)`},
	{"duplicate label", "name: t\nlimit: 10/s\nalgorithms:\n  - token-bucket\n  - name: gcra\n    label: token-bucket\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:6:12: algorithms[1].label: "token-bucket": duplicate label (also algorithms[0] at 4:5); set a unique label`},
	{"duplicate bare name", "name: t\nlimit: 10/s\nalgorithms: [gcra, gcra]\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:3:20: algorithms[1]: "gcra": duplicate label (also algorithms[0] at 3:14); set a unique label`},
	{"duplicate key", "name: t\nlimit:\n  rate: 10\n  burst: 5\n  rate: 20\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:5:3: limit.rate: duplicate key (first at 3:3)`},
	{"duplicate top-level key", "name: t\nlimit: 10/s\nname: u\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:3:1: name: duplicate key (first at 1:1)`},
	{"string for count", "name: t\nlimit: 10/s\ntraffic:\n  - type: burst\n    at: 0s\n    count: ten\n", `s.yaml:6:12: traffic[0].count: found string "ten", want an integer >= 1`},
	{"quoted number for count", "name: t\nlimit: 10/s\ntraffic:\n  - type: burst\n    at: 0s\n    count: \"10\"\n", `s.yaml:6:12: traffic[0].count: found string "10", want an integer >= 1`},
	{"mapping for at", "name: t\nlimit: 10/s\ntraffic:\n  - type: burst\n    at: {t: 1s}\n    count: 3\n", `s.yaml:5:9: traffic[0].at: found a mapping, want a duration like 900ms`},
	{"scalar for times at", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at: 1s\n", `s.yaml:5:9: traffic[0].at: found string "1s", want a list of instants like [0ms, 400ms]`},
	{"empty times at", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at: []\n", `s.yaml:5:9: traffic[0].at: empty list (want at least one instant)`},
	{"burst without count", "name: t\nlimit: 10/s\ntraffic:\n  - type: burst\n    at: 0s\n", `s.yaml:4:5: traffic[0].count: missing (want an integer >= 1: the requests each client sends)`},
	{"unknown field in a source", "name: t\nlimit: 10/s\ntraffic:\n  - type: burst\n    at: 0s\n    count: 3\n    spread: 1s\n",
		`s.yaml:7:5: traffic[0].spread: unknown field (a burst source takes at, count, over and type, key, clients, key-prefix, cost, start, end, retry, attributes)`},
	{"source not a mapping", "name: t\nlimit: 10/s\ntraffic: [steady]\n", `s.yaml:3:11: traffic[0]: found string "steady", want a mapping with a type (times, burst, steady, poisson, aligned, onoff, ramp or replay)`},
	{"source without type", "name: t\nlimit: 10/s\ntraffic:\n  - at: [0s]\n", `s.yaml:4:5: traffic[0].type: missing (want times, burst, steady, poisson, aligned, onoff, ramp or replay)`},
	{"unknown type", "name: t\nlimit: 10/s\ntraffic:\n  - type: uniform\n",
		`s.yaml:4:11: traffic[0].type: "uniform": unknown type (want times, burst, steady, poisson, aligned, onoff, ramp or replay)`},
	{"key and clients both", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    key: alice\n    clients: 3\n    at: [0s]\n", `s.yaml:6:5: traffic[0].clients: want key or clients, not both`},
	{"key-prefix without clients", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    key-prefix: user\n    at: [0s]\n", `s.yaml:5:5: traffic[0].key-prefix: applies only with clients`},
	{"clients 0", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    clients: 0\n    at: [0s]\n", `s.yaml:5:14: traffic[0].clients: 0: want an integer from 1 to 10000000`},
	{"key not a string", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    key: 7\n    at: [0s]\n", `s.yaml:5:10: traffic[0].key: found integer 7, want a string (quote it: "7")`},
	{"steady with no duration", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at: [0s]\n  - type: steady\n    rate: 5/s\n",
		`s.yaml:6:5: traffic[1]: a steady source without end runs until the scenario's duration: set duration (or end on the source)`},
	{"steady without rate", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - type: steady\n", `s.yaml:5:5: traffic[0].rate: missing (want a rate like 10/s, 600/m or 5/100ms)`},
	{"end before start", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - type: steady\n    rate: 5/s\n    start: 2s\n    end: 1s\n", `s.yaml:8:10: traffic[0].end: "1s": want an end after start 2s`},
	{"start after the end", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - type: steady\n    rate: 5/s\n    start: 3s\n", `s.yaml:7:12: traffic[0].start: "3s": at or after the scenario's end 3s, so the source sends nothing`},
	{"instant at the end of time", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [2562047h47m16.854775807s]}]\n",
		`s.yaml:3:30: traffic[0].at[0]: "2562047h47m16.854775807s": want an instant before 2562047h47m16.854775807s`},
	{"burst beyond the end of time", "name: t\nlimit: 10/s\ntraffic: [{type: burst, at: 2562047h, count: 2, over: 1h}]\n",
		`s.yaml:3:25: traffic[0].at: at + over is beyond the largest time 2562047h47m16.854775807s`},
	{"derived duration out of range", "name: t\nlimit: {rate: 1, per: 600000h}\ntraffic: [{type: times, at: [2500000h]}]\n",
		`s.yaml:1:1: duration: missing, and the traffic's end 2500000h0m0.000000001s rounded up to a multiple of per 600000h0m0s is out of range: set one`},
	{"cost 0", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    cost: 0\n    at: [0s]\n", `s.yaml:5:11: traffic[0].cost: 0: want an integer >= 1`},
	{"backoff cap below base", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry:\n    policy: backoff\n    delay: 200ms\n    cap: 100ms\n",
		`s.yaml:8:10: clients.retry.cap: "100ms": below the base delay 200ms (want cap >= delay)`},
	{"max-attempts 0", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: retry-after, max-attempts: 0}\n",
		`s.yaml:5:46: clients.retry.max-attempts: 0: want an integer >= 1 or unlimited`},
	{"factor 0.5", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry:\n    policy: backoff\n    delay: 100ms\n    factor: 0.5\n",
		`s.yaml:8:13: clients.retry.factor: 0.5: want a decimal >= 1 like 2 or 1.5`},
	{"factor as a string", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: backoff, delay: 1s, factor: \"1.5\"}\n",
		`s.yaml:5:47: clients.retry.factor: found string "1.5", want a decimal >= 1 like 2 or 1.5`},
	{"backoff without delay", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: backoff}\n",
		`s.yaml:5:10: clients.retry.delay: missing (want a duration > 0: the first wait, multiplied by factor after each retry)`},
	{"retry field not for the policy", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry:\n    policy: fixed\n    delay: 1s\n    jitter: full\n",
		`s.yaml:8:5: clients.retry.jitter: does not apply to policy fixed (its fields: delay, max-attempts, on, budget, token-bucket, breaker)`},
	{"retry field for policy none", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {max-attempts: 3}\n",
		`s.yaml:5:11: clients.retry.max-attempts: does not apply to policy none (it takes no other field)`},
	{"budget ratio with 4 decimals", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, budget: {max-tokens: 10, token-ratio: 0.0001}}\n",
		`s.yaml:5:68: clients.retry.budget.token-ratio: 0.0001: more than 3 decimal places (want a decimal > 0 with at most 3 decimal places, like 0.1, as gRPC reads it)`},
	{"budget ratio 0", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, budget: {max-tokens: 10, token-ratio: 0}}\n",
		`s.yaml:5:68: clients.retry.budget.token-ratio: 0: want a decimal > 0 with at most 3 decimal places, like 0.1: the tokens a success gives back`},
	{"budget max-tokens 1001", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, budget: {max-tokens: 1001, token-ratio: 0.1}}\n",
		`s.yaml:5:51: clients.retry.budget.max-tokens: 1001: want an integer from 1 to 1000: the tokens a client holds when full`},
	{"budget without a ratio", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, budget: {max-tokens: 10}}\n",
		`s.yaml:5:38: clients.retry.budget.token-ratio: missing (want a decimal > 0 with at most 3 decimal places, like 0.1: the tokens a success gives back)`},
	{"token bucket without capacity", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, token-bucket: {cost: 1}}\n",
		`s.yaml:5:44: clients.retry.token-bucket.capacity: missing (want a decimal > 0: the tokens a client holds when full)`},
	{"token bucket cost above capacity", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, token-bucket: {capacity: 2, cost: 2.5}}\n",
		`s.yaml:5:64: clients.retry.token-bucket.cost: 2.5: above the capacity (want cost <= capacity)`},
	{"token bucket refill 4 decimals", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, token-bucket: {capacity: 2, refill: 0.0001}}\n",
		`s.yaml:5:66: clients.retry.token-bucket.refill: 0.0001: more than 3 decimal places (want a decimal > 0 with at most 3 decimal places, like 0.1, as gRPC reads it)`},
	{"breaker threshold above 1", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, breaker: {window: 10, threshold: 1.5, open-for: 1s}}\n",
		`s.yaml:5:63: clients.retry.breaker.threshold: 1.5: above 1 (want a decimal from 0.001 to 1: the share of failures that opens the breaker)`},
	{"breaker without open-for", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, breaker: {window: 10, threshold: 0.5}}\n",
		`s.yaml:5:39: clients.retry.breaker.open-for: missing (want a duration > 0: how long the breaker stays open)`},
	{"breaker misspelt field", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, breaker: {window: 10, threshold: 0.5, open-for: 1s, open_for: 2s}}\n",
		`s.yaml:5:82: clients.retry.breaker.open_for: unknown field (want window, threshold or open-for); did you mean "open-for"?`},
	{"negative backend latency", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nbackend: {workers: 1, service: 10ms, latency: -1s}\n",
		`s.yaml:4:47: backend.latency: "-1s": want a duration >= 0`},
	{"jitter misspelt", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: backoff, delay: 1s, jitter: decorelated}\n",
		`s.yaml:5:47: clients.retry.jitter: "decorelated": unknown jitter (want none, full, equal or decorrelated); did you mean "decorrelated"?`},
	{"budget for policy none", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {budget: {max-tokens: 10, token-ratio: 0.1}}\n",
		`s.yaml:5:11: clients.retry.budget: does not apply to policy none (it takes no other field)`},
	{"unknown retry policy", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: exponential}\n",
		`s.yaml:5:19: clients.retry.policy: "exponential": unknown policy (want none, immediate, fixed, backoff or retry-after)`},
	{"immediate unlimited", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nclients:\n  retry: {policy: immediate, max-attempts: unlimited}\n",
		`s.yaml:5:44: clients.retry.max-attempts: "unlimited": immediate retries at one instant must stop (want an integer >= 1)`},
	{"source retry", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at: [0s]\n    retry: {policy: backoff, delay: 1s, jitter: half}\n",
		`s.yaml:6:49: traffic[0].retry.jitter: "half": unknown jitter (want none, full, equal or decorrelated)`},
	{"report windows empty", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nreport: {windows: []}\n",
		`s.yaml:4:19: report.windows: empty list (want a list of durations > 0 like [1s, 100ms])`},
	{"report duplicate window", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nreport: {windows: [1s, 1000ms]}\n",
		`s.yaml:4:24: report.windows[1]: "1000ms": duplicate window (also report.windows[0])`},
	{"report bucket 0", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nreport: {bucket: 0}\n",
		`s.yaml:4:18: report.bucket: 0: want a duration > 0`},
	{"backend service negative", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\nbackend: {service: -5ms}\n",
		`s.yaml:4:20: backend.service: "-5ms": want a duration >= 0`},
	{"alias", "name: t\nlimit: &l 10/s\ntraffic: [{type: steady, rate: *l}]\nduration: 1s\n",
		`s.yaml:3:32: traffic[0].rate: YAML aliases (*name) are not supported: write the value out`},
	{"tag", "name: !!str t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\n", `s.yaml:1:7: name: YAML tags (!!str) are not supported: remove the tag`},
	{"merge key", "name: t\nlimit: 10/s\ntraffic:\n  - <<: {type: times}\n    at: [0s]\n", `s.yaml:4:5: traffic[0]: YAML merge keys (<<) are not supported: write the fields out`},
	{"complex key", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s], ? complex : 1}]\n", `s.yaml:3:35: traffic[0]: found a complex key (?), want a field name`},
	{"non-string key", "name: t\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\n1: x\n", `s.yaml:4:1: found integer 1 as a key, want a field name`},
	// poisson, aligned, onoff and ramp sources
	{"zipf-s 1", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - type: poisson\n    rate: 10/s\n    clients: 10\n    key-dist: zipf\n    zipf-s: 1\n",
		`s.yaml:9:13: traffic[0].zipf-s: 1: a zipf exponent <= 1 (want a number > 1 like 1.1)`},
	{"zipf-s 0.9", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, key-dist: zipf, zipf-s: 0.9}\n",
		`s.yaml:5:70: traffic[0].zipf-s: 0.9: a zipf exponent <= 1 (want a number > 1 like 1.1)`},
	{"zipf-s string", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, key-dist: zipf, zipf-s: high}\n",
		`s.yaml:5:70: traffic[0].zipf-s: found string "high", want a number > 1 like 1.1`},
	{"zipf-s beyond a YAML number", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, key-dist: zipf, zipf-s: 1e400}\n",
		`s.yaml:5:70: traffic[0].zipf-s: found string "1e400", want a number > 1 like 1.1`},
	{"zipf-s without key-dist", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, zipf-s: 1.2}\n",
		`s.yaml:5:46: traffic[0].zipf-s: applies only with key-dist: zipf (the default is uniform)`},
	{"zipf-s with uniform", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, key-dist: uniform, zipf-s: 1.2}\n",
		`s.yaml:5:65: traffic[0].zipf-s: applies only with key-dist: zipf`},
	{"key-dist on a single key", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - type: poisson\n    rate: 10/s\n    key: alice\n    key-dist: zipf\n",
		`s.yaml:8:5: traffic[0].key-dist: applies only with clients (a single key has no distribution)`},
	{"zipf-s on the default key", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, zipf-s: 2}\n",
		`s.yaml:5:33: traffic[0].zipf-s: applies only with clients (a single key has no distribution)`},
	{"unknown key-dist", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, key-dist: pareto}\n",
		`s.yaml:5:56: traffic[0].key-dist: "pareto": unknown key-dist (want uniform or zipf)`},
	// zipf-s under an unknown key-dist: the key-dist's error alone
	{"unknown key-dist with zipf-s", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - {type: poisson, rate: 10/s, clients: 10, key-dist: zipfian, zipf-s: 1.2}\n",
		`s.yaml:5:56: traffic[0].key-dist: "zipfian": unknown key-dist (want uniform or zipf)`},
	{"poisson without rate", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - type: poisson\n    clients: 3\n",
		`s.yaml:5:5: traffic[0].rate: missing (want a rate like 10/s, 600/m or 5/100ms)`},
	{"poisson without duration", "name: t\nlimit: 10/s\ntraffic:\n  - type: poisson\n    rate: 10/s\n",
		`s.yaml:4:5: traffic[0]: a poisson source without end runs until the scenario's duration: set duration (or end on the source)`},
	{"negative rate", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - type: poisson\n    rate: -5/s\n",
		`s.yaml:6:11: traffic[0].rate: "-5/s": a negative rate (want 10/s, 600/m, 5/100ms)`},
	{"rate 0/s", "name: t\nlimit: 10/s\nduration: 1s\ntraffic:\n  - type: onoff\n    rate: 0/s\n    on: 1s\n    off: 1s\n",
		`s.yaml:6:11: traffic[0].rate: "0/s": the count must be at least 1 (want 10/s, 600/m, 5/100ms)`},
	{"negative limit", "name: t\nlimit: -5/s\ntraffic: [{type: times, at: [0s]}]\n",
		`s.yaml:2:8: limit: "-5/s": a negative rate (want 10/s, 600/m, 5/100ms)`},
	{"ramp with no end", "name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at: [0s]\n  - type: ramp\n    from: 0/s\n    to: 10/s\n",
		`s.yaml:6:5: traffic[1]: a ramp with no end: set end on the source or the scenario's duration (the rate reaches to at the end)`},
	{"ramp to 0/s", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - type: ramp\n    from: 10/s\n    to: 0/s\n",
		`s.yaml:7:9: traffic[0].to: "0/s": the count must be at least 1 (want 10/s, 600/m, 5/100ms; only from may be 0/s)`},
	{"ramp from negative", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: ramp, from: -1/s, to: 10/s}\n",
		`s.yaml:5:24: traffic[0].from: "-1/s": a negative rate (want 10/s, 600/m, 5/100ms)`},
	{"ramp without from", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: ramp, to: 10/s}\n",
		`s.yaml:5:5: traffic[0].from: missing (want a rate like 0/s or 10/s: the rate at start)`},
	{"ramp without to", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: ramp, from: 0/s}\n",
		`s.yaml:5:5: traffic[0].to: missing (want a rate like 10/s: the rate at end)`},
	{"ramp with rate", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: ramp, from: 0/s, to: 10/s, rate: 5/s}\n",
		`s.yaml:5:39: traffic[0].rate: unknown field (a ramp source takes from, to and type, key, clients, key-prefix, cost, start, end, retry, attributes)`},
	{"onoff with off 0", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - type: onoff\n    rate: 10/s\n    on: 500ms\n    off: 0s\n",
		`s.yaml:8:10: traffic[0].off: "0s": want a duration > 0`},
	{"onoff without on", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: onoff, rate: 10/s, off: 1s}\n",
		`s.yaml:5:5: traffic[0].on: missing (want a duration > 0: how long the source sends, each time)`},
	{"onoff without off", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: onoff, rate: 10/s, on: 1s}\n",
		`s.yaml:5:5: traffic[0].off: missing (want a duration > 0: how long the source is silent, each time)`},
	{"onoff negative on", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: onoff, rate: 10/s, on: -1s, off: 1s}\n",
		`s.yaml:5:35: traffic[0].on: "-1s": want a duration > 0`},
	{"onoff unknown field", "name: t\nlimit: 10/s\nduration: 2s\ntraffic:\n  - {type: onoff, rate: 10/s, on: 1s, off: 1s, every: 2s}\n",
		`s.yaml:5:48: traffic[0].every: unknown field (an onoff source takes rate, on, off and type, key, clients, key-prefix, cost, start, end, retry, attributes)`},
	{"aligned over = every", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - type: aligned\n    every: 500ms\n    count: 5\n    over: 500ms\n",
		`s.yaml:8:11: traffic[0].over: "500ms": want over < every 500ms, so that occurrences do not overlap`},
	{"aligned over > default every", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, count: 5, over: 2s}\n",
		`s.yaml:5:37: traffic[0].over: "2s": want over < every 1s (the policy's per), so that occurrences do not overlap`},
	{"aligned offset = -every", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - type: aligned\n    every: 1s\n    offset: -1s\n",
		`s.yaml:7:13: traffic[0].offset: "-1s": want |offset| < every 1s`},
	{"aligned offset > default every", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, offset: 1500ms}\n",
		`s.yaml:5:29: traffic[0].offset: "1500ms": want |offset| < every 1s (the policy's per)`},
	{"aligned negative every", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, every: -1s}\n",
		`s.yaml:5:28: traffic[0].every: "-1s": want a duration > 0`},
	{"aligned negative over", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, count: 2, over: -100ms}\n",
		`s.yaml:5:37: traffic[0].over: "-100ms": want a duration >= 0`},
	{"aligned bad offset", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, offset: -x}\n",
		`s.yaml:5:29: traffic[0].offset: "-x": want a duration like 900ms, 1.5s or 1m30s`},
	{"aligned count 0", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, count: 0}\n",
		`s.yaml:5:28: traffic[0].count: 0: want an integer >= 1`},
	{"aligned unknown field", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - type: aligned\n    count: 2\n    spread: 100ms\n",
		`s.yaml:7:5: traffic[0].spread: unknown field (an aligned source takes every, offset, count, over and type, key, clients, key-prefix, cost, start, end, retry, attributes)`},
	{"poisson unknown field", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: poisson, rate: 10/s, keydist: zipf}\n",
		`s.yaml:5:33: traffic[0].keydist: unknown field (a poisson source takes rate, key-dist, zipf-s and type, key, clients, key-prefix, cost, start, end, retry, attributes); did you mean "key-dist"?`},
	{"ramp unknown field", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: ramp, from: 0/s, to: 10/s, over: 1s}\n",
		`s.yaml:5:39: traffic[0].over: unknown field (a ramp source takes from, to and type, key, clients, key-prefix, cost, start, end, retry, attributes)`},
	{"negative start on aligned", "name: t\nlimit: 10/s\nduration: 3s\ntraffic:\n  - {type: aligned, start: -1s}\n",
		`s.yaml:5:28: traffic[0].start: "-1s": want a duration >= 0`},
	{"aligned without duration", "name: t\nlimit: 10/s\ntraffic:\n  - {type: aligned, count: 3}\n",
		`s.yaml:4:5: traffic[0]: an aligned source without end runs until the scenario's duration: set duration (or end on the source)`},
}

func TestParseInvalid(t *testing.T) {
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.Nil(t, sc)
			require.EqualError(t, err, tc.want)
			var list Errors
			require.True(t, errors.As(err, &list))
			var one *Error
			require.True(t, errors.As(err, &one))
		})
	}
}

func TestParseCollectsErrors(t *testing.T) {
	src := `name: t
limit: {rate: 10, burst: 0}
duration: 3
algorithms:
  - name: fixed-window
    nodelay: true
traffic:
  - type: replay
  - type: burst
    at: {t: 1s}
    count: ten
clients:
  retry: {policy: backoff, delay: 200ms, cap: 100ms, factor: 0.5, max-attempts: 0}
`
	_, err := Parse("s.yaml", []byte(src))
	require.EqualError(t, err, strings.Join([]string{
		`s.yaml:2:26: limit.burst: 0: want an integer >= 1`,
		`s.yaml:3:11: duration: 3: no unit (add one: ns, us, ms, s, m or h, e.g. 3s)`,
		`s.yaml:6:5: algorithms[0].nodelay: fixed-window takes no option "nodelay" (its options: count-rejected)`,
		`s.yaml:8:5: traffic[0].path: missing (want the trace file: an access log, CSV, TSV or JSON lines, maybe gzipped)`,
		`s.yaml:10:9: traffic[1].at: found a mapping, want a duration like 900ms`,
		`s.yaml:11:12: traffic[1].count: found string "ten", want an integer >= 1`,
		`s.yaml:13:47: clients.retry.cap: "100ms": below the base delay 200ms (want cap >= delay)`,
		`s.yaml:13:62: clients.retry.factor: 0.5: want a decimal >= 1 like 2 or 1.5`,
		`s.yaml:13:81: clients.retry.max-attempts: 0: want an integer >= 1 or unlimited`,
	}, "\n"))
}

func TestParseTooManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: t\nlimit: 10/s\ntraffic:\n  - type: times\n    at:\n")
	for range 25 {
		b.WriteString("      - -1s\n")
	}
	_, err := Parse("s.yaml", []byte(b.String()))
	var list Errors
	require.True(t, errors.As(err, &list))
	require.Len(t, list, maxErrors+1)
	require.Equal(t, `s.yaml:6:9: traffic[0].at[0]: "-1s": want a duration >= 0`, list[0].Error())
	require.Equal(t, `s.yaml:26:9: too many errors (5 more not shown)`, list[maxErrors].Error())
}

func TestErrorFormat(t *testing.T) {
	require.Equal(t, "a.yaml:3:5: limit.rate: bad", (&Error{File: "a.yaml", Line: 3, Col: 5, Path: "limit.rate", Msg: "bad"}).Error())
	require.Equal(t, "a.yaml:1:1: bad", (&Error{File: "a.yaml", Line: 1, Col: 1, Msg: "bad"}).Error())
	require.Equal(t, "a.yaml: bad", (&Error{File: "a.yaml", Msg: "bad"}).Error())
}

// base is the head of the valid snippets: name and limit.
const base = "name: t\nlimit: 10/s\n"

func TestParseValid(t *testing.T) {
	var all []string // the default set: All, without none, and without concurrency (no service time)
	for _, info := range algorithms.All() {
		if !info.InFlight {
			all = append(all, info.Name)
		}
	}
	for _, tc := range []struct {
		name, src string
		check     func(t *testing.T, sc *Scenario)
	}{
		{"defaults", base + "traffic: [{type: times, at: [1200ms, 0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, "t", sc.Name)
			require.Equal(t, "s.yaml", sc.File)
			require.Equal(t, uint64(1), sc.Seed)
			require.Equal(t, uint64(1), sc.Traffic.Seed)
			// the last instant is 1.2s: ends at 1.2s+1ns, rounded up to 2s
			require.Equal(t, 2*time.Second, sc.Duration)
			require.Equal(t, algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, sc.Limit)
			require.Len(t, sc.Algorithms, len(all))
			for i, a := range sc.Algorithms {
				require.Equal(t, all[i], a.Name)
				require.Equal(t, all[i], a.Label)
				require.Equal(t, algorithms.Params{Policy: sc.Limit}, a.Params)
				require.NotNil(t, a.Set)
				require.Empty(t, a.Set)
			}
			require.Equal(t, []traffic.Source{&traffic.Times{
				Common: traffic.Common{Clients: traffic.Clients{Key: "global"}, Cost: 1, End: 2 * time.Second},
				At:     []time.Duration{1200 * time.Millisecond, 0},
			}}, sc.Traffic.Sources)
			require.Equal(t, traffic.RetryPolicy{Policy: "none"}, sc.Retry)
			require.Equal(t, time.Duration(0), sc.Service)
			require.Equal(t, []time.Duration{time.Second, 100 * time.Millisecond}, sc.Windows)
			require.Equal(t, 100*time.Millisecond, sc.Bucket)
		}},
		{"burst duration rounded up to per", "name: t\nlimit: 5/2s\ntraffic: [{type: burst, at: 900ms, count: 10, over: 100ms}]\n", func(t *testing.T, sc *Scenario) {
			// last request at 990ms: 990ms+1ns rounds up to 2s
			require.Equal(t, 2*time.Second, sc.Duration)
			require.Equal(t, []time.Duration{2 * time.Second, 200 * time.Millisecond}, sc.Windows)
			require.Equal(t, &traffic.Burst{
				Common: traffic.Common{Clients: traffic.Clients{Key: "global"}, Cost: 1, End: 2 * time.Second},
				At:     900 * time.Millisecond, Count: 10, Over: 100 * time.Millisecond,
			}, sc.Traffic.Sources[0])
		}},
		{"limit mapping", "name: t\nlimit: {rate: 3, per: 100ms}\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, algorithms.Policy{Rate: 3, Per: 100 * time.Millisecond, Burst: 3}, sc.Limit)
			require.Equal(t, 100*time.Millisecond, sc.Duration)
			require.Equal(t, []time.Duration{100 * time.Millisecond, 10 * time.Millisecond}, sc.Windows)
		}},
		{"limit short forms", "name: t\nlimit: 5/100ms\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, algorithms.Policy{Rate: 5, Per: 100 * time.Millisecond, Burst: 5}, sc.Limit)
		}},
		{"tiny per", "name: t\nlimit: {rate: 1, per: 5ns, burst: 2}\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, []time.Duration{5, 1}, sc.Windows) // W/10 rounds down to 0: 1ns
			require.Equal(t, time.Duration(1), sc.Bucket)
		}},
		{"one ns per", "name: t\nlimit: {rate: 1, per: 1ns}\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, []time.Duration{1}, sc.Windows)
			require.Equal(t, time.Duration(1), sc.Duration)
		}},
		{"steady start end", base + "seed: 42\nduration: 10s\ntraffic:\n  - {type: steady, rate: 600/m, key: bob, cost: 2, start: 1s, end: 4s}\n  - {type: steady, rate: 5/100ms, clients: 3, end: 1h}\n  - {type: steady, rate: 1/s, clients: 2, key-prefix: user}\n",
			func(t *testing.T, sc *Scenario) {
				require.Equal(t, uint64(42), sc.Seed)
				require.Equal(t, uint64(42), sc.Traffic.Seed)
				require.Equal(t, 10*time.Second, sc.Duration)
				require.Equal(t, []traffic.Source{
					&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{Key: "bob"}, Cost: 2, Start: time.Second, End: 4 * time.Second},
						Rate: traffic.Rate{Count: 600, Per: time.Minute}},
					// an end beyond the duration is cut to it
					&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 3, Prefix: "client"}, Cost: 1, End: 10 * time.Second},
						Rate: traffic.Rate{Count: 5, Per: 100 * time.Millisecond}},
					&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 2, Prefix: "user"}, Cost: 1, End: 10 * time.Second},
						Rate: traffic.Rate{Count: 1, Per: time.Second}},
				}, sc.Traffic.Sources)
			}},
		{"steady with an end needs no duration", base + "traffic: [{type: steady, rate: 3/s, end: 2500ms}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, 3*time.Second, sc.Duration)
			require.Equal(t, 2500*time.Millisecond, sc.Traffic.Sources[0].(*traffic.Steady).End())
		}},
		{"times end cut to duration", base + "duration: 1s\ntraffic: [{type: times, at: [0s, 5s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, time.Second, sc.Duration)
			require.Equal(t, time.Second, sc.Traffic.Sources[0].(*traffic.Times).Common.End)
		}},
		{"seed 0", base + "seed: 0\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, uint64(0), sc.Seed)
		}},
		{"largest seed", base + "seed: 18446744073709551615\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, uint64(1<<64-1), sc.Seed)
		}},
		{"algorithm entries", "name: t\nlimit: {rate: 10, per: 1s, burst: 10}\nbackend: {service: 20ms}\ntraffic: [{type: times, at: [0s]}]\nalgorithms:\n" +
			"  - fixed-window\n" +
			"  - {name: sliding-log, count-rejected: true}\n" +
			"  - {name: token-bucket, label: tb20, burst: 20, max-delay: 1.5s}\n" +
			"  - {name: token-bucket, label: tb-fast, rate: 20, per: 2s}\n" +
			"  - {name: nginx, burst: 5, nodelay: false, delay: 2}\n" +
			"  - {name: concurrency, max: 4}\n",
			func(t *testing.T, sc *Scenario) {
				policy := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
				svc := 20 * time.Millisecond
				require.Equal(t, svc, sc.Service)
				require.Nil(t, sc.Skipped)
				require.Equal(t, []Algorithm{
					{Name: "fixed-window", Label: "fixed-window", Params: algorithms.Params{Policy: policy, Service: svc}, Set: map[string]any{}},
					{Name: "sliding-log", Label: "sliding-log", Params: algorithms.Params{Policy: policy, Service: svc, CountRejected: true},
						Set: map[string]any{"count-rejected": true}},
					{Name: "token-bucket", Label: "tb20", Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 20}, Service: svc, MaxDelay: 1500 * time.Millisecond},
						Set: map[string]any{"burst": int64(20), "max-delay": "1.5s"}},
					// the limit sets burst: an entry's rate leaves it alone
					{Name: "token-bucket", Label: "tb-fast", Params: algorithms.Params{Policy: algorithms.Policy{Rate: 20, Per: 2 * time.Second, Burst: 10}, Service: svc},
						Set: map[string]any{"rate": int64(20), "per": "2s"}},
					// nginx's burst is its own option; the policy is the scenario's
					{Name: "nginx", Label: "nginx", Params: algorithms.Params{Policy: policy, Service: svc, NginxBurst: 5, NginxBurstSet: true, NginxDelay: 2},
						Set: map[string]any{"burst": int64(5), "nodelay": false, "delay": int64(2)}},
					{Name: "concurrency", Label: "concurrency", Params: algorithms.Params{Policy: policy, Service: svc, Max: 4},
						Set: map[string]any{"max": int64(4)}},
				}, sc.Algorithms)
			}},
		{"entry rate carries the default burst", base + "traffic: [{type: times, at: [0s]}]\nalgorithms: [{name: gcra, rate: 20}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, algorithms.Policy{Rate: 20, Per: time.Second, Burst: 20}, sc.Algorithms[0].Params.Policy)
		}},
		{"retry policies", base + "clients:\n  retry: {policy: backoff, delay: 100ms, factor: 1.5, cap: 2s, jitter: full}\ntraffic:\n" +
			"  - {type: times, at: [0s]}\n" +
			"  - {type: times, at: [0s], retry: {policy: retry-after}}\n" +
			"  - {type: times, at: [0s], retry: {policy: retry-after, resolution: 0, max-attempts: unlimited}}\n" +
			"  - {type: times, at: [0s], retry: {policy: backoff, delay: 1s}}\n" +
			"  - {type: times, at: [0s], retry: {policy: immediate, max-attempts: 2}}\n" +
			"  - {type: times, at: [0s], retry: {policy: fixed, delay: 250ms}}\n" +
			"  - {type: times, at: [0s], retry: {policy: none}}\n",
			func(t *testing.T, sc *Scenario) {
				require.Equal(t, traffic.RetryPolicy{Policy: "backoff", Delay: 100 * time.Millisecond, Factor: traffic.Fraction{Num: 3, Den: 2},
					Cap: 2 * time.Second, Jitter: "full", MaxAttempts: 3}, sc.Retry)
				retry := func(i int) *traffic.RetryPolicy { return sc.Traffic.Sources[i].(*traffic.Times).Retry }
				require.Nil(t, retry(0))
				require.Equal(t, &traffic.RetryPolicy{Policy: "retry-after", Resolution: time.Second, MaxAttempts: 3}, retry(1))
				require.Equal(t, &traffic.RetryPolicy{Policy: "retry-after", Resolution: 0, MaxAttempts: 0}, retry(2))
				require.Equal(t, &traffic.RetryPolicy{Policy: "backoff", Delay: time.Second, Factor: traffic.Fraction{Num: 2, Den: 1}, Jitter: "none", MaxAttempts: 3}, retry(3))
				require.Equal(t, &traffic.RetryPolicy{Policy: "immediate", MaxAttempts: 2}, retry(4))
				require.Equal(t, &traffic.RetryPolicy{Policy: "fixed", Delay: 250 * time.Millisecond, MaxAttempts: 3}, retry(5))
				require.Equal(t, &traffic.RetryPolicy{Policy: "none"}, retry(6))
			}},
		{"report", base + "traffic: [{type: times, at: [0s]}]\nreport:\n  windows: [10s, 1s, 1ms]\n  bucket: 250ms\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, []time.Duration{10 * time.Second, time.Second, time.Millisecond}, sc.Windows)
			require.Equal(t, 250*time.Millisecond, sc.Bucket)
		}},
		{"description block", "# leading comment\nname: t\ndescription: |\n  Two lines\n  of text.\nlimit: 10/s\ntraffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, "Two lines\nof text.", sc.Description)
		}},
		{"flow style and anchors", "{name: t, limit: &l 10/s, duration: 2s, traffic: [{type: steady, rate: 5/s}]}\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, 2*time.Second, sc.Duration)
			require.Equal(t, algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, sc.Limit)
		}},
		{"quoted strings", "name: \"t\"\nlimit: '10/s'\ntraffic: [{type: times, key: '42', at: ['0s']}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, "42", sc.Traffic.Sources[0].(*traffic.Times).Clients.Key)
		}},
		{"byte order mark", "\ufeff" + base + "traffic: [{type: times, at: [0s]}]\n", func(t *testing.T, sc *Scenario) {
			require.Equal(t, "t", sc.Name)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			checkInvariants(t, sc)
			tc.check(t, sc)
		})
	}
}

// checkInvariants checks what every accepted scenario satisfies.
func checkInvariants(t testing.TB, sc *Scenario) {
	t.Helper()
	require.NotEmpty(t, sc.Name)
	replays := 0
	for _, s := range sc.Traffic.Sources {
		if _, ok := s.(*traffic.Replay); ok {
			replays++
		}
	}
	if replays == len(sc.Traffic.Sources) {
		// replay sources only: a duration as written, or 0 (until the
		// traces end)
		require.GreaterOrEqual(t, sc.Duration, time.Duration(0))
	} else {
		require.Greater(t, sc.Duration, time.Duration(0))
	}
	require.Len(t, sc.replays, replays)
	require.NotEmpty(t, sc.Algorithms)
	require.NotEmpty(t, sc.Traffic.Sources)
	require.Len(t, sc.Retries, len(sc.Traffic.Sources))
	require.Equal(t, sc.Seed, sc.Traffic.Seed)
	require.NotEmpty(t, sc.Windows)
	for _, w := range sc.Windows {
		require.Greater(t, w, time.Duration(0))
	}
	require.Greater(t, sc.Bucket, time.Duration(0))
	require.GreaterOrEqual(t, sc.Limit.Rate, int64(1))
	require.Greater(t, sc.Limit.Per, time.Duration(0))
	require.GreaterOrEqual(t, sc.Limit.Burst, int64(1))
	checkCluster(t, sc)
	checkBackend(t, sc)
	labels := map[string]bool{}
	for _, a := range sc.Algorithms {
		require.False(t, labels[a.Label], "duplicate label %s", a.Label)
		labels[a.Label] = true
		require.NotNil(t, a.Set)
	}
	for _, s := range sc.Traffic.Sources {
		var c traffic.Common
		switch s := s.(type) {
		case *traffic.Times:
			c = s.Common
			require.NotEmpty(t, s.At)
		case *traffic.Burst:
			c = s.Common
			require.GreaterOrEqual(t, s.Count, int64(1))
		case *traffic.Steady:
			c = s.Common
			requireRate(t, s.Rate, 1)
		case *traffic.Poisson:
			c = s.Common
			requireRate(t, s.Rate, 1)
			switch {
			case c.Clients.N == 0:
				require.Equal(t, traffic.KeyDist(""), s.KeyDist)
			case s.KeyDist == traffic.KeyZipf:
				require.Greater(t, s.ZipfS, 1.0)
			default:
				require.Equal(t, traffic.KeyUniform, s.KeyDist)
				require.Zero(t, s.ZipfS)
			}
		case *traffic.Aligned:
			c = s.Common
			require.Greater(t, s.Every, time.Duration(0))
			require.Less(t, s.Offset, s.Every)
			require.Greater(t, s.Offset, -s.Every)
			require.GreaterOrEqual(t, s.Count, int64(1))
			require.GreaterOrEqual(t, s.Over, time.Duration(0))
			require.Less(t, s.Over, s.Every)
		case *traffic.OnOff:
			c = s.Common
			requireRate(t, s.Rate, 1)
			require.Greater(t, s.On, time.Duration(0))
			require.Greater(t, s.Off, time.Duration(0))
		case *traffic.Ramp:
			c = s.Common
			requireRate(t, s.From, 0)
			requireRate(t, s.To, 1)
			require.GreaterOrEqual(t, s.Until, c.End)
		case *traffic.Replay:
			// keys, start and end come from the trace: nothing in Common
			// but the cost and the retry
			require.NoError(t, s.Validate())
			require.GreaterOrEqual(t, s.Cost, int64(1))
			require.Zero(t, s.Start)
			require.Zero(t, s.End())
			require.Zero(t, s.Common.End)
			require.Equal(t, traffic.Clients{}, s.Clients)
			continue
		default:
			t.Fatalf("unexpected source %T", s)
		}
		require.GreaterOrEqual(t, c.Cost, int64(1))
		require.Less(t, c.Start, c.End)
		require.LessOrEqual(t, c.End, sc.Duration)
		require.Greater(t, s.End(), time.Duration(0))
		require.True(t, c.Clients.N > 0 && c.Clients.Prefix != "" || c.Clients.N == 0 && c.Clients.Key != "")
	}
}

func requireRate(t testing.TB, r traffic.Rate, minCount int64) {
	t.Helper()
	require.GreaterOrEqual(t, r.Count, minCount)
	require.Greater(t, r.Per, time.Duration(0))
}

// fakeNew stands in for algorithms.New: nginx takes only per 1s or 1m, as
// docs/algorithms.md says, and "broken" fails without a ParamError.
func fakeNew(name string, p algorithms.Params) (algorithms.Limiter, error) {
	switch {
	case p.Burst > 1000:
		return nil, &algorithms.ParamError{Field: "burst", Found: fmt.Sprint(p.Burst), Want: "want a burst of at most 1000"}
	case name == "nginx" && p.Per != time.Second && p.Per != time.Minute:
		return nil, &algorithms.ParamError{Field: "per", Found: p.Per.String(), Want: "want 1s or 1m (nginx's r/s or r/m)"}
	case name == "nginx" && p.NginxBurst > 100:
		return nil, &algorithms.ParamError{Field: "burst", Found: fmt.Sprint(p.NginxBurst), Want: "want at most 100"}
	case name == "concurrency" && p.Service > time.Hour:
		return nil, &algorithms.ParamError{Field: "service", Found: p.Service.String(), Want: "want at most 1h"}
	case name == "x-time-rate" && p.MaxDelay == time.Minute:
		return nil, errors.New("boom")
	}
	return nil, nil
}

// With the real algorithms: nginx takes only per 1s or 1m.
func TestDefaultAlgorithmsSkipNginx(t *testing.T) {
	sc, err := Parse("s.yaml", []byte("name: t\nlimit: 5/100ms\ntraffic: [{type: times, at: [0s]}]\n"))
	require.NoError(t, err)
	require.Len(t, sc.Skipped, 2)
	require.Equal(t, "nginx", sc.Skipped[0].Name)
	require.Equal(t, "concurrency", sc.Skipped[1].Name, "no service time")
	for _, a := range sc.Algorithms {
		require.NotEqual(t, "nginx", a.Name)
	}
	_, err = Parse("s.yaml", []byte("name: t\nlimit: 5/100ms\nalgorithms: [nginx]\ntraffic: [{type: times, at: [0s]}]\n"))
	require.ErrorContains(t, err, "s.yaml:2:8: limit: 100ms: ")
}

func TestAlgorithmParamErrors(t *testing.T) {
	newLimiter = fakeNew
	defer func() { newLimiter = algorithms.New }()

	t.Run("default list leaves out what cannot enforce the policy", func(t *testing.T) {
		sc, err := Parse("s.yaml", []byte("name: t\nlimit: 5/100ms\ntraffic: [{type: times, at: [0s]}]\n"))
		require.NoError(t, err)
		require.Len(t, sc.Algorithms, len(algorithms.All())-2)
		require.Len(t, sc.Skipped, 2)
		require.Equal(t, Skipped{Name: "nginx", Reason: "per: 100ms: want 1s or 1m (nginx's r/s or r/m)"}, sc.Skipped[0])
		require.Equal(t, "concurrency", sc.Skipped[1].Name, "no service time")
	})
	for _, tc := range []struct{ name, src, want string }{
		{"policy per from the short form", "name: t\nlimit: 5/100ms\nalgorithms: [gcra, nginx]\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:2:8: limit: 100ms: want 1s or 1m (nginx's r/s or r/m) (for algorithm nginx)`},
		{"policy per from the mapping", "name: t\nlimit:\n  rate: 5\n  per: 100ms\nalgorithms: [{name: nginx, label: n}]\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:4:8: limit.per: 100ms: want 1s or 1m (nginx's r/s or r/m) (for algorithm n)`},
		{"per in the entry", "name: t\nlimit: 10/s\nalgorithms:\n  - name: nginx\n    per: 2s\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:5:10: algorithms[0].per: 2s: want 1s or 1m (nginx's r/s or r/m)`},
		{"nginx burst in the entry", "name: t\nlimit: 10/s\nalgorithms:\n  - name: nginx\n    burst: 500\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:5:12: algorithms[0].burst: 500: want at most 100`},
		{"policy burst", "name: t\nlimit: {rate: 10, burst: 2000}\nalgorithms: [{name: token-bucket, rate: 5}]\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:2:26: limit.burst: 2000: want a burst of at most 1000 (for algorithm token-bucket)`},
		{"every default algorithm fails", "name: t\nlimit: {rate: 10, burst: 2000}\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:2:26: limit.burst: 2000: want a burst of at most 1000`},
		{"backend service, default list", "name: t\nlimit: 10/s\nbackend:\n  service: 2h\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:4:12: backend.service: 2h0m0s: want at most 1h (for algorithm concurrency)`},
		{"backend service", "name: t\nlimit: 10/s\nbackend:\n  service: 2h\nalgorithms: [concurrency]\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:4:12: backend.service: 2h0m0s: want at most 1h (for algorithm concurrency)`},
		{"not a ParamError", "name: t\nlimit: 10/s\nalgorithms:\n  - name: x-time-rate\n    max-delay: 1m\ntraffic: [{type: times, at: [0s]}]\n",
			`s.yaml:4:5: algorithms[0]: boom (for algorithm x-time-rate)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.src))
			require.EqualError(t, err, tc.want)
		})
	}
}

// A retry budget is read exactly: token-ratio 0.125 is 125 thousandths,
// 2 is 2000; a source's policy has its own.
func TestParseRetryBudget(t *testing.T) {
	sc, err := Parse("s.yaml", []byte("name: t\nlimit: 10/s\ntraffic:\n  - {type: times, at: [0s]}\n  - type: times\n    at: [0s]\n    retry: {policy: immediate, budget: {max-tokens: 1000, token-ratio: 2}}\nclients:\n  retry: {policy: fixed, delay: 1s, budget: {max-tokens: 10, token-ratio: 0.125}}\n"))
	require.NoError(t, err)
	require.Equal(t, traffic.RetryBudget{MaxTokens: 10, RatioMilli: 125}, sc.Retries[0].Budget)
	require.Equal(t, traffic.RetryBudget{MaxTokens: 1000, RatioMilli: 2000}, sc.Retries[1].Budget)
}

func TestParseNginxZone(t *testing.T) {
	sc, err := Parse("s.yaml", []byte("name: t\nlimit: 10/s\nalgorithms:\n  - nginx\n  - {name: nginx, label: z, zone: 10m}\n  - {name: nginx, label: b, zone: 65536}\n  - {name: nginx, label: k, zone: 64K}\ntraffic: [{type: times, at: [0s]}]\n"))
	require.NoError(t, err)
	require.Zero(t, sc.Algorithms[0].Params.NginxZone) // unbounded, as before
	require.NotContains(t, sc.Algorithms[0].Set, "zone")
	require.Equal(t, int64(10<<20), sc.Algorithms[1].Params.NginxZone)
	require.Equal(t, "10m", sc.Algorithms[1].Set["zone"])
	require.Equal(t, int64(65536), sc.Algorithms[2].Params.NginxZone)
	require.Equal(t, int64(64<<10), sc.Algorithms[3].Params.NginxZone)
}

// TestDefaultAlgorithmsLeaveOutConcurrency: with backend.service
// 0 and no workers, nothing is ever in flight and the concurrency limiter
// could refuse nothing: the default list leaves it out, saying why, and
// keeps it ready (Kept, At) for a command that names it; listed, it stays;
// with a service time it is in the default list.
func TestDefaultAlgorithmsLeaveOutConcurrency(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(base+"traffic: [{type: times, at: [0s]}]\n"))
	require.NoError(t, err)
	require.Len(t, sc.Skipped, 1)
	sk := sc.Skipped[0]
	require.Equal(t, "concurrency", sk.Name)
	require.Equal(t, "backend.service is 0, so no request is ever in flight and it could refuse none; name it in algorithms to keep it", sk.Reason)
	require.NotNil(t, sk.Kept)
	require.Equal(t, "concurrency", sk.Kept.Label)
	require.Equal(t, "nginx", sc.Algorithms[sk.At-1].Name, "its place: after nginx")
	require.Equal(t, "x-time-rate", sc.Algorithms[sk.At].Name, "before x-time-rate")

	sc, err = Parse("s.yaml", []byte(base+"algorithms: [gcra, concurrency]\ntraffic: [{type: times, at: [0s]}]\n"))
	require.NoError(t, err)
	require.Nil(t, sc.Skipped)
	require.Equal(t, "concurrency", sc.Algorithms[1].Name, "listed, it stays")

	sc, err = Parse("s.yaml", []byte(base+"backend: {service: 20ms}\ntraffic: [{type: times, at: [0s]}]\n"))
	require.NoError(t, err)
	require.Nil(t, sc.Skipped)
	require.Len(t, sc.Algorithms, len(algorithms.All()))
}
