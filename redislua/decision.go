package redislua

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

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
