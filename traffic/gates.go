package traffic

import "time"

// RetryTokens is a retry token bucket per client, as Brooker describes it
// ("Fixing retries with token buckets and circuit breakers", 2022: "each
// success could deposit 0.1 tokens, and each retry could consume 1") and
// as the AWS SDKs' retry quota keeps one (its standard mode: 500 tokens,
// a retry takes 5, a success gives back 1): its zero value is none.
type RetryTokens struct {
	// CapacityMilli is the bucket's size in thousandths of a token (0:
	// no bucket); a client starts full.
	CapacityMilli int64
	// CostMilli is what a retry takes, RefillMilli what a success gives
	// back, in thousandths of a token.
	CostMilli, RefillMilli int64
}

// TokenBuckets is the retry token bucket of every client (key) of one
// policy (RetryTokens). A retry is allowed only while the key holds at
// least its cost (Allows), and takes it when it is sent (Spend); every
// attempt that succeeds (Succeed) puts RefillMilli back, up to the
// capacity. A failure takes nothing: only retries spend. All in
// thousandths of a token, exactly. State: 8 bytes per key, for the keys
// that have retried.
type TokenBuckets struct {
	t RetryTokens
	// spent[key] is the capacity minus the key's tokens (0: full)
	spent []int64
}

// NewTokenBuckets returns the buckets of t, nil for none.
func NewTokenBuckets(t RetryTokens) *TokenBuckets {
	if t.CapacityMilli == 0 {
		return nil
	}
	return &TokenBuckets{t: t}
}

// Allows reports whether key holds a retry's cost.
func (b *TokenBuckets) Allows(key uint32) bool {
	spent := int64(0)
	if int(key) < len(b.spent) {
		spent = b.spent[key]
	}
	return b.t.CapacityMilli-spent >= b.t.CostMilli
}

// Spend takes a retry's cost from key.
func (b *TokenBuckets) Spend(key uint32) {
	if int(key) >= len(b.spent) {
		b.spent = append(b.spent, make([]int64, int(key)+1-len(b.spent))...)
	}
	b.spent[key] = min(b.spent[key]+b.t.CostMilli, b.t.CapacityMilli)
}

// Succeed puts a success's refill back into key's bucket.
func (b *TokenBuckets) Succeed(key uint32) {
	if int(key) < len(b.spent) {
		b.spent[key] = max(b.spent[key]-b.t.RefillMilli, 0)
	}
}

// RetryBreaker is a circuit breaker per client on its retries, the variant
// of Brooker's post above ("circuit breakers only to break retries, and
// still send normal first try traffic no matter the failure rate"), with
// the states of a classic breaker: its zero value is none.
//
//   - closed: retries are sent. The outcomes of the key's last Window
//     attempts are kept; once Window of them are known and at least
//     ThresholdMilli thousandths of them failed (failures*1000 >=
//     ThresholdMilli*Window, in integers), the breaker opens.
//   - open: for OpenFor, no retry is sent (the request gives up, counted
//     as throttled); outcomes are not counted.
//   - half-open: from the end of OpenFor; retries are sent again, and the
//     first outcome known decides: a success closes the breaker with its
//     window emptied, a failure opens it for OpenFor again.
type RetryBreaker struct {
	// Window is how many of the last attempts are counted (0: none).
	Window int
	// ThresholdMilli is the failure share that opens the breaker, in
	// thousandths (500 for 50%), 1 to 1000.
	ThresholdMilli int64
	// OpenFor is how long the breaker stays open.
	OpenFor time.Duration
}

// Breakers is the circuit breaker of every client (key) of one policy
// (RetryBreaker). State: 64 bytes plus Window per key, for the keys
// that have had an outcome.
type Breakers struct {
	b    RetryBreaker
	keys []breaker
}

type breaker struct {
	ring     []bool // the last outcomes, true for a failure
	next     int    // where the next outcome goes in ring
	n        int    // outcomes in ring
	failures int
	// open: the breaker opened at opened (until opened + OpenFor, then
	// half-open)
	open   bool
	opened time.Duration
}

// NewBreakers returns the breakers of b, nil for none.
func NewBreakers(b RetryBreaker) *Breakers {
	if b.Window == 0 {
		return nil
	}
	return &Breakers{b: b}
}

func (s *Breakers) of(key uint32) *breaker {
	if int(key) >= len(s.keys) {
		s.keys = append(s.keys, make([]breaker, int(key)+1-len(s.keys))...)
	}
	return &s.keys[key]
}

// Allows reports whether key's breaker lets a retry through at now: it is
// closed or half-open.
func (s *Breakers) Allows(key uint32, now time.Duration) bool {
	if int(key) >= len(s.keys) {
		return true
	}
	k := &s.keys[key]
	return !k.open || now >= k.opened+s.b.OpenFor
}

// Outcome counts an attempt of key whose outcome is known at now, failed
// or not.
func (s *Breakers) Outcome(key uint32, now time.Duration, failed bool) {
	k := s.of(key)
	if k.open {
		if now < k.opened+s.b.OpenFor {
			return // open: not counted
		}
		// half-open: this outcome decides
		if failed {
			k.opened = now
			return
		}
		k.open, k.n, k.next, k.failures = false, 0, 0, 0
		return
	}
	if k.ring == nil {
		k.ring = make([]bool, s.b.Window)
	}
	if k.n == len(k.ring) {
		if k.ring[k.next] {
			k.failures--
		}
	} else {
		k.n++
	}
	k.ring[k.next] = failed
	if failed {
		k.failures++
	}
	k.next = (k.next + 1) % len(k.ring)
	if k.n == len(k.ring) && int64(k.failures)*1000 >= s.b.ThresholdMilli*int64(k.n) {
		k.open, k.opened = true, now
	}
}
