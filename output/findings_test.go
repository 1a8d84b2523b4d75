package output

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/sim"
)

func TestFindingsDoubleBurst(t *testing.T) {
	want := []string{
		"fixed-window and concurrency let 20 requests through in 1s starting at 900ms: 2.0x the limit of 10 per 1s.",
		"sliding-log, sliding-window, leaky-bucket and nginx held every 1s interval to the limit of 10.",
		"leaky-bucket and nginx delayed the most requests: 10 each, by up to 900ms.",
		"sliding-log and sliding-window rejected the most requests (10), fixed-window and concurrency the fewest (0).",
	}
	checkFindings(t, doubleBurst(), want)
	// a window report.windows named is an observation window: no sentence
	// holds it to a limit, named or not
	r := doubleBurst()
	r.NamedWindowsNs = []int64{s, 100 * ms}
	checkFindings(t, r, want)
}

// TestFindingsRetryStorm: 40 keys. No key went past its 100 per minute
// (the key peaks are 12 to 30), so no peak sentence; three algorithms kept
// every key's 6s to 10 too (ratios 0.8, 0.3 and 1.0). What reached the
// backend is said of every key together, as counts.
func TestFindingsRetryStorm(t *testing.T) {
	want := []string{
		"Every algorithm held every 1m interval of every key to the limit of 100.",
		"token-bucket-b200 let the most reach the backend, all 40 keys together: 250 requests in 1m starting at 1m0.5s.",
		"sliding-log-strict the fewest: 100 requests in 1m starting at 0.",
		"sliding-log-strict drew the largest herd of attempts: 420 attempts in 6s starting at 1m, 1050 retries, 300 requests gave up.",
		"gcra-shaping drew the smallest: 60 attempts in 6s starting at 2m30s, 300 retries, 50 requests gave up.",
		"gcra-shaping delayed the most requests: 350, by up to 2s.",
		"sliding-log-strict rejected the most attempts (1350), gcra-shaping the fewest (350).",
	}
	checkFindings(t, retryStorm(), want)
}

// TestFindingsReplay: 1753 keys, one of which sent all 103 requests of the
// busiest second, 1.03x its limit of 100.
func TestFindingsReplay(t *testing.T) {
	want := []string{
		"sliding-window let one key through at 1.03x its limit of 100 per 1s: 203.0.113.7, 103 requests in 1s starting at 2024-05-01T12:00:00.25Z.",
		"No algorithm held every 1s interval of every key to the limit of 100.",
		"sliding-window let the most reach the backend, all 1753 keys together: 103 requests in 1s starting at 2024-05-01T12:00:00.25Z.",
	}
	checkFindings(t, replayed(), want)
}

// TestFindingsHoldOneKeyToTheLimit: with several keys, a sentence that
// speaks of a limit (or a ratio to one) speaks of one key, whatever the
// figures: every key together is held against no limit. The aggregate
// peaks of the reports are made far above the limit to tempt it.
func TestFindingsHoldOneKeyToTheLimit(t *testing.T) {
	for _, r := range []*sim.Report{retryStorm(), replayed()} {
		for i := range r.Results {
			for j := range r.Results[i].Peaks {
				p := &r.Results[i].Peaks[j]
				*p = peak(r.Limit, p.WindowNs, 1000*r.Limit.Rate, p.StartNs)
			}
		}
		for _, f := range Findings(r) {
			if (strings.Contains(f, "limit") || strings.Contains(f, "x ")) && !strings.Contains(f, "key") {
				t.Errorf("%s: %q holds a figure of every key against the limit", r.Scenario, f)
			}
			if strings.Contains(f, "keys together") && strings.Contains(f, "limit") {
				t.Errorf("%s: %q", r.Scenario, f)
			}
		}
	}
}

// TestFindingsLongPeriod: two rows of the double burst limited to 864,000
// a day (the same 10 a second on average) let 20 through in a second, and
// a day's limit promises nothing of a second: the peak and held sentences
// leave them out (the highest ratio is then the token buckets' 11 in a
// second, 1.1x), and one sentence names them with their period. What is
// not about the peak is unchanged.
func TestFindingsLongPeriod(t *testing.T) {
	r := doubleBurst()
	day := sim.Limit{Rate: 864000, PerNs: int64(24 * time.Hour), Burst: 10}
	for i := range r.Results {
		res := &r.Results[i]
		if res.Label != "fixed-window" && res.Label != "concurrency" {
			continue
		}
		res.Limit = day
		for j := range res.Peaks {
			p := &res.Peaks[j]
			*p = peak(day, p.WindowNs, p.Count, p.StartNs)
		}
	}
	want := []string{
		"token-bucket, gcra and x-time-rate let 11 requests through in 1s starting at 900ms: 1.1x the limit of 10 per 1s.",
		"sliding-log, sliding-window, leaky-bucket and nginx held every 1s interval to the limit of 10.",
		"fixed-window's limit is per 1d and concurrency's per 1d, longer than 1s: their 1s peaks are not held against them above (report.windows can add their periods).",
		"leaky-bucket and nginx delayed the most requests: 10 each, by up to 900ms.",
		"sliding-log and sliding-window rejected the most requests (10), fixed-window and concurrency the fewest (0).",
	}
	checkFindings(t, r, want)

	// the scenario's own limit is held over its own window only, wherever
	// report.windows lists it: with 100ms first, the findings still hold
	// the 1s peaks, and none the 100ms ones
	r = doubleBurst()
	r.NamedWindowsNs = []int64{100 * ms, s}
	for i := range r.Results {
		ps := r.Results[i].Peaks
		ps[0], ps[1] = ps[1], ps[0]
	}
	for _, f := range Findings(r) {
		require.NotContains(t, f, "longer than", f)
		require.NotContains(t, f, "100ms", f)
	}
	require.Contains(t, Findings(r)[0], "the limit of 10 per 1s")
}

// TestFindingsFollowFigures changes figures of the double burst and checks
// that the sentences change with them: nothing is canned.
func TestFindingsFollowFigures(t *testing.T) {
	t.Run("peak", func(t *testing.T) {
		r := doubleBurst()
		l := r.Limit
		r.Results[0].Peaks[0] = peak(l, s, 15, 950*ms)  // fixed-window
		r.Results[7].Peaks[0] = peak(l, s, 12, 1000*ms) // concurrency
		r.Results[1].Peaks[1] = peak(l, 100*ms, 1, 0)   // sliding-log holds 100ms too
		f := Findings(r)
		if want := "fixed-window let 15 requests through in 1s starting at 950ms: 1.5x the limit of 10 per 1s."; f[0] != want {
			t.Errorf("peak finding\n got %q\nwant %q", f[0], want)
		}
		if want := "sliding-log, sliding-window, leaky-bucket and nginx held every 1s interval to the limit of 10."; f[1] != want {
			t.Errorf("held finding\n got %q\nwant %q", f[1], want)
		}
	})
	t.Run("one key over its limit", func(t *testing.T) {
		// retry-storm's fixed-window and sliding-log-strict let one key
		// through at 1.5x in a minute: the same key at the same start,
		// one sentence; gcra-shaping's 120 is another key's
		r := retryStorm()
		l := r.Limit
		r.Results[0].KeyPeaks[0] = keyPeak(l, 60*s, 150, "client-9", 60*s)
		r.Results[1].KeyPeaks[0] = keyPeak(l, 60*s, 150, "client-9", 60*s)
		r.Results[3].KeyPeaks[0] = keyPeak(l, 60*s, 120, "client-4", 0)
		f := Findings(r)
		want := []string{
			"fixed-window and sliding-log-strict let one key through at 1.5x its limit of 100 per 1m: client-9, 150 requests in 1m starting at 1m.",
			"token-bucket-b200 and x-time-rate-shaping held every 1m interval of every key to the limit of 100.",
			"token-bucket-b200 let the most reach the backend, all 40 keys together: 250 requests in 1m starting at 1m0.5s.",
		}
		if !slices.Equal(f[:3], want) {
			t.Errorf("got %q\nwant %q", f[:3], want)
		}
	})
	t.Run("no peak over the limit", func(t *testing.T) {
		r := doubleBurst()
		for i := range r.Results {
			for j := range r.Results[i].Peaks {
				p := &r.Results[i].Peaks[j]
				*p = peak(r.Limit, p.WindowNs, 1, 0)
			}
		}
		f := Findings(r)
		if strings.Contains(strings.Join(f, "\n"), " let ") {
			t.Errorf("a peak finding although no ratio is above 1.0: %q", f)
		}
		if want := "Every algorithm held every 1s interval to the limit of 10."; f[0] != want {
			t.Errorf("got %q, want %q", f[0], want)
		}
	})
	t.Run("one delays", func(t *testing.T) {
		r := retryStorm()
		r.Results[4].Delayed = 0
		checkFindings(t, r, []string{
			"Every algorithm held every 1m interval of every key to the limit of 100.",
			"token-bucket-b200 let the most reach the backend, all 40 keys together: 250 requests in 1m starting at 1m0.5s.",
			"sliding-log-strict the fewest: 100 requests in 1m starting at 0.",
			"sliding-log-strict drew the largest herd of attempts: 420 attempts in 6s starting at 1m, 1050 retries, 300 requests gave up.",
			"gcra-shaping drew the smallest: 60 attempts in 6s starting at 2m30s, 300 retries, 50 requests gave up.",
			"Only gcra-shaping delayed requests: 350, by up to 2s.",
			"sliding-log-strict rejected the most attempts (1350), gcra-shaping the fewest (350).",
		})
	})
	t.Run("delays", func(t *testing.T) {
		r := doubleBurst()
		r.Results[6].Delayed, r.Results[6].Accepted = 3, 8 // nginx
		r.Results[5].DelayNs.Max = 1250 * ms               // leaky-bucket
		want := "leaky-bucket delayed the most requests: 10, by up to 1.25s."
		if f := Findings(r); !slices.Contains(f, want) {
			t.Errorf("missing %q in\n%s", want, strings.Join(f, "\n"))
		}
		for i := range r.Results {
			r.Results[i].Delayed = 0
		}
		for _, f := range Findings(r) {
			if strings.Contains(f, "delayed") {
				t.Errorf("a delay finding without delays: %q", f)
			}
		}
	})
	t.Run("rejections equal", func(t *testing.T) {
		r := doubleBurst()
		for i := range r.Results {
			r.Results[i].Rejected = 4
		}
		for _, f := range Findings(r) {
			if strings.Contains(f, "rejected") {
				t.Errorf("a rejection finding although every algorithm rejected the same: %q", f)
			}
		}
	})
	t.Run("empty", func(t *testing.T) {
		if f := Findings(&sim.Report{}); len(f) != 0 {
			t.Errorf("findings of an empty report: %q", f)
		}
		if f := Findings(nil); len(f) != 0 {
			t.Errorf("findings of a nil report: %q", f)
		}
	})
}

func checkFindings(t *testing.T, r *sim.Report, want []string) {
	t.Helper()
	got := Findings(r)
	if !slices.Equal(got, want) {
		t.Errorf("Findings:\n got %q\nwant %q", got, want)
	}
}

// TestLimitedKeysGrouped: results whose lists of limited keys are the same
// share one line, named together as the findings name them (before,
// token-bucket, gcra, leaky-bucket, nginx and x-time-rate repeated the same
// list); the lists line up after the longest label of a result alone.
func TestLimitedKeysGrouped(t *testing.T) {
	same := sim.KeyReport{Limited: 8, Top: []sim.KeyCount{{Key: "user-0", Offered: 2341, Rejected: 2022}}}
	rep := &sim.Report{Keys: 100}
	for _, r := range []struct {
		label string
		keys  sim.KeyReport
	}{
		{"fixed-window", sim.KeyReport{Limited: 13, Top: []sim.KeyCount{{Key: "user-0", Offered: 2341, Rejected: 2041}}}},
		{"token-bucket", same},
		{"gcra", same},
		{"concurrency", sim.KeyReport{}},
		{"nginx", same},
		{"sliding-window", sim.KeyReport{Limited: 16, Top: []sim.KeyCount{{Key: "user-0", Offered: 2341, Rejected: 2070}, {Key: "a", Offered: 1, Rejected: 1}}}},
		{"none", sim.KeyReport{}},
	} {
		rep.Results = append(rep.Results, sim.Result{Label: r.label, Keys: r.keys})
	}
	want := []string{
		"fixed-window    13 of 100 keys: user-0 (2341 requests, 2041 rejected), ...",
		"token-bucket, gcra and nginx  8 of 100 keys: user-0 (2341 requests, 2022 rejected), ...",
		"concurrency and none  no key",
		"sliding-window  16 of 100 keys: user-0 (2341 requests, 2070 rejected), a (1 request, 1 rejected), ...",
	}
	if got := LimitedKeys(rep); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// a group's names shorter than a label alone are padded to it
	rep.Results = []sim.Result{{Label: "a", Keys: same}, {Label: "b", Keys: same}, {Label: "long-label"}}
	want = []string{
		"a and b     8 of 100 keys: user-0 (2341 requests, 2022 rejected), ...",
		"long-label  no key",
	}
	if got := LimitedKeys(rep); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// no result alone: the lists line up after the longest group's names
	rep.Results = []sim.Result{{Label: "a", Keys: same}, {Label: "b", Keys: same}, {Label: "c"}, {Label: "dd"}}
	want = []string{
		"a and b   8 of 100 keys: user-0 (2341 requests, 2022 rejected), ...",
		"c and dd  no key",
	}
	if got := LimitedKeys(rep); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindingsLimitsOfTheirOwnKeys: an all-of row whose limits count by
// keys of their own (an address, a consumer) is not held, by the request's
// key, against the scenario's limit: that key is not what its limits
// count. Its limits' busiest keys have their own section.
func TestFindingsLimitsOfTheirOwnKeys(t *testing.T) {
	r := replayed()
	r.Results[0].LimitPeaks = []sim.LimitKeyPeak{{Limit: "per address", WindowNs: int64(s), Count: 3, Key: "203.0.113.7", Ratio: 1}}
	checkFindings(t, r, []string{
		"sliding-window let the most reach the backend, all 1753 keys together: 103 requests in 1s starting at 2024-05-01T12:00:00.25Z.",
	})
}
