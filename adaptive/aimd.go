package adaptive

import (
	"time"
)

// AIMDConfig holds the parameters of aimd, named as a scenario spells them
// (the Java builder's names in kebab-case). DefaultAIMDConfig gives the
// Java's defaults:
//
//	initial-limit  20    the limit before any sample
//	min-limit      20    the limit never goes below
//	max-limit      200   the limit never goes above
//	backoff-ratio  0.9   the factor applied on a drop, in [0.5, 1)
//	timeout        5s    a sample with an rtt beyond it counts as a drop (> 0)
type AIMDConfig struct {
	InitialLimit int
	MinLimit     int
	MaxLimit     int
	BackoffRatio float64
	Timeout      time.Duration
}

// DefaultAIMDConfig returns AIMDLimit.Builder's defaults.
func DefaultAIMDConfig() AIMDConfig {
	return AIMDConfig{InitialLimit: 20, MinLimit: 20, MaxLimit: 200, BackoffRatio: 0.9, Timeout: 5 * time.Second}
}

// AIMD is Netflix concurrency-limits' AIMDLimit, a loss-based limit: an
// additive increase while nothing is dropped, a multiplicative decrease on a
// drop.
//
// Source: concurrency-limits-core/src/main/java/com/netflix/concurrency/
// limits/limit/AIMDLimit.java (_update). On each sample, with L the current
// limit:
//
//	if dropped || rtt > timeout:  L = (int)(L * backoffRatio)   (truncated)
//	else if inflight*2 >= L:      L = L + 1
//	L = min(maxLimit, max(minLimit, L))
//
// So with the defaults a drop at L = 30 gives (int)27.0 = 27, but a drop at
// L = 20 gives (int)18.0 = 18, clamped back to min-limit 20.
//
// The Go port (platinummonkey/go-concurrency-limits limit/aimd.go) differs:
// it has no min-limit, max-limit or timeout, floors the limit at 1 and
// decreases by at least 1 (max(1, min(L-1, int(L*ratio)))), and increases
// only when inflight >= L; this follows the Java.
//
// State: the limit, 8 bytes.
type AIMD struct {
	cfg   AIMDConfig
	limit int
}

var _ Limit = (*AIMD)(nil)

// NewAIMD returns an AIMD limit, or an error naming the first invalid
// parameter: the Java's checks (backoff-ratio in [0.5, 1), timeout > 0),
// plus limits of at least 1 with initial-limit in [min-limit, max-limit]
// (the Java only warns about the latter).
func NewAIMD(c AIMDConfig) (*AIMD, error) {
	if err := checkLimits("aimd", "initial-limit", c.InitialLimit, "min-limit", c.MinLimit, "max-limit", c.MaxLimit); err != nil {
		return nil, err
	}
	if !(c.BackoffRatio >= 0.5 && c.BackoffRatio < 1) {
		return nil, paramErr("aimd", "backoff-ratio", c.BackoffRatio, "want a ratio in [0.5, 1)")
	}
	if c.Timeout <= 0 {
		return nil, paramErr("aimd", "timeout", c.Timeout, "want a timeout greater than 0")
	}
	return &AIMD{cfg: c, limit: c.InitialLimit}, nil
}

// Limit returns the current limit.
func (a *AIMD) Limit(time.Duration) int { return a.limit }

// OnSample applies AIMDLimit._update.
func (a *AIMD) OnSample(_, rtt time.Duration, inflight int, dropped bool) {
	l := a.limit
	if dropped || rtt > a.cfg.Timeout {
		l = javaInt(float64(l) * a.cfg.BackoffRatio)
	} else if inflight*2 >= l {
		l++
	}
	a.limit = min(a.cfg.MaxLimit, max(a.cfg.MinLimit, l))
}
