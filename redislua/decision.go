package redislua

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// reply reads a script's reply: {verdict, delay_ns, retry_after_ns}, and
// the limit that fired after them when fired (all-of's script).
func reply(res any, fired bool) (Reply, error) {
	if !fired {
		d, err := decision(res)
		return Reply{Decision: d}, err
	}
	a, ok := res.([]any)
	if !ok || len(a) != 4 {
		return Reply{}, fmt.Errorf("script replied %v, want {verdict, delay_ns, retry_after_ns, fired}", res)
	}
	d, err := decision(a[:3])
	if err != nil {
		return Reply{}, err
	}
	f, ok := a[3].(int64)
	if !ok || f < 0 {
		return Reply{}, fmt.Errorf("script replied %v, want fired an integer >= 0", res)
	}
	return Reply{Decision: d, Fired: int(f)}, nil
}

// decision reads a script's reply {verdict, delay_ns, retry_after_ns}.
func decision(res any) (algorithms.Decision, error) {
	a, ok := res.([]any)
	if !ok || len(a) != 3 {
		return algorithms.Decision{}, fmt.Errorf("script replied %v, want {verdict, delay_ns, retry_after_ns}", res)
	}
	var n [3]int64
	for i, x := range a {
		v, ok := x.(int64)
		if !ok {
			return algorithms.Decision{}, fmt.Errorf("script replied %v, want three integers", res)
		}
		n[i] = v
	}
	if n[0] < 0 || n[0] > 2 {
		return algorithms.Decision{}, fmt.Errorf("script replied verdict %d, want 0, 1 or 2", n[0])
	}
	return algorithms.Decision{Verdict: algorithms.Verdict(n[0]), Delay: time.Duration(n[1]), RetryAfter: time.Duration(n[2])}, nil
}
