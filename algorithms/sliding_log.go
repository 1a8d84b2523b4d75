package algorithms

import (
	"math"
	"time"
	"unsafe"
)

// SlidingLog is the sliding-window log, as Figma describes it in "An
// alternative approach to rate limiting": every admitted request is logged
// with its time, and a request is judged by the log of the last W.
//
// Rule: an entry logged at s counts at t iff t - s < W, so it stops counting
// at exactly s+W. A request of cost c at t is admitted iff the costs of the
// entries that count, plus c, are at most L; it is then logged as (t, c). It
// is the exact sliding window: no interval [a, a+W) ever admits more than L.
//
// RetryAfter: the wait until enough of the oldest entries have stopped
// counting for c to fit, s_i + W - t for the first entry i (oldest first)
// whose expiry brings the sum down to L - c; always in (0, W]. Never when
// c > L.
//
// count-rejected: a rejected request is logged too (Figma's log records
// every request), including one whose cost can never fit; retry_after is
// computed on the log with the rejected entry in it, so the rejected attempt
// counts against its own retry. A logged cost above L is logged as L+1: any
// set of entries holding it exceeds L - c for every c >= 1 whatever its
// size, so no decision and no retry_after changes, and the running sum cannot
// overflow.
//
// State per key: a slice of (expiry, cost) entries pruned from the front and
// the running sum of their costs, 32 bytes, plus 16 bytes per entry that
// still counts. The live entries of all keys are counted at every instant,
// not only when their key is touched. A key's state is released, and its
// log's memory freed, once its last entry stops counting (last s + W).
type SlidingLog struct {
	keyed[costLog]
	limit         int64         // L
	window        time.Duration // W
	countRejected bool
	expiring      expiryQueue // the expiry of every live entry of every key
}

var (
	_ Limiter     = (*SlidingLog)(nil)
	_ stateHolder = (*SlidingLog)(nil)
	_ Inspector   = (*SlidingLog)(nil)
)

func newSlidingLogLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("sliding-log", p, "count-rejected"); err != nil {
		return nil, err
	}
	l := &SlidingLog{limit: p.Rate, window: p.Per, countRejected: p.CountRejected}
	l.keyed = newKeyed(int64(unsafe.Sizeof(costLog{})), (*costLog).freshAt)
	return l, nil
}

// Decide admits the request iff the entries of the last W leave room for
// cost.
func (l *SlidingLog) Decide(now time.Duration, key Key, cost int64) Decision {
	l.flush(now)
	s := l.get(now, key)
	s.prune(now)
	if cost <= l.limit && s.sum <= l.limit-cost {
		l.log(now, key, s, cost)
		return Decision{Verdict: Accept}
	}
	if l.countRejected {
		l.log(now, key, s, min(cost, l.limit+1))
	}
	if cost > l.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	return Decision{Verdict: Reject, RetryAfter: s.waitFor(now, cost, l.limit)}
}

// log appends an entry of cost at now to key's log s.
func (l *SlidingLog) log(now time.Duration, key Key, s *costLog, cost int64) {
	until := now + l.window
	s.push(until, cost)
	l.expiring.push(until)
	l.addBytes(costEntryBytes)
	l.touch(key, costEntryBytes*int64(len(s.entries)))
}

// flush drops from the byte count the entries of every key that have
// stopped counting by now.
func (l *SlidingLog) flush(now time.Duration) {
	if n := l.expiring.popDue(now); n > 0 {
		l.addBytes(-costEntryBytes * int64(n))
	}
}

// liveAt counts the entries that have stopped counting by now, then
// releases the keys that are fresh.
func (l *SlidingLog) liveAt(now time.Duration) (keys, bytes int64) {
	l.flush(now)
	return l.keyed.liveAt(now)
}

// costEntry is one entry of a costLog: cost units that count until until
// (excluded).
type costEntry struct {
	until time.Duration // the instant the entry stops counting
	cost  int64
}

// costEntryBytes is what one live entry costs a key.
const costEntryBytes = int64(unsafe.Sizeof(costEntry{}))

// costLog is a FIFO of entries that stop counting at non-decreasing
// instants, and the sum of their costs: the sliding log's entries, and the
// concurrency limiter's requests in flight. Expired entries are dropped from
// the front by prune.
type costLog struct {
	entries []costEntry
	sum     int64
}

// prune drops the entries that have stopped counting by now.
func (q *costLog) prune(now time.Duration) {
	i := 0
	for i < len(q.entries) && q.entries[i].until <= now {
		q.sum -= q.entries[i].cost
		i++
	}
	if i == len(q.entries) {
		q.entries = q.entries[:0] // keep the array for the next entries
	} else {
		q.entries = q.entries[i:]
	}
}

// push appends an entry; until must not be before the last entry's.
func (q *costLog) push(until time.Duration, cost int64) {
	q.entries = append(q.entries, costEntry{until, cost})
	q.sum += cost
}

// waitFor returns the shortest wait w > 0 after which the entries still
// counting at now+w leave room for cost under limit. It requires a pruned
// log with sum + cost > limit and cost <= limit.
func (q *costLog) waitFor(now time.Duration, cost, limit int64) time.Duration {
	over := q.sum - (limit - cost) // > 0: how much must stop counting
	for _, e := range q.entries {
		over -= e.cost
		if over <= 0 {
			return e.until - now
		}
	}
	// Unreachable: the entries sum to q.sum and limit-cost >= 0.
	return q.entries[len(q.entries)-1].until - now
}

// freshAt is the instant the last entry stops counting: from then on the
// log is empty, as a fresh key's.
func (q *costLog) freshAt() time.Duration {
	if len(q.entries) == 0 {
		return math.MinInt64
	}
	return q.entries[len(q.entries)-1].until
}

// Inspect returns key's gauges at now: "in window", the cost of the entries
// that still count at now, and "limit", L. It releases what is fresh by now
// (as liveAt does) and does not prune a live key's log.
func (l *SlidingLog) Inspect(now time.Duration, key Key) []Gauge {
	l.flush(now)
	l.expire(now)
	var in int64
	if int(key) < len(l.state) {
		in = l.state[key].sumAt(now)
	}
	return []Gauge{{"in window", float64(in)}, {"limit", float64(l.limit)}}
}

// sumAt returns the cost of the entries that still count at now, as prune
// would leave it, without pruning.
func (q *costLog) sumAt(now time.Duration) int64 {
	sum := q.sum
	for _, e := range q.entries {
		if e.until > now {
			break
		}
		sum -= e.cost
	}
	return sum
}
