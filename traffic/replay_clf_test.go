package traffic

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clfCases are CLF times with their instant in Unix seconds, computed by
// hand (date -u -d ... +%s), or the reason and message they are refused
// with.
var clfCases = []struct {
	in     string
	sec    int64
	reason string // "" when read
	msg    string // a part of the message
}{
	// every month, 2015 (not a leap year)
	{in: "01/Jan/2015:00:00:00 +0000", sec: 1420070400},
	{in: "01/Feb/2015:00:00:00 +0000", sec: 1422748800},
	{in: "01/Mar/2015:00:00:00 +0000", sec: 1425168000},
	{in: "01/Apr/2015:00:00:00 +0000", sec: 1427846400},
	{in: "01/May/2015:00:00:00 +0000", sec: 1430438400},
	{in: "01/Jun/2015:00:00:00 +0000", sec: 1433116800},
	{in: "01/Jul/2015:00:00:00 +0000", sec: 1435708800},
	{in: "01/Aug/2015:00:00:00 +0000", sec: 1438387200},
	{in: "01/Sep/2015:00:00:00 +0000", sec: 1441065600},
	{in: "01/Oct/2015:00:00:00 +0000", sec: 1443657600},
	{in: "01/Nov/2015:00:00:00 +0000", sec: 1446336000},
	{in: "01/Dec/2015:00:00:00 +0000", sec: 1448928000},
	// the last day of each month is the day before the next one's first
	{in: "31/Jan/2015:23:59:59 +0000", sec: 1422748800 - 1},
	{in: "28/Feb/2015:23:59:59 +0000", sec: 1425168000 - 1},
	{in: "30/Apr/2015:23:59:59 +0000", sec: 1430438400 - 1},
	{in: "30/Nov/2015:23:59:59 +0000", sec: 1448928000 - 1},
	// the epoch, the last second of the millennium, the last whole second
	{in: "01/Jan/1970:00:00:00 +0000", sec: 0},
	{in: "31/Dec/1999:23:59:59 +0000", sec: 946684799},
	{in: "11/Apr/2262:23:47:15 +0000", sec: 9223372035},
	// offsets: 13:55:36 at -0700 is 20:55:36 UTC; at +0530 it is 08:25:36
	{in: "10/Oct/2000:13:55:36 -0700", sec: 971211336},
	{in: "10/Oct/2000:20:55:36 +0000", sec: 971211336},
	{in: "11/Oct/2000:03:55:36 +0700", sec: 971211336},
	{in: "10/Oct/2000:13:55:36 +0530", sec: 971211336 - 7*3600 - 5*3600 - 30*60},
	{in: "10/Oct/2000:13:55:36 -1200", sec: 971211336 + 5*3600},
	{in: "10/Oct/2000:13:55:36 +1400", sec: 971211336 - 21*3600},
	// leap days: 2024 and 2000 (divisible by 400) have one, 2023 and 2100 not
	{in: "29/Feb/2024:12:00:00 +0000", sec: 1709208000},
	{in: "29/Feb/2000:00:00:00 +0000", sec: 951782400},
	{in: "01/Mar/2000:00:00:00 +0000", sec: 951782400 + 86400},
	{in: "29/Feb/2023:00:00:00 +0000", reason: "bad time", msg: "no day 29 of month 2"},
	{in: "29/Feb/2100:00:00:00 +0000", reason: "bad time", msg: "no day 29 of month 2"},
	// out of range
	{in: "00/Jan/2015:00:00:00 +0000", reason: "bad time", msg: "no day 0 of month 1"},
	{in: "32/Jan/2015:00:00:00 +0000", reason: "bad time", msg: "no day 32 of month 1"},
	{in: "31/Apr/2015:00:00:00 +0000", reason: "bad time", msg: "no day 31 of month 4"},
	{in: "01/Jan/2015:24:00:00 +0000", reason: "bad time", msg: "no hour 24"},
	{in: "01/Jan/2015:00:60:00 +0000", reason: "bad time", msg: "no minute 60"},
	{in: "01/Jan/2015:00:00:60 +0000", reason: "bad time", msg: "no second 60"},
	{in: "01/Jan/2015:00:00:99 +0000", reason: "bad time", msg: "no second 99"},
	{in: "01/Jan/2015:00:00:00 +2400", reason: "bad time", msg: "bad zone"},
	{in: "01/Jan/2015:00:00:00 +0060", reason: "bad time", msg: "bad zone"},
	{in: "01/Jan/1970:00:00:00 +0100", reason: "bad time", msg: "before 1970"},
	{in: "31/Dec/1969:23:59:59 +0000", reason: "bad time", msg: "before 1970"},
	{in: "11/Apr/2262:23:47:16 +0000", reason: "bad time", msg: "beyond 2262"},
	{in: "01/Jan/2263:00:00:00 +0000", reason: "bad time", msg: "beyond 2262"},
	// bad digits and names
	{in: "01/Jan/2015:00:00:0x +0000", reason: "bad time", msg: "not a CLF time"},
	{in: "01/Jan/2015:00:00:/0 +0000", reason: "bad time", msg: "not a CLF time"},
	{in: "01/Jan/2015:00:0 :00 +0000", reason: "bad time", msg: "not a CLF time"},
	{in: "0a/Jan/2015:00:00:00 +0000", reason: "bad time", msg: "not a CLF time"},
	{in: "01/Jan/2O15:00:00:00 +0000", reason: "bad time", msg: "not a CLF time"},
	{in: "01/Jan/2015:00:00:00 +00a0", reason: "bad time", msg: "bad zone"},
	{in: "01/Jan/2015:00:00:00 *0000", reason: "bad time", msg: "bad zone"},
	{in: "01/Jan/2015:00:00:00_+0000", reason: "bad time", msg: "want a zone"},
	{in: "01/jan/2015:00:00:00 +0000", reason: "bad month", msg: `"jan" is not a month`},
	{in: "01/Foo/2015:00:00:00 +0000", reason: "bad month", msg: `"Foo" is not a month`},
	{in: "01/Jan/2015:00:00:00 +000", reason: "bad time", msg: "not a CLF time"},
	{in: "01/Jan/2015:00:00:00 +00000", reason: "bad time", msg: "want a zone"},
}

// TestCLFMinute reads each case fresh, after a time of the same minute
// (read from the minute remembered), and after one of another minute: the
// same answer each way, the one written above.
func TestCLFMinute(t *testing.T) {
	for _, tt := range clfCases {
		t.Run(tt.in, func(t *testing.T) {
			b := []byte(tt.in)
			primes := [][]byte{nil, []byte("01/Jan/2015:00:00:00 +0000")}
			for _, s := range []string{"00", "07", "59"} {
				p := []byte(tt.in)
				copy(p[18:20], s)
				primes = append(primes, p)
			}
			for _, prime := range primes {
				var c clfMinute
				if prime != nil {
					c.parse(prime)
				}
				ns, whole, bad := c.parse(b)
				require.Equal(t, tt.reason, bad.reason, "after %s: %s", prime, bad.message())
				if tt.reason != "" {
					require.Contains(t, bad.message(), tt.msg)
					continue
				}
				require.Equal(t, tt.sec*int64(time.Second), ns, "after %s", prime)
				require.True(t, whole)
				// and as parseCLFTime reads it
				ns2, whole2, bad2 := parseCLFTime(b)
				require.Equal(t, []any{ns, whole, bad}, []any{ns2, whole2, bad2})
			}
		})
	}
}

// checkCLFMinute compares a clfMinute that has read prime with
// parseCLFTime and time.Parse on in: the minute changes nothing, and a
// time read is time.Parse's (which accepts more: one-digit hours, months
// in any case), and a time time.Parse reads and writes back the same way,
// in range and with a zone under 24 hours, is read.
func checkCLFMinute(t *testing.T, prime, in []byte) {
	var c clfMinute
	c.parse(prime)
	ns, whole, bad := c.parse(in)
	ns2, whole2, bad2 := parseCLFTime(in)
	// require only on failure: this runs 200,000 times in TestCLFMinuteRandom
	if ns2 != ns || whole2 != whole || !reflect.DeepEqual(bad2, bad) {
		require.Equal(t, []any{ns2, whole2, bad2}, []any{ns, whole, bad}, "%q after %q", in, prime)
	}
	const layout = "02/Jan/2006:15:04:05 -0700"
	ref, err := time.Parse(layout, string(in))
	if bad.reason == "" {
		if err != nil || ref.UnixNano() != ns {
			require.NoError(t, err, "%q", in)
			require.Equal(t, ref.UnixNano(), ns, "%q", in)
		}
		return
	}
	_, off := ref.Zone() // zones of 24 hours and more are refused
	if err == nil && ref.Format(layout) == string(in) && ref.Unix() >= 0 && ref.Unix() < maxSecond && ref.Year() <= 2262 && off > -24*3600 && off < 24*3600 {
		t.Fatalf("%q: time.Parse reads %v, parseCLFTime says %s", in, ref, bad.message())
	}
}

// TestCLFMinuteRandom: random times of the years 1970-2262 and every zone
// step, with random bytes changed, against time.Parse.
func TestCLFMinuteRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		sec := rng.Int64N(maxSecond)
		off := (rng.IntN(2*14*4+1) - 14*4) * 15 * 60
		tm := time.Unix(sec, 0).In(time.FixedZone("", off))
		s := []byte(tm.Format("02/Jan/2006:15:04:05 -0700"))
		prime := append([]byte(nil), s...)
		copy(prime[18:20], fmt.Sprintf("%02d", rng.IntN(60)))
		switch rng.IntN(4) {
		case 0:
			s[rng.IntN(len(s))] = byte(rng.IntN(256))
		case 1:
			s[18+rng.IntN(2)] = byte('0' + rng.IntN(10))
		}
		checkCLFMinute(t, prime, s)
	}
}

func FuzzCLFMinute(f *testing.F) {
	for _, tt := range clfCases {
		f.Add([]byte(tt.in), []byte("01/Jan/2015:00:00:00 +0000"))
		p := []byte(tt.in)
		copy(p[18:20], "00")
		f.Add([]byte(tt.in), p)
	}
	f.Fuzz(func(t *testing.T, in, prime []byte) {
		checkCLFMinute(t, prime, in)
	})
}

// TestKeyTable: every key, of 1 to 40 bytes, gets from the table the id
// Keys gives it, the first time and the next.
func TestKeyTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	k := NewKeys()
	var tab keyTable
	var names [][]byte
	for i := range 20_000 {
		n := 1 + i%40
		b := make([]byte, n)
		for j := range b {
			b[j] = "ab\x00."[rng.IntN(4)] // few letters: keys that differ in one byte
		}
		names = append(names, b)
	}
	names = append(names, []byte("10.0.0.1"), []byte("10.0.0.1 "), []byte("\x00"), []byte("\x00\x00"))
	for round := range 2 {
		for _, b := range names {
			id := tab.intern(k, b)
			want, ok := k.Lookup(string(b))
			require.True(t, ok)
			require.Equal(t, want, id, "round %d: %q", round, b)
		}
	}
	require.LessOrEqual(t, 2*tab.n, len(tab.slots))
}
