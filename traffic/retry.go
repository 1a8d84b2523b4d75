package traffic

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy is how a client reacts to a rejection (docs/scenario-file.md) and,
// with a backend that has workers, to a shed, a timeout or an error
// (docs/backend.md). The engine applies it; the zero value is policy "none".
type RetryPolicy struct {
	// Policy is none, immediate, fixed, backoff or retry-after.
	Policy string
	// On is the set of causes the client retries after (the scenario's
	// on: [reject, shed, timeout, error]); its zero value is [reject], a
	// client that retries only what the limiter rejects. The engine asks
	// On.Retries(cause) before Wait: a cause not in On ends the request
	// there, as a give-up.
	On RetryOn
	// Delay is the fixed policy's wait and the backoff policy's base.
	Delay time.Duration
	// Factor is the backoff multiplier as an exact fraction Num/Den (a
	// scenario's 1.5 is 3/2), so that no float decides a retry time.
	Factor Fraction
	// Cap bounds a backoff wait (0: no cap).
	Cap time.Duration
	// Jitter is none, full, equal or decorrelated (backoff only).
	Jitter string
	// Resolution rounds a retry-after wait up to a multiple of it, as an
	// HTTP Retry-After header carries whole seconds; 0 means exact.
	Resolution time.Duration
	// MaxAttempts counts the first try; 0 means no limit.
	MaxAttempts int
	// Budget, when set, throttles retries as gRPC does (Budgets).
	Budget RetryBudget
	// Tokens, when set, is a retry token bucket (TokenBuckets).
	Tokens RetryTokens
	// Breaker, when set, is a circuit breaker on retries (Breakers).
	Breaker RetryBreaker
}

// RetryBudget is gRPC's retry throttling (gRFC A6, "Retry Throttling";
// grpc-go's internal/retry throttler), a retry budget per client: its
// zero value is none.
type RetryBudget struct {
	// MaxTokens is max_tokens, from 1 to 1000 (0: no budget).
	MaxTokens int64
	// RatioMilli is token_ratio in thousandths, > 0: gRPC reads it with
	// three decimal places and counts tokens in thousandths, as here.
	RatioMilli int64
}

// Budgets is the retry budget of every client (key) of one policy. Each
// client has a token count, from MaxTokens at its first request; every
// failed attempt (rejected, shed, timed out or failed: Fail) takes one
// token, every attempt that succeeds (Succeed) gives back token_ratio,
// never below 0 nor above MaxTokens; a retry is allowed only while the
// count is above MaxTokens/2 (Allows). All in thousandths of a token,
// exactly. State: 8 bytes per key, for the keys that have failed.
type Budgets struct {
	b RetryBudget
	// deficit[key] is MaxTokens minus the key's count, in thousandths
	// (0: full, the zero value)
	deficit []int64
}

// NewBudgets returns the budgets of b, nil for no budget.
func NewBudgets(b RetryBudget) *Budgets {
	if b.MaxTokens == 0 {
		return nil
	}
	return &Budgets{b: b}
}

// Fail takes a token from key's count: one of its attempts failed.
func (s *Budgets) Fail(key uint32) {
	if int(key) >= len(s.deficit) {
		s.deficit = append(s.deficit, make([]int64, int(key)+1-len(s.deficit))...)
	}
	s.deficit[key] = min(s.deficit[key]+1000, s.b.MaxTokens*1000)
}

// Succeed gives key back token_ratio: one of its attempts succeeded.
func (s *Budgets) Succeed(key uint32) {
	if int(key) < len(s.deficit) {
		s.deficit[key] = max(s.deficit[key]-s.b.RatioMilli, 0)
	}
}

// Allows reports whether key may retry: its count is above MaxTokens/2.
func (s *Budgets) Allows(key uint32) bool {
	if int(key) >= len(s.deficit) {
		return true
	}
	full := s.b.MaxTokens * 1000
	return 2*(full-s.deficit[key]) > full
}

// Cause is why an attempt failed, as its client sees it: the cause a retry
// follows.
type Cause uint8

const (
	// CauseReject: the limiter rejected the attempt (a 429).
	CauseReject Cause = iota
	// CauseShed: the backend's full queue turned it away (a 503).
	CauseShed
	// CauseTimeout: the client stopped waiting for the response.
	CauseTimeout
	// CauseError: the backend served it, with an error.
	CauseError
)

// Causes are the causes, in order, as the scenario file writes them.
var Causes = []Cause{CauseReject, CauseShed, CauseTimeout, CauseError}

var causeNames = [...]string{"reject", "shed", "timeout", "error"}

// String is the cause as the scenario file writes it: reject, shed,
// timeout or error.
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "cause(" + strconv.Itoa(int(c)) + ")"
}

// ParseCause reads a cause as the scenario file writes it.
func ParseCause(s string) (Cause, bool) {
	for i, n := range causeNames {
		if s == n {
			return Cause(i), true
		}
	}
	return 0, false
}

// RetryOn is a set of causes, a bit each. Its zero value is the default
// set, [reject]: bit 0 says that reject is NOT in the set, so that a
// RetryPolicy written before causes existed keeps its meaning, while bits 1
// to 3 say that shed, timeout and error are. Every set has one
// representation, so two sets are equal iff their values are.
type RetryOn uint8

// noReject is the bit of a set without reject.
const noReject RetryOn = 1

// RetryOnOf returns the set of the causes given (RetryOnOf() is empty;
// RetryOnOf(CauseReject) is the zero value).
func RetryOnOf(causes ...Cause) RetryOn {
	o := noReject
	for _, c := range causes {
		if c == CauseReject {
			o &^= noReject
		} else if c < Cause(len(causeNames)) {
			o |= 1 << c
		}
	}
	return o
}

// Retries reports whether c is in the set: whether a client retries after
// an attempt that failed for that cause (if its policy and max-attempts
// let it).
func (o RetryOn) Retries(c Cause) bool {
	if c == CauseReject {
		return o&noReject == 0
	}
	return c < Cause(len(causeNames)) && o&(1<<c) != 0
}

// Causes lists the causes in the set, in the order of Causes.
func (o RetryOn) Causes() []Cause {
	var out []Cause
	for _, c := range Causes {
		if o.Retries(c) {
			out = append(out, c)
		}
	}
	return out
}

// String writes the set as the scenario file does: [reject, shed].
func (o RetryOn) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range o.Causes() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	b.WriteByte(']')
	return b.String()
}

// Fraction is an exact rational Num/Den with Den > 0.
type Fraction struct {
	Num, Den int64
}

// Wait returns how long a client waits before its next attempt of a
// request whose attempt number attempt (1 for the first try) was just
// rejected with the limiter's retryAfter (Never = -1 when the request can
// never be admitted), and false when the client gives up instead:
//
//   - none: gives up at once.
//   - max-attempts: gives up once attempt == MaxAttempts (it counts the
//     first try).
//   - immediate: retries at once (wait 0).
//   - fixed: waits Delay.
//   - backoff: waits Delay * Factor^(attempt-1), capped at Cap, computed
//     exactly in integers (saturating instead of overflowing); jitter full
//     draws the wait uniformly from [0, d], equal from [d/2, d] (d - d/2 is
//     drawn, so the two halves add up to d exactly). Jitter decorrelated
//     ignores Factor: it is Brooker's "Exponential Backoff And Jitter"
//     (AWS Architecture Blog, 2015; aws-samples/aws-arch-backoff-simulator's
//     ExpoBackoffDecorr), sleep = min(Cap, uniform [Delay, 3*sleep]) from
//     sleep = Delay, each bound included, in integer nanoseconds: the
//     attempt-th sleep is drawn afresh from rng's start (Decorrelated), so
//     rng must be the request's own stream.
//   - retry-after: waits the limiter's retry_after rounded up to a whole
//     multiple of Resolution (1s by default, as an HTTP Retry-After header
//     carries whole seconds), or exactly when Resolution is 0; gives up when
//     retry_after is Never.
//
// rng is drawn from only for jitter.
func (p *RetryPolicy) Wait(attempt int, retryAfter time.Duration, rng *rand.Rand) (time.Duration, bool) {
	if p.Policy == "" || p.Policy == "none" {
		return 0, false
	}
	if p.MaxAttempts > 0 && attempt >= p.MaxAttempts {
		return 0, false
	}
	switch p.Policy {
	case "immediate":
		return 0, true
	case "fixed":
		return p.Delay, true
	case "backoff":
		if p.Jitter == "decorrelated" {
			return p.Decorrelated(attempt, rng), true
		}
		d := p.backoff(attempt)
		switch p.Jitter {
		case "full":
			d = time.Duration(rng.Int64N(int64(d) + 1))
		case "equal":
			half := d / 2
			d = half + time.Duration(rng.Int64N(int64(d-half)+1))
		}
		return d, true
	case "retry-after":
		if retryAfter < 0 {
			return 0, false
		}
		if p.Resolution <= 0 {
			return retryAfter, true
		}
		n := (retryAfter + p.Resolution - 1) / p.Resolution
		if n > math.MaxInt64/p.Resolution {
			return 0, false
		}
		return n * p.Resolution, true
	}
	return 0, false
}

// Decorrelated is the attempt-th wait of decorrelated jitter: the sleeps
// sleep_k = min(Cap, Delay + uniform [0, 3*sleep_(k-1) - Delay]) for k = 1
// to attempt, from sleep_0 = Delay, each drawn by Int64N from rng. A
// request that draws its sleeps from a stream of its own, from its start,
// needs no state between its retries. Without Cap, the bound is
// MaxInt64/4, far beyond any scenario; 3*sleep cannot overflow.
func (p *RetryPolicy) Decorrelated(attempt int, rng *rand.Rand) time.Duration {
	limit := time.Duration(math.MaxInt64 / 4)
	if p.Cap > 0 {
		limit = min(p.Cap, limit)
	}
	sleep := min(p.Delay, limit)
	for k := 1; k <= attempt; k++ {
		hi := 3 * sleep
		if hi <= p.Delay {
			sleep = min(p.Delay, limit)
			continue
		}
		sleep = min(p.Delay+time.Duration(rng.Int64N(int64(hi-p.Delay)+1)), limit)
	}
	return sleep
}

// backoff is Delay * Factor^(attempt-1), capped at Cap (or at MaxInt64/2
// when there is no cap, far beyond any scenario).
func (p *RetryPolicy) backoff(attempt int) time.Duration {
	limit := time.Duration(math.MaxInt64 / 2)
	if p.Cap > 0 {
		limit = p.Cap
	}
	num, den := p.Factor.Num, p.Factor.Den
	if num <= 0 || den <= 0 {
		num, den = 2, 1
	}
	d := p.Delay
	for i := 1; i < attempt && d < limit; i++ {
		// d*num/den in 128 bits, rounded down
		hi, lo := bits.Mul64(uint64(d), uint64(num))
		if hi >= uint64(den) {
			return limit
		}
		q, _ := bits.Div64(hi, lo, uint64(den))
		if q >= uint64(limit) {
			return limit
		}
		d = time.Duration(q)
	}
	return min(d, limit)
}
