package traffic

import (
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSizeByHand holds each source's size to figures worked out by hand.
func TestSizeByHand(t *testing.T) {
	withEnd := func(c Common, end time.Duration) Common { c.End = end; return c }
	withStart := func(c Common, start time.Duration) Common { c.Start = start; return c }
	cases := []struct {
		name     string
		src      Source
		end, v   time.Duration
		want     Size
		accuracy Accuracy
	}{
		// 3/s for 10s: i with floor(i*1s/3) < 10s, i < 30: 30 requests;
		// a 1s window holds ceil(1s*3/1s) + 1 = 4 at most (instants 0,
		// 333333333, 666666666 and 1s bunch at the edges); gaps of
		// 333333333 ns and, one in 3, 333333334: 2*ceil(4/3) + 4 = 8
		// runs at most, more than its 4 instants
		{"steady 3/s 10s", &Steady{Common: one, Rate: Rate{3, time.Second}}, 10 * time.Second, time.Second,
			Size{Requests: 30, Keys: 1, Window: 4, Instants: 4, Runs: 4}, Exact},
		// the source's own end (2.5s) comes first: i*1s/3 < 2.5s, i < 7.5:
		// 8 requests, over 4 clients
		{"steady end", &Steady{Common: withEnd(clients(4), 2500*time.Millisecond), Rate: Rate{3, time.Second}}, 10 * time.Second, time.Second,
			Size{Requests: 8, Keys: 4, Window: 4, Instants: 4, Runs: 4}, Exact},
		// 1e9/s for 1000h: 3.6e15 requests, one a ns; a 1s window holds
		// 1e9+1 requests but only 1e9 distinct instants (ns), evenly
		// spaced: the first, one run and one being added to, 3 entries
		{"steady 1e9/s 1000h", &Steady{Common: one, Rate: Rate{1e9, time.Second}}, 1000 * time.Hour, time.Second,
			Size{Requests: 3_600_000_000_000_000, Keys: 1, Window: 1e9 + 1, Instants: 1e9, Runs: 3}, Exact},
		// the largest rate: 1s*MaxInt64/1s requests in a second, past any
		// int64 once multiplied: unbounded
		{"steady max rate", &Steady{Common: one, Rate: Rate{math.MaxInt64, time.Second}}, time.Second, time.Second,
			Size{Requests: math.MaxInt64, Keys: 1, Window: math.MaxInt64, Instants: 1e9, Runs: 1e9}, Exact},
		// 10/s on 1s, off 1s, for 5s: phases at 0, 2s, 4s: 10 + 10 + 10
		// (the last phase's 1s on fits before 5s)
		{"onoff", &OnOff{Common: one, Rate: Rate{10, time.Second}, On: time.Second, Off: time.Second}, 5 * time.Second, time.Second,
			Size{Requests: 30, Keys: 1, Window: 11, Instants: 11, Runs: 11}, Exact},
		// cut at 4.5s: the third phase sends 0, 100ms, ..., 400ms: 5
		{"onoff cut", &OnOff{Common: one, Rate: Rate{10, time.Second}, On: time.Second, Off: time.Second}, 4500 * time.Millisecond, time.Second,
			Size{Requests: 25, Keys: 1, Window: 11, Instants: 11, Runs: 11}, Exact},
		// 5 requests per client over 1s, 3 clients: 15; a 100ms window
		// holds ceil(100ms*5/1s) + 1 = 2 instants, 6 requests (and the
		// 200ms between instants make a run: at most 3 entries, 2 here)
		{"burst", &Burst{Common: clients(3), At: time.Second, Count: 5, Over: time.Second}, 10 * time.Second, 100 * time.Millisecond,
			Size{Requests: 15, Keys: 3, Window: 6, Instants: 2, Runs: 2}, Exact},
		// cut at 1.5s: i*200ms < 500ms, i < 2.5: 3 per client
		{"burst cut", &Burst{Common: clients(3), At: time.Second, Count: 5, Over: time.Second}, 1500 * time.Millisecond, 100 * time.Millisecond,
			Size{Requests: 9, Keys: 3, Window: 6, Instants: 2, Runs: 2}, Exact},
		// a burst at one instant: all 5 at 1s, one instant
		{"burst at once", &Burst{Common: one, At: time.Second, Count: 5}, 10 * time.Second, 100 * time.Millisecond,
			Size{Requests: 5, Keys: 1, Window: 5, Instants: 1, Runs: 1}, Exact},
		// 4 instants, one before Start (1s) and one at the end (3s): 2,
		// for each of 2 clients
		{"times", &Times{Common: withStart(clients(2), time.Second), At: []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}}, 3 * time.Second, time.Second,
			Size{Requests: 4, Keys: 2, Window: 4, Instants: 2, Runs: 2}, Exact},
		// from 0 to 10/s over 10s: Λ(t) = 10t²/(2*10) = t²/2 (t in s),
		// Λ(10s - 1ns) = 49.99...: requests 0..49, 50 of them; a 1s window
		// holds at most ceil(1s * 10/s) + 1 = 11
		{"ramp", &Ramp{Common: one, From: Rate{0, time.Second}, To: Rate{10, time.Second}, Until: 10 * time.Second}, 10 * time.Second, time.Second,
			Size{Requests: 50, Keys: 1, Window: 11, Instants: 11, Runs: 11}, Exact},
		// cut at 2s: Λ(2s - 1ns) = 1.99...: requests 0 and 1 (at 0 and
		// sqrt(2)s)
		{"ramp cut", &Ramp{Common: one, From: Rate{0, time.Second}, To: Rate{10, time.Second}, Until: 10 * time.Second}, 2 * time.Second, time.Second,
			Size{Requests: 2, Keys: 1, Window: 2, Instants: 2, Runs: 2}, Exact},
		// every 1s from 0 (k*1s), 2 requests a client at once, 3
		// clients, for 5s: occurrences 0..4, 5*2*3 = 30; a 1s window
		// touches 1/1 + 2 = 3 occurrences: 6 requests a client
		{"aligned", &Aligned{Common: clients(3), Every: time.Second, Count: 2}, 5 * time.Second, time.Second,
			Size{Requests: 30, Keys: 3, Window: 18, Instants: 6, Runs: 6}, Exact},
		// a rate of nothing sends nothing
		{"poisson zero", &Poisson{Common: one, Rate: Rate{0, time.Second}}, time.Second, time.Second,
			Size{Keys: 1}, Exact},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SizeOf(c.src, c.end, c.v)
			require.NoError(t, err)
			c.want.Accuracy = c.accuracy
			require.Equal(t, c.want, got)
		})
	}
}

// TestSizePoissonBound: 1000/s for 10s is 10,000 requests on average
// (gaps of m = 1ms, rounded to a ns: their mean is m); the variance of a
// gap is taken as at most 2m² (m² + m + 1/4 more than an exponential's,
// for the rounding), so the standard deviation of the count is
// sqrt(10s * 2m²/m³) = sqrt(20,000) = 141.4, and the bound 10,000 +
// 1,414.2 + 1, rounded up: 11,416. A run sends fewer.
func TestSizePoissonBound(t *testing.T) {
	src := &Poisson{Common: withEndOf(one, 10*time.Second), Rate: Rate{1000, time.Second}}
	got, err := SizeOf(src, 0, time.Second)
	require.NoError(t, err)
	require.Equal(t, Bound, got.Accuracy)
	require.InDelta(t, 11_416, got.Requests, 1)
	as, _ := openOne(t, src, 0)
	require.LessOrEqual(t, int64(len(as)), got.Requests)
	// far below a ns a gap, every gap rounds to 0: no end in time
	fast, err := SizeOf(&Poisson{Common: one, Rate: Rate{math.MaxInt64, time.Second}}, time.Second, time.Second)
	require.NoError(t, err)
	require.Equal(t, int64(Unbounded), fast.Requests)
}

func withEndOf(c Common, end time.Duration) Common { c.End = end; return c }

// TestSizeMatchesStreams holds every exact size to its stream: the
// requests it sends before the end, and the most in any window (brute
// force) never above Window, nor their distinct instants above Instants.
func TestSizeMatchesStreams(t *testing.T) {
	// every source ends by 8s, so that its stream ends
	one, two, three := withEndOf(one, 8*time.Second), withEndOf(clients(2), 8*time.Second), withEndOf(clients(3), 8*time.Second)
	srcs := []Source{
		&Steady{Common: three, Rate: Rate{7, time.Second}},
		&Steady{Common: one, Rate: Rate{3, 10 * time.Millisecond}},
		&OnOff{Common: one, Rate: Rate{13, time.Second}, On: 700 * time.Millisecond, Off: 300 * time.Millisecond},
		&Ramp{Common: one, From: Rate{20, time.Second}, To: Rate{3, time.Second}, Until: 6 * time.Second},
		&Ramp{Common: two, From: Rate{1, time.Second}, To: Rate{40, time.Second}, Until: 9 * time.Second},
		&Burst{Common: two, At: 300 * time.Millisecond, Count: 17, Over: 2 * time.Second},
		&Aligned{Common: two, Every: time.Second, Offset: -100 * time.Millisecond, Count: 4, Over: 50 * time.Millisecond},
		&Times{Common: one, At: []time.Duration{5, 5, 7, time.Second, 4 * time.Second}},
	}
	for _, end := range []time.Duration{3500 * time.Millisecond, 5 * time.Second, 7 * time.Second} {
		for _, v := range []time.Duration{100 * time.Millisecond, time.Second} {
			for i, src := range srcs {
				as, _ := openOne(t, src, 0)
				var kept []Arrival
				for _, a := range as {
					if a.At < end {
						kept = append(kept, a)
					}
				}
				got, err := SizeOf(src, end, v)
				require.NoError(t, err)
				require.Equal(t, Exact, got.Accuracy, "source %d", i)
				require.Equal(t, int64(len(kept)), got.Requests, "source %d to %v", i, end)
				most, instants := 0, 0
				for a := range kept {
					n, distinct := 0, map[time.Duration]bool{}
					for b := a; b < len(kept) && kept[b].At < kept[a].At+v; b++ {
						n++
						distinct[kept[b].At] = true
					}
					most, instants = max(most, n), max(instants, len(distinct))
				}
				require.LessOrEqual(t, int64(most), got.Window, "source %d to %v, window %v", i, end, v)
				require.LessOrEqual(t, int64(instants), got.Instants, "source %d to %v, window %v", i, end, v)
			}
		}
	}
}

// TestSizeReplay: a small trace is in the sample whole, its lines counted
// (a bound: the header is no request); a large one is about its size over
// its first lines' mean length, plain or gzipped, read no further.
func TestSizeReplay(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.csv")
	require.NoError(t, os.WriteFile(small, []byte("time,key\n1,a\n2,b\n3,c\n"), 0o644))
	got, err := SizeOf(&Replay{Path: small}, 0, time.Second)
	require.NoError(t, err)
	require.Equal(t, Size{Requests: 4, Keys: 4, Window: 4, Instants: 4, Runs: 4, Accuracy: Bound}, got)

	// 100,000 lines of 20 bytes (19 and a newline): 2,000,000 bytes
	line := "1700000000,client-01\n"[1:]
	require.Len(t, line, 20)
	big := strings.Repeat(line, 100_000)
	plain := filepath.Join(dir, "big.csv")
	require.NoError(t, os.WriteFile(plain, []byte(big), 0o644))
	got, err = SizeOf(&Replay{Path: plain}, 0, time.Second)
	require.NoError(t, err)
	require.Equal(t, Size{Requests: 100_000, Keys: 100_000, Window: 100_000, Instants: 100_000, Runs: 100_000, Accuracy: Sampled}, got)

	// key-field none: one key
	got, err = SizeOf(&Replay{Path: plain, KeyField: "none"}, 0, time.Second)
	require.NoError(t, err)
	require.Equal(t, int64(1), got.Keys)

	gz := filepath.Join(dir, "big.csv.gz")
	f, err := os.Create(gz)
	require.NoError(t, err)
	w := gzip.NewWriter(f)
	_, err = w.Write([]byte(big))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	got, err = SizeOf(&Replay{Path: gz}, 0, time.Second)
	require.NoError(t, err)
	require.Equal(t, Sampled, got.Accuracy)
	// a repeated line compresses a thousandfold: the ratio from the
	// sample's share of the file is rough, within a factor of two
	require.InDelta(t, 100_000, got.Requests, 50_000)

	_, err = SizeOf(&Replay{Path: filepath.Join(dir, "missing.csv")}, 0, time.Second)
	require.Error(t, err)
}
