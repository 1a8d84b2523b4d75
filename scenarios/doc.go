// Package scenarios reads scenario files: YAML in, a validated Scenario out,
// with every error naming file:line:column, the field path, what was found
// and what is expected, as in
//
//	api.yaml:12:11: traffic[1].rate: "10/x": unknown unit "x" (want 10/s, 600/m, 5/100ms)
//
// Parse collects every problem it finds (up to 20, in order of position)
// rather than stopping at the first. The built-in scenarios (Builtins) are
// the YAML files under builtin/, embedded in the binary.
//
// # The format
//
// A scenario file is one YAML mapping (docs/scenario-file.md). Parsing is strict:
// unknown fields, duplicate keys, values of the wrong type (a string where a
// number is expected, a list where a mapping is), bad units and values out
// of range are all errors. YAML aliases, merge keys (<<) and tags are not
// supported. Fields:
//
//   - name: required string. description: string (shown by `ratesim
//     scenarios`).
//   - seed: integer >= 0, default 1.
//   - duration: a duration > 0. Required unless every source ends by itself
//     (times and burst sources do; steady, poisson, aligned, onoff and ramp
//     sources only when they have an end). When absent it is the latest end
//     of the traffic rounded up to a whole multiple of the policy's per W.
//     A scenario of replay sources takes none: its Duration is 0, meaning
//     until the traces end (a slice is cut with the source's start and
//     end). A replay cannot be mixed with synthetic sources: a trace keeps
//     its recorded times while synthetic traffic starts at 0.
//   - limit: required; the short form "10/s" (also 600/m, 5/100ms, 3600/h,
//     10/2s: the rate, then per; burst = rate), or a mapping {rate: integer
//     >= 1, per: duration > 0 (default 1s) or 1mo or 1y (a calendar month or
//     year in UTC, fixed-window only; Per is then 30 or 365 days), burst:
//     integer >= 1 (default the rate)}.
//   - algorithms: default every algorithm with the scenario's policy,
//     labelled by name, leaving out (and listing in Scenario.Skipped) any
//     that cannot enforce a policy the others take, e.g. nginx for a per
//     other than 1s or 1m. Otherwise a non-empty list whose items are a name or a mapping
//     {name (required), label, rate, per, burst, and the algorithm's
//     options: count-rejected (fixed-window, sliding-window, sliding-log),
//     max-delay (token-bucket, gcra, x-time-rate), fill-interval and
//     tokens-per-fill (token-bucket, both or neither; rate and per then
//     default to tokens-per-fill per fill-interval, or must be that rate),
//     idle-reset (x-time-rate, whole seconds), nodelay, delay (nginx), max
//     (concurrency)}. rate, per and burst override the policy for that
//     entry; an entry that overrides rate but not burst, under a limit that
//     does not set burst, gets burst = its rate. For nginx, burst is nginx's
//     own burst=N (integer >= 0; nginx admits N+1 at once; default B-1) and
//     leaves the policy alone; delay is nginx's delay=N (integer >= 0).
//     An option the algorithm does not take is an error, and so is a label
//     used twice (the label defaults to the name). Each entry is checked by
//     building the algorithm.
//   - traffic: required, a non-empty list of sources, each a mapping with a
//     type: times, burst, steady, poisson, aligned, onoff, ramp or replay. A
//     field the type does not take is an error. Fields of every source
//     (replay: see below): key (string) or clients (integer 1..10000000, keys
//     <key-prefix>-0 .. -(N-1), key-prefix default "client"); neither means
//     the single key "global"; both is an error. cost (integer >= 1,
//     default 1), start (duration >= 0, default 0; must be before the
//     scenario's end), end (duration > start, default the scenario's
//     duration; an end beyond the duration is cut to it), retry (a retry
//     mapping that replaces clients.retry, as a whole, for this source).
//   - times: at, a non-empty list of instants (durations >= 0) in any order.
//   - burst: at (duration >= 0, required), count (integer >= 1, required),
//     over (duration >= 0, default 0); each client sends request i at
//     at + floor(i*over/count).
//   - steady: rate (required): "10/s", "600/m", "5/100ms", "3600/h", "10/2s".
//     Request i at start + floor(i*W/L) for the rate L/W; with clients,
//     request i goes to client i mod N.
//   - poisson: rate (required), the source's total rate L/W. Inter-arrival
//     times are exponential: each gap is a whole number of ns, round(x*W/L)
//     for x drawn from the exponential distribution of mean 1, and the gaps
//     are summed in integers from start (the first request is one gap after
//     start), so the mean rate is L/W to within the rounding and never
//     drifts. With clients, key-dist picks each request's client: uniform
//     (default), or zipf with exponent zipf-s (a number > 1, default 1.1),
//     client k (0 the heaviest) with probability proportional to
//     1/(k+1)^zipf-s, drawn by rejection-inversion with no table of the
//     clients however many there are. key-dist and zipf-s need clients; zipf-s needs key-dist:
//     zipf. Draws are seeded (below); the instants do not depend on the
//     keys: gaps and clients come from two generators.
//   - aligned: boundary-aligned clients (cron jobs, retry at reset). every
//     (duration > 0, default the policy's per W), offset (a duration that
//     may be negative, as -100ms; |offset| < every; default 0), count
//     (integer >= 1, default 1), over (duration >= 0, < every so that
//     occurrences do not overlap; default 0). The occurrences are the
//     instants k*every + offset, k = 0, 1, 2, ..., in [start, end): with a
//     negative offset the first is every + offset (k = 1), just before a
//     boundary. At each, every client sends count requests, request i at
//     the occurrence + floor(i*over/count), in order of time, then client,
//     then i. An occurrence before start sends nothing (not even the part of
//     its spread after start); requests at or after end are cut.
//   - onoff: rate (required), on and off (required, durations > 0): the
//     rate during on, silence during off, repeating from start. Phase p is
//     [start + p*(on+off), start + p*(on+off) + on); its request j (j from 0
//     in each phase) is at the phase's start + floor(j*W/L), while inside on
//     and before end. With clients, request i of the whole source (counted
//     across phases) goes to client i mod N.
//   - ramp: from and to (required), rates like "10/s"; from may be 0 ("0/s")
//     and to is at least 1 request; from > to is a falling ramp. The rate
//     goes linearly from from at start to to at end: with t the time since
//     start and T = end - start, the requests due by t are Λ(t) = r0*t +
//     (r1-r0)*t²/(2T), and request i (i = 0, 1, ...) is at start + the
//     smallest whole ns t with Λ(t) >= i (request 0 at start), computed
//     exactly (rates as integer fractions, no float in the result), while
//     before end. With clients, request i goes to client i mod N. A ramp
//     needs an end: its own end, or else the scenario's duration; with an
//     end past the duration, the ramp keeps its slope and the duration cuts
//     it short.
//   - replay: a recorded trace, see "Replay sources" below.
//   - clients: {retry: {policy, delay, factor, cap, jitter, resolution,
//     max-attempts, on}}: how clients react to a rejection (the engine
//     applies it). policy is none (default), immediate, fixed, backoff or retry-after;
//     a field that does not apply to the policy is an error. delay (> 0)
//     is required for fixed and backoff (the backoff's base); factor is a
//     decimal >= 1 read exactly as a fraction (1.5 is 3/2), default 2; cap
//     (> 0) must be >= delay, default none; jitter is none (default), full
//     or equal; resolution (retry-after) is a duration >= 0, default 1s, 0
//     meaning exact; max-attempts counts the first try: an integer >= 1, or
//     "unlimited" (not for immediate, whose retries never let time pass),
//     default 3 for every policy but none. on (every policy but none) is a
//     non-empty list of distinct causes the client retries after: reject
//     (the limiter's 429), shed (a full backend queue's 503), timeout (the
//     client stopped waiting) and error (the backend failed the request);
//     default [reject], the behaviour before causes existed
//     (traffic.RetryPolicy.On, a traffic.RetryOn whose zero value is
//     [reject]). shed, timeout and error need a backend with workers: only
//     such a backend sheds, times out or fails requests.
//   - backend: without workers, {service: duration >= 0, default 0}, the
//     pure delay the concurrency limiter assumes (Scenario.Service), and
//     Scenario.Backend is nil; with workers, the model of docs/backend.md,
//     see "The backend section" below.
//   - report: {windows: a non-empty list of distinct durations > 0, default
//     [W, W/10]; bucket: duration > 0, default W/10}; W/10 is rounded down
//     and at least 1ns.
//   - cluster: N gateway nodes behind a balancer sharing one limit through a
//     store (docs/cluster.md); see "The cluster section" below.
//
// Durations are written as Go writes them: a decimal number and a unit (ns,
// us or µs, ms, s, m, h), possibly in several parts (1m30s). They are read
// exactly, with no float: a fraction is allowed only when the value is a
// whole number of nanoseconds (1.5s, not 0.5ns). Negative values (except an
// aligned source's offset, which takes a leading minus sign) and values
// beyond about 292 years are errors, and a bare number needs a unit, except
// 0. Rates are N/unit or N/duration with N an integer >= 1: 10/s, 600/m,
// 5/100ms, 3600/h, 10/2s.
//
// A rate of 0 ("0/s") or a negative rate is an error, except a ramp's from,
// which may be 0.
//
// Random draws (poisson) are seeded: a source's seed is derived from the
// scenario's seed and the source's seed name, its type and keys and how many
// sources of that type and keys come before it (traffic.SourceSeed), so that
// one seed gives one trace, and adding a source, before or after, does not
// change another source's draws. Every source streams: its memory does not grow with the requests it
// sends.
//
// Every source's Start is its start and its End the smaller of its end and
// the duration, so that no source runs past the scenario (a replay's start
// and end are its SliceStart and SliceEnd instead). A replay source is
// seeded by its path as written. The scenario's
// seed is also the traffic plan's. Scenario.Retries holds each source's
// retry policy, in source order: its own retry, or else clients.retry.
//
// # The cluster section
//
// Without a cluster section Scenario.Cluster is nil and every Coord is
// zero. With one, Parse fills cluster.Config with its defaults:
//
//   - nodes: required, an integer from 1 to 1024.
//   - balancer: round-robin (default), random or key-hash.
//   - skew: each node's clock offset, a signed duration within [-1h, 1h]:
//     a list of exactly nodes of them, or one value v, spread over the
//     nodes by cluster.SpreadSkew (node i gets -v + 2v*i/(N-1)); default 0
//     for every node.
//   - store: rtt (default 1ms), jitter and service (default 0), each from 0
//     to 1h; timeout (default 1s), > 0 and at most 1h. The bound keeps the
//     engine's sums of them far from overflow.
//   - on-store-error: allow (default) or deny.
//   - faults: a list, each with a type and at (a duration >= 0, before the
//     scenario's end when it has one): node-down takes node (0 to N-1) and
//     for; store-down takes for; store-slow takes for and rtt (0 to 1h);
//     store-flush, an instant, takes nothing else. for is > 0, and at + for
//     must be a time. Two node-down faults of one node may not overlap, nor
//     may any two store-down and store-slow faults (they share the store);
//     windows are half-open, so one may start where another ends, and a
//     store-flush may fall anywhere. Node-down faults may not leave every
//     node down at any instant: the balancer needs a live node.
//
// Each algorithm entry takes, besides its options, how it runs on the
// cluster. These are not the algorithm's parameters: they go to
// Algorithm.Coord, not to Params, and not to Set (the JSON "params"), since
// a cluster result reports them. Every one of them without a cluster section
// is an error.
//
//   - coordination: local, split, central, racy, sync or lease, default
//     central; a mode the algorithm does not take (cluster.ModesOf) is an
//     error naming those it takes, and so is an entry of x-time-rate, which
//     cannot run in the store, that leaves it to the default. split gives
//     node i cluster.Share(L, i, N) and cluster.Share(B, i, N): with L or B
//     below N some nodes get 0 and admit nothing; that is allowed.
//   - clock (central only): store (default) or node.
//   - write (racy only): set (default) or incr (fixed-window and
//     sliding-window only: cluster.IncrWrites).
//   - sync (sync only, required): a duration > 0, at most 1h.
//   - lease (lease only): an integer from 1 to the entry's burst B (a node
//     can never take more than the store's bucket holds), default
//     cluster.DefaultLease(B, N) = max(1, B/(2N)), filled in.
//   - lease-ttl (lease only): a duration > 0, default the entry's per W,
//     filled in. It has no bound but the range of a duration, as W has
//     none.
//   - on-store-error (central, racy, sync and lease: the modes that use the
//     store): allow or deny for this row, instead of the cluster's; left
//     empty when not written.
//
// Without an algorithms list, every algorithm that takes central runs
// central with the store's clock; the others (x-time-rate) are left out and
// listed in Scenario.Skipped, with a reason, as nginx is for a per it does
// not take.
//
// # The backend section
//
// Without workers the backend section takes only service, a duration: the
// time an admitted request spends at the backend, as before; any other
// field of the section is an error saying it needs workers, and so is a
// service written as a distribution. With workers, Parse fills a
// backend.Config (Scenario.Backend) with the backend package's rules and a
// few stricter ones (a bound on workers, a workers fault that cuts
// something, drop-expired only with a timeout); backend.Config.Validate
// has the last word:
//
//   - workers: the servers c, an integer from 1 to 1000000.
//   - service (required): a duration >= 0, a constant; or a mapping {dist,
//     mean, p99} with dist (required) constant (mean >= 0), exponential
//     (mean > 0) or lognormal (mean > 0 and p99, required, from the mean
//     to exp(z99^2/2) ≈ 14.97 times it: backend's own bounds and message,
//     reported at p99). p99 is for lognormal only. Scenario.Service, and
//     each algorithm's Params.Service, is the mean: what the concurrency
//     limiter assumes when no model drives it.
//   - queue: the requests that may wait beyond the c in service, an
//     integer >= 0 (0: a loss system, every request that finds the
//     workers busy is shed) or unbounded; default unbounded
//     (backend.Unbounded).
//   - discipline: fifo (default) or lifo.
//   - timeout: how long a client waits, from its attempt's arrival, a
//     duration >= 0; default 0, meaning for ever.
//   - drop-expired: true or false (default): whether a worker drops,
//     unserved, a request whose client has given up. true needs a timeout.
//   - errors: the fraction of served requests that fail, a number from 0 to
//     1, read with strconv.ParseFloat from the text as written (0.01 is the
//     float64 nearest 0.01); default 0.
//   - faults: a list, each with a type, at (a duration >= 0, before the
//     scenario's end when it has one; with replay sources it counts from
//     the trace's first request) and for (> 0; at + for must be a time):
//     slow takes factor (a number > 0, multiplying the service times of
//     the requests that start in the window); pause nothing else; workers
//     takes count (an integer from 0 to workers-1: the workers left). Two
//     faults of one type may not overlap (windows are half-open, so one
//     may start where another ends); faults of different types may.
//
// The Config's Seed is the scenario's seed, its Bucket the report's
// bucket, its Start 0 (the engine moves it, and the faults, to the first
// arrival of a recorded trace) and MaxBuckets and RecoverWindow 0, the
// backend's defaults.
//
// # Replay sources
//
// A replay source is a recorded trace (an access log, CSV, TSV or JSON
// lines, gzip or not), streamed line by line in constant memory, each line
// one request at its own absolute timestamp (ns since the Unix epoch, so
// fixed windows align to the epoch). It takes no key, clients or key-prefix
// (the keys come from the trace); cost and retry as any source; start and
// end cut the trace. Its fields:
//
//   - path (required): the file, relative to the scenario file's folder
//     (built-ins: to the working directory). gzip is recognised by its
//     first bytes, whatever the name. Parse does not open the file;
//     CheckFiles (ratesim validate) does, and a run reports a missing file.
//   - format: auto (default), combined, common, csv, tsv or jsonl. auto looks
//     at the first lines (up to 5, in the first 64 KiB): a line shaped host
//     ident user [10/Oct/2000:13:55:36 -0700] "request" status size is a log,
//     combined when one has "referer" "agent" after the size; a line
//     starting with { is JSON; otherwise tabs make TSV and commas CSV. The
//     lines vote; a file of one column headed like a time is CSV. The trace
//     summary says which format was chosen.
//   - key-field: for logs ip (the client host, the default), ident, user,
//     request (the whole request line), status, referer or agent (the last
//     two in combined logs only); for CSV/TSV a header name (exact, then
//     ignoring case) or a 1-based column number; for JSON lines a top-level
//     field holding a string or a number. none (the default for CSV, TSV
//     and JSON) puts every request under the single key "global". Keys get
//     ids in the order they are first seen. An empty key is a missing
//     field.
//   - time-field: for CSV/TSV/JSON, as key-field; default the first column
//     (for JSON, the first field present in the line) named time,
//     timestamp, @timestamp, ts, datetime, time_s, time_ms, time_us or
//     time_ns, ignoring case. A log's time is the one in brackets.
//   - cost-field: a field holding each request's cost, an integer >= 1
//     (for logs only size, where "-" is a bad cost). Without it every
//     request costs cost (default 1); not both.
//   - columns: names the columns of a CSV/TSV file without a header row;
//     otherwise the first line is the header (not counted as a line of the
//     trace). CSV fields may be quoted as RFC 4180 ("" for a quote), on one
//     line; TSV has no quoting.
//   - times, without time-layout or time-unit: CLF (10/Oct/2000:13:55:36
//     -0700, month names exactly Jan to Dec); RFC 3339 with or without a
//     fraction and a zone, with T or a space between date and time (the
//     Azure trace's 2023-11-16 18:15:46.6805900 is read to the 100 ns); a
//     number is Unix time in the unit its field's name ends with (_s, _ms,
//     _us, _ns), else guessed from its integer digits (up to 10: s, 11-13:
//     ms, 14-16: us, more: ns). Times before 1970 or past
//     2262-04-11T23:47:16Z are bad times.
//   - time-layout: a Go reference layout, e.g. "[2006-01-02 15:04:05.000000]"
//     (for logs it reads the text in brackets, with them when it starts
//     with a bracket). It must give the date and the time to the second;
//     sub-second digits are kept. time-unit: s, ms, us or ns, for numeric
//     times, integer or decimal, read exactly into integer ns
//     (1438936711.003372 s is 1438936711003372000 ns; digits below a ns are
//     dropped). Not both.
//   - timezone: an IANA name (Europe/Paris) or UTC, for times written without
//     a zone (default UTC). The zone database is built in, so every machine
//     reads the same; Local is refused for that reason.
//   - reorder: a duration >= 0, default 5m. Logs are written when a request
//     ends but stamped when it began, so lines come out of order. A line
//     stamped up to reorder before the latest stamp read so far is put in
//     its place (equal stamps keep file order). A line stamped more than
//     reorder before it is late: not dropped, but sent at the later of its
//     stamp and the last instant already sent (the earliest instant still
//     possible), counted as late and reported (the first 5, with file:line
//     and how late). Only the lines within the window are held in memory.
//   - spread: a stamp without sub-second digits (CLF, a layout without
//     fraction, integer Unix seconds, RFC 3339 without fraction) stands for
//     a whole second. even (the default): the k-th (from 0, in file order)
//     of the n lines stamped with second s goes to s + floor((2k+1)*1s/(2n)),
//     so 3 lines go to s+166666666ns, s+500ms and s+833333333ns; none: all
//     at s (the worst case); random: n instants drawn uniformly in
//     [s, s+1s) from the source's seed, sorted, and given to the lines in
//     file order. Stamps with sub-second digits are used as they are.
//   - speed: a decimal > 0, read exactly as a fraction (2, 0.5, 1.5 = 3/2):
//     an instant t becomes first + (t - first)/speed, rounded down to a ns,
//     first being the stamp of the first line kept; spreading comes first.
//   - start, end: durations, offsets from the trace's first timestamp (that
//     of the first readable line, in file order), compared with each line's
//     stamp before spreading and speed: only lines in [first+start,
//     first+end) are kept, the others counted as sliced; no start or end,
//     no cut on that side.
//   - strict: true stops the run at the first malformed line, naming it as
//     file:line: what is wrong, instead of counting it and going on.
//   - log-format: an nginx log_format's text ('$msec $remote_addr
//     "$request" ...', its strings concatenated) that the trace is written
//     with; the format is then nginx (leave format unset), and time-field,
//     key-field, cost-field and check-field name its variables ($msec or
//     msec). A value runs to the first occurrence of the literal text that
//     follows its variable (so it holds spaces only when that text is not
//     a space: "$request"); two variables with no text between them are
//     refused. The time: $msec (read exactly to the ms), else
//     $time_iso8601, else $time_local (whole seconds, spread as above);
//     with $msec, minus $request_time when the format has it (nginx writes
//     both when the request ends: the difference is when it began). The
//     key: $remote_addr (else $binary_remote_addr) unless key-field says.
//     log-escape: default, json or none, as log_format's escape=.
//   - check-field: the field holding what the gateway decided of each
//     request, for replay --check-field: nginx's $limit_req_status
//     (PASSED, DELAYED, REJECTED, DELAYED_DRY_RUN, REJECTED_DRY_RUN) or an
//     HTTP status; "-" or empty is not compared, anything else is a bad
//     check. For combined and common logs only status.
//
// Lines end at \n (or \r\n); a last line without one counts. A malformed
// line (longer than 1 MiB, not UTF-8, empty, or a field missing or
// unreadable) is counted by reason (bad time, bad month, missing field, bad
// cost, bad check, bad quote, bad JSON, bad key, line too long, not UTF-8, empty line),
// the first 5 are reported with file:line and what is wrong, and the run
// goes on. A log line cut short in its referer or agent is used (it has all
// a request needs) unless the key is the referer or the agent. Every line
// read is used, malformed or sliced: the counts add up to the lines read,
// and nothing is dropped silently (late lines are used).
package scenarios
