package scenarios

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"0s", 0},
		{"0.0", 0}, // zero needs no unit in any spelling
		{"-0s", 0},
		{"1ns", 1},
		{"1.5s", 1500 * time.Millisecond}, // exact: 1500000000, no float
		{"0.25us", 250},
		{"0.25µs", 250}, // U+00B5, as Duration.String writes it
		{"0.25μs", 250}, // U+03BC
		{"900ms", 900 * time.Millisecond},
		{"1m30s", 90 * time.Second},
		{"1h0m0s", time.Hour},
		{"1.000000000000000000000s", time.Second}, // trailing zeros are no precision
		{"0.000000001s", 1},
		{"0.0001h", 360 * time.Millisecond},
		{"0.0000000000025h", 9}, // 13 digits after trimming is the most a whole ns can take
		{"2562047h", 2562047 * time.Hour},
		{"2562047h47m16.854775807s", math.MaxInt64},
		{"+3s", 3 * time.Second},
		{".5s", 500 * time.Millisecond},
		{"1h1h", 2 * time.Hour},
	} {
		got, err := ParseDuration(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		// what Duration.String writes parses back to the same value
		again, err := ParseDuration(got.String())
		require.NoError(t, err, got.String())
		require.Equal(t, got, again)
	}
}

func TestParseDurationErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `"": want a duration like 900ms, 1.5s or 1m30s`},
		{"5", `"5": no unit (add one: ns, us, ms, s, m or h, e.g. 5s)`},
		{"1.5", `"1.5": no unit (add one: ns, us, ms, s, m or h, e.g. 1.5s)`},
		{"1s5", `"1s5": no unit (add one: ns, us, ms, s, m or h, e.g. 5s)`},
		{"-1s", `"-1s": want a duration >= 0`},
		{"5x", `"5x": unknown unit "x" (want ns, us, ms, s, m or h)`},
		{"5 s", `"5 s": unknown unit " s" (want ns, us, ms, s, m or h)`},
		{"s", `"s": want a duration like 900ms, 1.5s or 1m30s`},
		{".s", `".s": want a duration like 900ms, 1.5s or 1m30s`},
		{"0.5ns", `"0.5ns": not a whole number of nanoseconds`},
		{"0.0000000000001h", `"0.0000000000001h": not a whole number of nanoseconds`},
		{"1.00000000000000000001s", `"1.00000000000000000001s": not a whole number of nanoseconds`},
		{"2562048h", `"2562048h": out of range (at most 2562047h47m16.854775807s)`},
		{"2562047h47m16.854775808s", `"2562047h47m16.854775808s": out of range (at most 2562047h47m16.854775807s)`},
		{"99999999999999999999ns", `"99999999999999999999ns": out of range (at most 2562047h47m16.854775807s)`},
		{"9223372036854775807ns1ns", `"9223372036854775807ns1ns": out of range (at most 2562047h47m16.854775807s)`},
	} {
		_, err := ParseDuration(tc.in)
		require.EqualError(t, err, tc.want, tc.in)
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want traffic.Rate
	}{
		{"10/s", traffic.Rate{Count: 10, Per: time.Second}},
		{"600/m", traffic.Rate{Count: 600, Per: time.Minute}},
		{"5/100ms", traffic.Rate{Count: 5, Per: 100 * time.Millisecond}},
		{"3600/h", traffic.Rate{Count: 3600, Per: time.Hour}},
		{"10/2s", traffic.Rate{Count: 10, Per: 2 * time.Second}},
		{"7/m", traffic.Rate{Count: 7, Per: time.Minute}}, // kept as 7 per minute, never 0.1166/s
		{"1/1m30s", traffic.Rate{Count: 1, Per: 90 * time.Second}},
		{"1/ns", traffic.Rate{Count: 1, Per: 1}},
		{"3/us", traffic.Rate{Count: 3, Per: time.Microsecond}},
		{"9223372036854775807/h", traffic.Rate{Count: math.MaxInt64, Per: time.Hour}},
	} {
		got, err := ParseRate(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseRateErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10/x", `"10/x": unknown unit "x" (want 10/s, 600/m, 5/100ms)`},
		{"10", `"10": not a rate (want 10/s, 600/m, 5/100ms)`},
		{"", `"": not a rate (want 10/s, 600/m, 5/100ms)`},
		{"0/s", `"0/s": the count must be at least 1 (want 10/s, 600/m, 5/100ms)`},
		{"-1/s", `"-1/s": a negative rate (want 10/s, 600/m, 5/100ms)`},
		{"-5/100ms", `"-5/100ms": a negative rate (want 10/s, 600/m, 5/100ms)`},
		{"-/s", `"-/s": request count "-" is not a whole number (want 10/s, 600/m, 5/100ms)`},
		{"+5/s", `"+5/s": request count "+5" is not a whole number (want 10/s, 600/m, 5/100ms)`},
		{"1.5/s", `"1.5/s": request count "1.5" is not a whole number (want 10/s, 600/m, 5/100ms)`},
		{"/s", `"/s": request count "" is not a whole number (want 10/s, 600/m, 5/100ms)`},
		{"10/", `"10/": missing period after / (want 10/s, 600/m, 5/100ms)`},
		{"10/0s", `"10/0s": period "0s": want a period > 0`},
		{"10/2x", `"10/2x": period "2x": unknown unit "x" (want ns, us, ms, s, m or h)`},
		{"10/1.5ns", `"10/1.5ns": period "1.5ns": not a whole number of nanoseconds`},
		{"10/3000000h", `"10/3000000h": period "3000000h": out of range (at most 2562047h47m16.854775807s)`},
		{"9223372036854775808/s", `"9223372036854775808/s": request count 9223372036854775808 is out of range (want 10/s, 600/m, 5/100ms)`},
		{"10/s/s", `"10/s/s": unknown unit "s/s" (want 10/s, 600/m, 5/100ms)`},
	} {
		_, err := ParseRate(tc.in)
		require.EqualError(t, err, tc.want, tc.in)
	}
}

func TestParseFactor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want traffic.Fraction
	}{
		{"1", traffic.Fraction{Num: 1, Den: 1}},
		{"2", traffic.Fraction{Num: 2, Den: 1}},
		{"1.5", traffic.Fraction{Num: 3, Den: 2}},
		{"1.50", traffic.Fraction{Num: 3, Den: 2}},
		{"2.25", traffic.Fraction{Num: 9, Den: 4}},
		{"1.1", traffic.Fraction{Num: 11, Den: 10}},
		{"01.0", traffic.Fraction{Num: 1, Den: 1}},
		{"1.000000000000000001", traffic.Fraction{Num: 1000000000000000001, Den: 1000000000000000000}},
	} {
		got, msg := parseFactor(tc.in)
		require.Empty(t, msg, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{"0.5", "0", "", ".", "-2", "1e3", "1.5.5", "2x", "1.0000000000000000001", "9999999999999999999"} {
		_, msg := parseFactor(in)
		require.NotEmpty(t, msg, in)
	}
}
