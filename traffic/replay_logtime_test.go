package traffic

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReplayLogTimes: with format auto (and combined), the
// time inside a log's brackets may be CLF, ISO 8601 with a T or a space,
// with or without a fraction and a zone, or a Unix time in seconds,
// milliseconds or microseconds; the first lines say which.
func TestReplayLogTimes(t *testing.T) {
	// 2015-05-17T10:05:03Z and 1.5 s later
	s := 1431857103 * time.Second
	line := func(stamp string) string {
		return `1.2.3.4 - - [` + stamp + `] "GET / HTTP/1.1" 200 5 "-" "curl"` + "\n"
	}
	for _, tt := range []struct {
		name   string
		stamps [2]string
		want   [2]time.Duration
	}{
		{"CLF", [2]string{"17/May/2015:10:05:03 +0000", "17/May/2015:12:05:04 +0200"}, [2]time.Duration{s + 500*time.Millisecond, s + 1500*time.Millisecond}},
		{"ISO T, zone Z", [2]string{"2015-05-17T10:05:03Z", "2015-05-17T10:05:04.5Z"}, [2]time.Duration{s + 500*time.Millisecond, s + 1500*time.Millisecond}},
		{"ISO space, fraction, offset", [2]string{"2015-05-17 12:05:03.25+02:00", "2015-05-17 12:05:04.5+0200"}, [2]time.Duration{s + 250*time.Millisecond, s + 1500*time.Millisecond}},
		{"ISO space, a space before the zone", [2]string{"2015-05-17 10:05:03.000 +0000", "2015-05-17 10:05:04.500 +0000"}, [2]time.Duration{s, s + 1500*time.Millisecond}},
		{"ISO without zone (UTC)", [2]string{"2015-05-17T10:05:03", "2015-05-17T10:05:04.5"}, [2]time.Duration{s + 500*time.Millisecond, s + 1500*time.Millisecond}},
		{"Unix seconds", [2]string{"1431857103", "1431857104.5"}, [2]time.Duration{s + 500*time.Millisecond, s + 1500*time.Millisecond}},
		{"Unix milliseconds", [2]string{"1431857103250", "1431857104500"}, [2]time.Duration{s + 250*time.Millisecond, s + 1500*time.Millisecond}},
		{"Unix microseconds", [2]string{"1431857103250000", "1431857104500001"}, [2]time.Duration{s + 250*time.Millisecond, s + 1500*time.Millisecond + time.Microsecond}},
	} {
		for _, format := range []string{"auto", "combined"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				path := writeTrace(t, "a.log", line(tt.stamps[0])+line(tt.stamps[1]))
				got := replayAll(t, &Replay{Path: path, Format: format, Reorder: time.Minute})
				require.NoError(t, got.err)
				require.Equal(t, tt.want[:], got.at)
				require.Equal(t, int64(0), got.stats.Malformed)
			})
		}
	}

	t.Run("time-layout still wins", func(t *testing.T) {
		path := writeTrace(t, "a.log", line("2015/05/17 10h05m03")+line("2015/05/17 10h05m04"))
		got := replayAll(t, &Replay{Path: path, TimeLayout: "2006/01/02 15h04m05", Reorder: time.Minute})
		require.Equal(t, []time.Duration{s + 500*time.Millisecond, s + 1500*time.Millisecond}, got.at)
	})

	t.Run("unknown layout: the error lists what was tried", func(t *testing.T) {
		path := writeTrace(t, "a.log", line("2015/05/17 10h05m03")+line("2015/05/17 10h05m04"))
		_, err := (&Replay{Path: path, Reorder: time.Minute}).Open(NewKeys(), 0, 1)
		require.Error(t, err)
		for _, want := range []string{`cannot read the time "[2015/05/17 10h05m03]" of the first lines`,
			"CLF (17/May/2015:10:05:03 +0000)", "ISO 8601", "Unix time", "set time-layout"} {
			require.Contains(t, err.Error(), want)
		}
	})

	t.Run("a bad line among good ones is counted, not fatal", func(t *testing.T) {
		path := writeTrace(t, "a.log", line("2015-05-17T10:05:03Z")+line("17/May/2015:10:05:04 +0000")+line("2015-05-17T10:05:05Z"))
		got := replayAll(t, &Replay{Path: path, Reorder: time.Minute})
		require.NoError(t, got.err)
		require.Equal(t, int64(1), got.stats.Malformed)
		require.Len(t, got.stats.FirstBad, 1)
		require.Equal(t, int64(2), got.stats.FirstBad[0].Line)
	})
}

// TestReplayBufferWarning: a dense trace with a wide reorder
// window holds every line of the window; Warn is told once when it holds
// more than WarnBuffered lines, and names the option that bounds it. The
// same trace with a narrow window does not warn.
func TestReplayBufferWarning(t *testing.T) {
	var b []byte
	b = append(b, "time_ms,key\n"...)
	for i := range 200 {
		b = append(b, []byte(strconv.Itoa(1_000_000_000_000+i)+",a\n")...) // 200 lines in 200 ms
	}
	path := writeTrace(t, "dense.csv", string(b))
	var warnings []string
	r := &Replay{Path: path, Reorder: 5 * time.Minute, WarnBuffered: 50, Warn: func(m string) { warnings = append(warnings, m) }}
	got := replayAll(t, r)
	require.Len(t, got.at, 200)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "the reorder window of 5m holds 51 lines")
	require.Contains(t, warnings[0], "--reorder 10s")

	warnings = nil
	narrow := replayAll(t, &Replay{Path: path, Reorder: 10 * time.Millisecond, WarnBuffered: 50, Warn: func(m string) { warnings = append(warnings, m) }})
	require.Empty(t, warnings)
	require.Equal(t, got.at, narrow.at) // an ordered trace: the same requests
}
