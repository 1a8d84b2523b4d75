package sim

import (
	"math/big"
	"slices"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// Check asks every row to be held against what the gateway that wrote a
// replayed log decided of each request (docs/replay.md, replay
// --check-field): each arrival carries its logged verdict
// (traffic.Arrival.Logged), and each row counts, over first attempts
// whose line logged one, the requests it decided alike.
//
// Alike means: for nginx's $limit_req_status, PASSED is accept, DELAYED
// delay and REJECTED reject, the dry-run forms compared as what nginx
// would have done (DELAYED_DRY_RUN is delay, REJECTED_DRY_RUN reject);
// for an HTTP status, a status in Rejects is reject and any other is an
// admission (accept or delay).
type Check struct {
	// Field is the log field read, as the result names it.
	Field string
	// Rejects are the HTTP statuses that mean rejected: 429 and the
	// gateway's own reject status.
	Rejects []int
	// First is how many disagreements each result lists (0:
	// DefaultCheckFirst).
	First int
}

// DefaultCheckFirst is how many disagreements a check lists by default.
const DefaultCheckFirst = 5

// CheckResult is a row's agreement with the gateway's log. Ratio is
// Agree/Compared rounded half up to four decimals (0 when nothing was
// compared); First lists the first disagreements in processing order.
type CheckResult struct {
	Field    string              `json:"field"`
	Compared int64               `json:"compared"`
	Agree    int64               `json:"agree"`
	Ratio    float64             `json:"ratio"`
	First    []CheckDisagreement `json:"first"`
}

// CheckDisagreement is one request the row decided otherwise than the
// gateway logged: its arrival, key, the gateway's value as logged
// ("REJECTED", "429") and the row's verdict (accept, delay, reject).
type CheckDisagreement struct {
	TimeNs  int64  `json:"time_ns"`
	Key     string `json:"key"`
	Gateway string `json:"gateway"`
	Ratesim string `json:"ratesim"`
	// Limit is, for an all-of row, the limit that decided the row's
	// verdict (Decision.Fired, by LimitName); "" when none did.
	Limit string `json:"limit,omitempty"`
}

// checkObserver counts one row's agreement and passes every decision on
// to the caller's observer (inner, possibly nil).
type checkObserver struct {
	c     *Check
	first int
	res   CheckResult
	inner Observer
	// limits name an all-of row's limits (LimitName), for Limit
	limits []string
}

func newCheckObserver(c *Check, inner Observer) *checkObserver {
	first := c.First
	if first <= 0 {
		first = DefaultCheckFirst
	}
	return &checkObserver{c: c, first: first, inner: inner, res: CheckResult{Field: c.Field, First: []CheckDisagreement{}}}
}

func (o *checkObserver) Observe(d *Decision) error {
	if d.Attempt == 1 && d.Logged != traffic.LoggedNone {
		o.res.Compared++
		if o.agrees(d.Logged, d.Verdict) {
			o.res.Agree++
		} else if len(o.res.First) < o.first {
			dis := CheckDisagreement{TimeNs: int64(d.Time), Key: d.Key,
				Gateway: d.Logged.String(), Ratesim: d.Verdict.String()}
			if d.Fired > 0 && d.Fired <= len(o.limits) {
				dis.Limit = o.limits[d.Fired-1]
			}
			o.res.First = append(o.res.First, dis)
		}
	}
	if o.inner != nil {
		err := o.inner.Observe(d)
		if err == ErrStopObserving {
			o.inner = nil
			return nil
		}
		return err
	}
	return nil
}

// agrees compares a logged value with a verdict, as Check says.
func (o *checkObserver) agrees(l traffic.Logged, v algorithms.Verdict) bool {
	if l.IsStatus() {
		return slices.Contains(o.c.Rejects, int(l)) == (v == algorithms.Reject)
	}
	switch l {
	case traffic.LoggedPassed:
		return v == algorithms.Accept
	case traffic.LoggedDelayed, traffic.LoggedDelayedDryRun:
		return v == algorithms.Delay
	}
	return v == algorithms.Reject // REJECTED, REJECTED_DRY_RUN
}

// result is the row's CheckResult, its ratio computed.
func (o *checkObserver) result() *CheckResult {
	res := o.res
	res.Ratio = CheckRatio(res.Agree, res.Compared)
	return &res
}

// CheckRatio is agree/compared rounded half up to four decimals, computed
// exactly (0 when compared is 0).
func CheckRatio(agree, compared int64) float64 {
	if compared == 0 {
		return 0
	}
	// round(agree*10000/compared) = floor((2*agree*10000 + compared) / (2*compared))
	n := new(big.Int).Mul(big.NewInt(agree), big.NewInt(20000))
	n.Add(n, big.NewInt(compared))
	n.Quo(n, new(big.Int).Mul(big.NewInt(compared), big.NewInt(2)))
	f, _ := new(big.Rat).SetFrac(n, big.NewInt(10000)).Float64()
	return f
}

var _ Observer = (*checkObserver)(nil)
