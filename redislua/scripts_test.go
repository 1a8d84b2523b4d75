package redislua

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// step is one request of a hand-worked case and the decision it must get.
type step struct {
	at   time.Duration
	cost int64
	want algorithms.Decision
	why  string
}

// handCase is a hand-worked sequence on one key.
type handCase struct {
	name      string
	algorithm string
	params    algorithms.Params
	steps     []step
}

func policy(rate int64, per time.Duration, burst int64) algorithms.Params {
	return algorithms.Params{Policy: algorithms.Policy{Rate: rate, Per: per, Burst: burst}}
}

func handCases() []handCase {
	var cases []handCase

	// docs/algorithms.md, worked example 1: the fixed-window double burst. 10 per 1s; ten
	// requests at 900..990 ms and ten at 1000..1090 ms.
	fw := handCase{name: "spec7.1 fixed-window double burst", algorithm: "fixed-window", params: policy(10, time.Second, 10)}
	sl := handCase{name: "spec7.1 sliding-log", algorithm: "sliding-log", params: policy(10, time.Second, 10)}
	for i := int64(0); i < 10; i++ {
		fw.steps = append(fw.steps, step{ms(900 + 10*i), 1, acc(), "window 0 holds 10"})
		sl.steps = append(sl.steps, step{ms(900 + 10*i), 1, acc(), "the log holds at most 10"})
	}
	for i := int64(0); i < 10; i++ {
		fw.steps = append(fw.steps, step{ms(1000 + 10*i), 1, acc(), "window 1 starts empty: 20 in 200ms"})
		// the oldest entry (900ms) stops counting at 1900ms
		sl.steps = append(sl.steps, step{ms(1000 + 10*i), 1, rej(ms(1900 - 1000 - 10*i)), "10 logged in the last 1s: wait for the 900ms entry to leave at 1900ms"})
	}
	fw.steps = append(fw.steps, step{ms(1095), 1, rej(ms(905)), "window 1 is full: retry at its end, 2000ms"})
	cases = append(cases, fw, sl)

	// docs/algorithms.md, worked example 2: leaky-bucket 4 per 1s (D = 250ms), B = 4.
	lb := handCase{name: "spec7.2 leaky-bucket", algorithm: "leaky-bucket", params: policy(4, time.Second, 4), steps: []step{
		{0, 1, acc(), "empty queue: released at once, TAT 250ms"},
		{0, 1, del(ms(250)), "one ahead: released at 250ms"},
		{0, 1, del(ms(500)), "two ahead"},
		{0, 1, del(ms(750)), "three ahead: the queue holds B = 4, TAT 1000ms"},
		{0, 1, rej(ms(250)), "TAT + D - t = 1250 > B*D = 1000: 250ms too early"},
		{ms(100), 1, rej(ms(150)), "1000 + 250 - 100 = 1150 > 1000"},
		{ms(600), 1, del(ms(400)), "released at TAT 1000ms, then TAT 1250ms"},
		{ms(1700), 1, acc(), "the queue emptied at 1250ms"},
	}}
	gc := handCase{name: "spec7.2 gcra", algorithm: "gcra", params: policy(4, time.Second, 4), steps: []step{
		{0, 1, acc(), "B = 4 pass at once"}, {0, 1, acc(), ""}, {0, 1, acc(), ""}, {0, 1, acc(), "TAT 1000ms"},
		{0, 1, rej(ms(250)), "TAT + T - t - B*T = 1000 + 250 - 0 - 1000"},
		{ms(100), 1, rej(ms(150)), "1000 + 250 - 100 - 1000"},
		{ms(600), 1, acc(), "1000 + 250 - 600 = 650 <= 1000: no delay, TAT 1250ms"},
		{ms(1700), 1, acc(), "TAT in the past"},
	}}
	tb := gc
	tb.name, tb.algorithm = "spec7.2 token-bucket", "token-bucket"
	cases = append(cases, lb, gc, tb)

	// docs/algorithms.md, worked example 3: nginx rate=10r/s burst=5 nodelay.
	ng := policy(10, time.Second, 10)
	ng.NginxBurst, ng.NginxBurstSet, ng.Nodelay = 5, true, true
	n3 := handCase{name: "spec7.3 nginx nodelay", algorithm: "nginx", params: ng, steps: []step{
		{0, 1, acc(), "first request: a new node, excess 0"},
		{0, 1, acc(), "excess 1000"}, {0, 1, acc(), "2000"}, {0, 1, acc(), "3000"}, {0, 1, acc(), "4000"},
		{0, 1, acc(), "excess 5000 = burst*1000: still fits"},
		{0, 1, rej(ms(100)), "6000 > 5000; fits at last + ceil((5000 + 1000 - 5000)*1000/10000) = 100ms"},
		{0, 1, rej(ms(100)), "the same"},
		{ms(50), 1, rej(ms(50)), "5000 - 10000*50/1000 + 1000 = 5500 > 5000"},
		{ms(100), 1, acc(), "5000 - 1000 + 1000 = 5000: fits, last 100ms"},
		{ms(150), 1, rej(ms(50)), "5000 - 500 + 1000 = 5500; fits at 100 + 100 = 200ms"},
		{ms(250), 1, acc(), "5000 - 1500 + 1000 = 4500"},
	}}
	ngd := policy(10, time.Second, 10)
	ngd.NginxBurst, ngd.NginxBurstSet, ngd.NginxDelay = 5, true, 2
	n4 := handCase{name: "nginx delay=2", algorithm: "nginx", params: ngd, steps: []step{
		{0, 1, acc(), "a new node"},
		{0, 1, acc(), "excess 1000 <= delay*1000"},
		{0, 1, acc(), "excess 2000 <= 2000"},
		{0, 1, del(ms(100)), "(3000 - 2000)*1000/10000 = 100ms"},
		{0, 2, del(ms(300)), "cost 2 counts as two: excess 5000, (5000-2000)*1000/10000"},
		{0, 7, rej(-1), "cost 7 > burst + 1: never"},
		{ms(2), 1, rej(ms(98)), "5000 - 20 + 1000 = 5980 > 5000; fits at ceil(1000*1000/10000) = 100ms"},
	}}
	cases = append(cases, n3, n4)

	// sliding-window: 10 per 1s, five requests at 500ms (window 0), then
	// at 1500ms (window 1, e = 500ms) the previous window weighs half.
	sw := handCase{name: "sliding-window weights", algorithm: "sliding-window", params: policy(10, time.Second, 10)}
	for i := 0; i < 5; i++ {
		sw.steps = append(sw.steps, step{ms(500), 1, acc(), "window 0"})
	}
	for i := 0; i < 7; i++ {
		sw.steps = append(sw.steps, step{ms(1500), 1, acc(), "5*(1000-500) + (cur+1)*1000 <= 10*1000 for cur <= 6"})
	}
	sw.steps = append(sw.steps,
		step{ms(1500), 1, rej(ms(100)), "cur 7: fits once 5*(1000-e) <= (10-7-1)*1000, e >= 600ms"},
		step{ms(1600), 1, acc(), "5*400 + 8*1000 = 10000"},
		step{ms(1600), 3, rej(ms(400 + 125)), "cur 8 + 3 > 10 in window 1; in window 2 prev = 8: 8*(1000-e') <= (10-3)*1000 from e' = 1000 - floor(7000/8) = 125ms"},
	)
	swc := policy(10, time.Second, 10)
	swc.CountRejected = true
	swr := handCase{name: "sliding-window count-rejected", algorithm: "sliding-window", params: swc}
	swr.steps = append(swr.steps, sw.steps[:12]...)
	swr.steps = append(swr.steps, step{ms(1500), 1, rej(ms(300)), "counted: cur 8, 5*(1000-e) <= (10-8-1)*1000 from e = 800ms"})
	cases = append(cases, sw, swr)

	// token-bucket with max-delay: 1 per 1s, B 1, max-delay 1.5s.
	tbd := policy(1, time.Second, 1)
	tbd.MaxDelay = 1500 * time.Millisecond
	cases = append(cases, handCase{name: "token-bucket max-delay", algorithm: "token-bucket", params: tbd, steps: []step{
		{0, 1, acc(), "the bucket's one token"},
		{0, 1, del(time.Second), "in debt: its token drips in after 1s <= 1.5s"},
		{0, 1, rej(500 * time.Millisecond), "would wait 2s > 1.5s: admissible 0.5s later"},
		{0, 2, rej(-1), "cost 2 > B"},
	}})

	// gcra where W/L is not whole ns: 3 per 1s, B 1, T = 333333333.33ns.
	cases = append(cases, handCase{name: "gcra 3/s exact", algorithm: "gcra", params: policy(3, time.Second, 1), steps: []step{
		{0, 1, acc(), "TAT 333333333 1/3 ns"},
		{0, 1, rej(333333334), "rounded up: never early"},
		{333333334, 1, acc(), "max(TAT, t) = t: TAT 666666667 1/3 ns"},
		{666666666, 1, rej(2), "1 1/3 ns early, rounded up"},
		{666666667, 1, rej(1), "1/3 ns early: still a whole ns to wait"},
		{666666668, 1, acc(), "conforms: TAT 1000000001 1/3 ns"},
		{time.Second, 1, rej(2), "TAT is 1 1/3 ns ahead of t, with B = 1 no slack: wait 2ns"},
	}})

	// concurrency: max 2, service 100ms.
	cc := policy(10, time.Second, 10)
	cc.Max, cc.Service = 2, 100*time.Millisecond
	cases = append(cases, handCase{name: "concurrency", algorithm: "concurrency", params: cc, steps: []step{
		{0, 1, acc(), "in flight until 100ms"},
		{ms(10), 1, acc(), "until 110ms"},
		{ms(20), 1, rej(ms(80)), "two in flight: the first completes at 100ms"},
		{ms(100), 1, acc(), "the first completed at exactly 100ms: no longer counts"},
		{ms(100), 2, rej(ms(100)), "two in flight (until 110 and 200ms): both must complete"},
		{ms(100), 3, rej(-1), "cost 3 > max 2"},
	}})

	// sliding-log with costs: 5 per 1s.
	cases = append(cases, handCase{name: "sliding-log costs", algorithm: "sliding-log", params: policy(5, time.Second, 5), steps: []step{
		{0, 3, acc(), "3 of 5"},
		{ms(100), 2, acc(), "5 of 5"},
		{ms(200), 3, rej(ms(800)), "3 must leave: the 0ms entry's 3 units, at 1000ms"},
		{ms(200), 1, rej(ms(800)), "1 must leave: the oldest, at 1000ms"},
		{ms(1000), 3, acc(), "the 0ms entry left at 1000ms: 2 + 3"},
		{ms(1000), 6, rej(-1), "cost 6 > 5"},
	}})
	slc := policy(2, time.Second, 2)
	slc.CountRejected = true
	cases = append(cases, handCase{name: "sliding-log count-rejected", algorithm: "sliding-log", params: slc, steps: []step{
		{0, 1, acc(), "1 of 2"},
		{0, 5, rej(-1), "cost 5 > 2: never, but logged as L+1 = 3"},
		{ms(500), 1, rej(ms(500)), "4 units count, logged too (5): the 4th oldest leaves at 1000ms"},
		{ms(1000), 1, acc(), "only the 500ms unit counts"},
	}})
	fwc := policy(2, time.Second, 2)
	fwc.CountRejected = true
	cases = append(cases, handCase{name: "fixed-window count-rejected", algorithm: "fixed-window", params: fwc, steps: []step{
		{0, 1, acc(), ""}, {ms(1), 1, acc(), "window full"},
		{ms(2), 1, rej(ms(998)), "counted: 3"},
		{ms(999), 3, rej(-1), "cost 3 > 2"},
		{time.Second, 2, acc(), "window 1 starts empty"},
	}})
	return cases
}

// TestHandWorked drives each script directly with the calling convention
// on hand-worked cases (docs/algorithms.md's worked examples and others), and
// holds the Go limiter to the same expectations, so that the cases are the
// Go rule's and the script follows it.
func TestHandWorked(t *testing.T) {
	_, c := startRedis(t)
	for _, hc := range handCases() {
		t.Run(hc.name, func(t *testing.T) {
			k := newCaller(t, c, hc.algorithm, ClockArg, hc.params)
			lim, err := algorithms.New(hc.algorithm, hc.params)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range hc.steps {
				if got := lim.Decide(s.at, 0, s.cost); got != s.want {
					t.Fatalf("step %d (at %v cost %d: %s): Go %+v, want %+v", i+1, s.at, s.cost, s.why, got, s.want)
				}
				if got := k.decide(s.at, s.cost); got != s.want {
					t.Fatalf("step %d (at %v cost %d: %s): Lua %+v, want %+v", i+1, s.at, s.cost, s.why, got, s.want)
				}
			}
		})
	}
}
