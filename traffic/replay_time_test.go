package traffic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReplayTimeForms: every time form, read exactly into ns since the
// epoch, and whether it is a whole second (to be spread).
func TestReplayTimeForms(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	const s2000 = 971186136 // 2000-10-10 13:55:36 UTC
	const az = 1700158546   // 2023-11-16 18:15:46 UTC
	const u = 1438936711    // 2015-08-07 08:38:31 UTC
	const e9 = int64(1e9)
	for _, tt := range []struct {
		in       string
		layout   string
		unit     string
		nameUnit int64 // the unit the field's name gives
		loc      *time.Location
		want     int64
		whole    bool
	}{
		// RFC 3339
		{in: "2000-10-10T13:55:36Z", want: s2000 * e9, whole: true},
		{in: "2000-10-10t13:55:36z", want: s2000 * e9, whole: true},
		// 13:55:36.5 at +02:00 is 11:55:36.5 UTC
		{in: "2000-10-10T13:55:36.5+02:00", want: (s2000-7200)*e9 + 5e8},
		// 13:55:36.25 at -01:30 is 15:25:36.25 UTC; a comma for the point,
		// a zone without colon
		{in: "2000-10-10 13:55:36,25-0130", want: (s2000+5400)*e9 + 25e7},
		{in: "2000-10-10T13:55:36+02", want: (s2000 - 7200) * e9, whole: true},
		// digits past the ns are dropped
		{in: "2000-10-10T13:55:36.1234567891Z", want: s2000*e9 + 123456789},
		// the Azure form: 100 ns digits, no zone (UTC, or the timezone)
		{in: "2023-11-16 18:15:46.6805900", want: az*e9 + 680590000},
		// CET in November is UTC+1
		{in: "2023-11-16 18:15:46.6805900", loc: paris, want: (az-3600)*e9 + 680590000},
		// EST in November is UTC-5
		{in: "2023-11-16T18:15:46", loc: ny, want: (az + 5*3600) * e9, whole: true},
		// a zone written wins over the timezone
		{in: "2023-11-16T18:15:46Z", loc: ny, want: az * e9, whole: true},
		// Unix times, exactly
		{in: "1438936711.003372", unit: "s", want: 1438936711003372000},
		{in: "1438936711", unit: "s", want: u * e9, whole: true},
		{in: "1438936711.0", unit: "s", want: u * e9}, // sub-second digits: not whole
		{in: "1438936711.0033721239", unit: "s", want: 1438936711003372123},
		{in: "0.000000001", unit: "s", want: 1},
		{in: "1438936711003", unit: "ms", want: 1438936711003000000},
		{in: "1438936711003.372", unit: "ms", want: 1438936711003372000},
		{in: "1438936711003372", unit: "us", want: 1438936711003372000},
		{in: "1438936711003372001", unit: "ns", want: 1438936711003372001},
		{in: "9223372036854775807", unit: "ns", want: 9223372036854775807},
		// the unit of the field's name, then the one guessed from digits
		{in: "1500", nameUnit: int64(time.Millisecond), want: 1500 * 1e6},
		{in: "1438936711", want: u * e9, whole: true},
		{in: "1438936711.5", want: u*e9 + 5e8},
		{in: "1438936711003", want: 1438936711003000000},
		{in: "1438936711003372", want: 1438936711003372000},
		{in: "1438936711003372001", want: 1438936711003372001},
		// CLF in a CSV field, with a fraction too
		{in: "10/Oct/2000:13:55:36 -0700", want: (s2000 + 7*3600) * e9, whole: true},
		{in: "10/Oct/2000:13:55:36.125 +0000", want: s2000*e9 + 125e6},
		// Go layouts: without fraction a whole second; a fraction found
		// after the seconds is kept; fixed digits (.000) never whole
		{in: "10.10.2000 13h55:36", layout: "02.01.2006 15h04:05", want: s2000 * e9, whole: true},
		{in: "10.10.2000 13h55:36.75", layout: "02.01.2006 15h04:05", want: s2000*e9 + 75e7},
		{in: "2000-10-10 13:55:36.000", layout: "2006-01-02 15:04:05.000", want: s2000 * e9},
		{in: "2000-10-10 13:55:36", layout: "2006-01-02 15:04:05.999", want: s2000 * e9, whole: true},
		{in: "2000-10-10 13:55:36", layout: "2006-01-02 15:04:05", loc: paris, want: (s2000 - 7200) * e9, whole: true},
		{in: "Tue, 10 Oct 2000 13:55:36 +0100", layout: time.RFC1123Z, loc: paris, want: (s2000 - 3600) * e9, whole: true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			p, err := newTimeParser(&Replay{TimeLayout: tt.layout, TimeUnit: tt.unit, Timezone: tt.loc})
			require.NoError(t, err)
			got, whole, bad := p.parse([]byte(tt.in), tt.nameUnit)
			require.Equal(t, badLine{}, bad)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.whole, whole)
		})
	}
}

func TestReplayBadTimes(t *testing.T) {
	for _, tt := range []struct {
		in, layout, unit string
		want             badLine
	}{
		{in: "", want: badLine{reason: "missing field", detail: "empty time"}},
		{in: "2000-13-10T13:55:36Z", want: badLine{reason: "bad time", detail: `"2000-13-10T13:55:36Z": no month 13`}},
		{in: "2001-02-29T13:55:36Z", want: badLine{reason: "bad time", detail: `"2001-02-29T13:55:36Z": no day 29 of month 2`}},
		{in: "2000-10-10T24:00:00Z", want: badLine{reason: "bad time", detail: `"2000-10-10T24:00:00Z": no hour 24`}},
		{in: "2000-10-10T23:60:00Z", want: badLine{reason: "bad time", detail: `"2000-10-10T23:60:00Z": no minute 60`}},
		{in: "2000-10-10T23:59:60Z", want: badLine{reason: "bad time", detail: `"2000-10-10T23:59:60Z": no second 60`}},
		{in: "2000-10-10T13:55:36+25:00", want: badLine{reason: "bad time", detail: `"2000-10-10T13:55:36+25:00": bad zone "+25:00" (want Z, +07:00 or +0700)`}},
		{in: "2000-10-10T13:55:36.", want: badLine{reason: "bad time", detail: `"2000-10-10T13:55:36.": no digits after the decimal point`}},
		{in: "2000-10-10X13:55:36", want: badLine{reason: "bad time", detail: `"2000-10-10X13:55:36" is not a time (want 2006-01-02T15:04:05 or 2006-01-02 15:04:05, maybe with a fraction and a zone)`}},
		{in: "2000-1a-10T13:55:36", want: badLine{reason: "bad time", detail: `"2000-1a-10T13:55:36" is not a time (want 2006-01-02T15:04:05 or 2006-01-02 15:04:05, maybe with a fraction and a zone)`}},
		{in: "1969-12-31T23:59:59Z", want: badLine{reason: "bad time", detail: `"1969-12-31T23:59:59Z" is before 1970`}},
		{in: "1970-01-01T00:30:00+01:00", want: badLine{reason: "bad time", detail: `"1970-01-01T00:30:00+01:00" is before 1970`}},
		{in: "2262-04-11T23:47:17Z", want: badLine{reason: "bad time", detail: `"2262-04-11T23:47:17Z" is beyond 2262-04-11T23:47:16Z`}},
		{in: "10/Okt/2000:13:55:36 +0000", want: badLine{reason: "bad month", detail: `"Okt" is not a month (want Jan, Feb, Mar, Apr, May, Jun, Jul, Aug, Sep, Oct, Nov or Dec)`}},
		// month names are exact
		{in: "10/OCT/2000:13:55:36 +0000", want: badLine{reason: "bad month", detail: `"OCT" is not a month (want Jan, Feb, Mar, Apr, May, Jun, Jul, Aug, Sep, Oct, Nov or Dec)`}},
		{in: "10/Oct/2000:13:55:36", want: badLine{reason: "bad time", detail: `"10/Oct/2000:13:55:36" is not a CLF time (want 10/Oct/2000:13:55:36 -0700)`}},
		{in: "10/Oct/2000:13:55:36 +00:00", want: badLine{reason: "bad time", detail: `"10/Oct/2000:13:55:36 +00:00": want a zone like -0700 after the time`}},
		{in: "1a/Oct/2000:13:55:36 +0000", want: badLine{reason: "bad time", detail: `"1a/Oct/2000:13:55:36 +0000" is not a CLF time (want 10/Oct/2000:13:55:36 -0700)`}},
		{in: "-1", want: badLine{reason: "bad time", detail: `"-1" is before 1970`}},
		{in: "1.2.3", unit: "s", want: badLine{reason: "bad time", detail: `"1.2.3" is not a number (want digits, maybe with a decimal point)`}},
		{in: ".", unit: "s", want: badLine{reason: "bad time", detail: `"." is not a number`}},
		{in: "9223372036854775808", unit: "ns", want: badLine{reason: "bad time", detail: `"9223372036854775808" is beyond 2262-04-11T23:47:16Z`}},
		{in: "9223372036.854775808", unit: "s", want: badLine{reason: "bad time", detail: `"9223372036.854775808" is beyond 2262-04-11T23:47:16Z`}},
		{in: "99999999999999999999999", unit: "s", want: badLine{reason: "bad time", detail: `"99999999999999999999999" is beyond 2262-04-11T23:47:16Z`}},
		{in: "10.10.2000", layout: "02.01.2006 15:04:05", want: badLine{reason: "bad time", detail: `"10.10.2000" does not match time-layout "02.01.2006 15:04:05"`}},
		{in: "10.10.1960 00:00:00", layout: "02.01.2006 15:04:05", want: badLine{reason: "bad time", detail: `"10.10.1960 00:00:00" is before 1970`}},
		{in: "10.10.2300 00:00:00", layout: "02.01.2006 15:04:05", want: badLine{reason: "bad time", detail: `"10.10.2300 00:00:00" is beyond 2262-04-11T23:47:16Z`}},
	} {
		t.Run(tt.in, func(t *testing.T) {
			p, err := newTimeParser(&Replay{TimeLayout: tt.layout, TimeUnit: tt.unit})
			require.NoError(t, err)
			got, _, bad := p.parse([]byte(tt.in), 0)
			require.Equal(t, tt.want, bad)
			require.Zero(t, got)
		})
	}
}

// TestDaysFromCivil against the standard library, over 1970-2262.
func TestDaysFromCivil(t *testing.T) {
	for d := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= 2262; d = d.AddDate(0, 0, 13) {
		require.Equal(t, d.Unix()/86400, daysFromCivil(int64(d.Year()), int64(d.Month()), int64(d.Day())), d)
	}
}
