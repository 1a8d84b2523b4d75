package output

import (
	"math"
	"testing"
	"time"

	"github.com/ratesim/ratesim/sim"
)

func TestFormatDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{1, "1ns"},
		{999, "999ns"},
		{1500, "1.5µs"},
		{1001, "1.001µs"},
		{1000999, "1ms"}, // cut at three decimals, never rounded up
		{750 * time.Millisecond, "750ms"},
		{333333333, "333.333ms"},           // integer arithmetic, no float rounding
		{999999999, "999.999ms"},           // an instant never shown later than it is
		{1090 * time.Millisecond, "1.09s"}, // trailing zeros trimmed
		{1898594293, "1.898s"},
		{29998412554, "29.998s"},
		{1999999999, "1.999s"},
		{time.Second + 1, "1s"},
		{time.Second + time.Millisecond, "1.001s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{2*time.Minute + 30*time.Second, "2m30s"},
		{time.Minute + 500*time.Millisecond, "1m0.5s"},
		{time.Minute + 50*time.Millisecond, "1m"},
		{time.Hour, "1h"},
		{time.Hour + 30*time.Minute, "1h30m"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{2*time.Hour + 30*time.Second, "2h0m30s"},
		{24 * time.Hour, "1d"},
		{25 * time.Hour, "1d1h"},
		{24*time.Hour + time.Second, "1d0h0m1s"},
		{660*time.Hour + 49*time.Minute + 49808395000, "27d12h49m49.8s"}, // a 27-day trace
		{-750 * time.Millisecond, "-750ms"},
		{-(25 * time.Hour), "-1d1h"},
		{math.MaxInt64, "106751d23h47m16.8s"},
		{math.MinInt64, "-106751d23h47m16.8s"},
	} {
		if got := FormatDuration(tt.d); got != tt.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", int64(tt.d), got, tt.want)
		}
	}
}

func TestFormatRatio(t *testing.T) {
	for _, tt := range []struct {
		r    float64
		want string
	}{
		{0, "0.0x"},
		{1, "1.0x"},
		{2, "2.0x"},
		{10, "10.0x"},
		{1.5, "1.5x"},
		{4.0 / 3, "1.33x"},
		{1.1, "1.1x"},
		{1.03, "1.03x"},
		{2.999, "3.0x"},
	} {
		if got := FormatRatio(tt.r); got != tt.want {
			t.Errorf("FormatRatio(%v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestFormatPercent(t *testing.T) {
	for _, tt := range []struct {
		num, den int64
		want     string
	}{
		{20, 20, "100.0"},
		{11, 20, "55.0"},
		{2, 3, "66.7"},
		{1, 3, "33.3"},
		{1, 8, "12.5"}, // half: 12.5 exactly
		{1, 16, "6.3"}, // 6.25 rounds half away from zero
		{0, 5, "0.0"},
		{0, 0, "-"},
		{math.MaxInt64, math.MaxInt64, "100.0"},
	} {
		if got := formatPercent(tt.num, tt.den); got != tt.want {
			t.Errorf("formatPercent(%d, %d) = %q, want %q", tt.num, tt.den, got, tt.want)
		}
	}
}

func TestLimitPer(t *testing.T) {
	for _, tt := range []struct {
		l    sim.Limit
		v    int64
		want string
	}{
		{sim.Limit{Rate: 10, PerNs: s}, s, "10"},
		{sim.Limit{Rate: 10, PerNs: s}, 100 * ms, "1"},
		{sim.Limit{Rate: 3, PerNs: s}, 100 * ms, "0.3"},
		{sim.Limit{Rate: 100, PerNs: 60 * s}, 6 * s, "10"},
		{sim.Limit{Rate: 10, PerNs: 3 * s}, s, "3.33"},
		{sim.Limit{Rate: 1, PerNs: 3600 * s}, 100 * ms, "0.000028"},
	} {
		if got := limitPer(tt.l, tt.v); got != tt.want {
			t.Errorf("limitPer(%+v, %d) = %q, want %q", tt.l, tt.v, got, tt.want)
		}
	}
}

func TestFormatInstant(t *testing.T) {
	if got := formatInstant(900 * ms); got != "900ms" {
		t.Errorf("formatInstant(900ms) = %q", got)
	}
	if got, want := formatInstant(1714564800*s+250*ms), "2024-05-01T12:00:00.25Z"; got != want {
		t.Errorf("formatInstant(replayed) = %q, want %q", got, want)
	}
}
