package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// utc returns the instant y-m-d h:00 UTC as ns since the Unix epoch.
func utc(y int, m time.Month, d, h int) time.Duration {
	return time.Duration(time.Date(y, m, d, h, 0, 0, 0, time.UTC).UnixNano())
}

const day = 24 * time.Hour

func TestCalendarWindow(t *testing.T) {
	for _, c := range []struct {
		name       string
		at         time.Duration
		cal        Calendar
		k          int64
		start, end time.Duration
	}{
		// Virtual time 0 is 1970-01-01 00:00 UTC: month 0 and year 0.
		{"epoch month", 0, CalendarMonth, 0, 0, 31 * day},
		{"epoch year", 0, CalendarYear, 0, 0, 365 * day},
		// A 28-day February (1970 is not a leap year): 31 days of
		// January, then [31d, 59d).
		{"28-day February", utc(1970, 2, 14, 0), CalendarMonth, 1, 31 * day, 59 * day},
		// A 30-day month: April 1970 starts after 31+28+31 = 90 days.
		{"30-day April", utc(1970, 4, 30, 23), CalendarMonth, 3, 90 * day, 120 * day},
		// 2024 is a leap year: February has 29 days, and 2024-02-29 is in
		// month (2024-1970)*12 + 1 = 649.
		{"leap day", utc(2024, 2, 29, 12), CalendarMonth, 649, utc(2024, 2, 1, 0), utc(2024, 2, 1, 0) + 29*day},
		{"leap year", utc(2024, 2, 29, 12), CalendarYear, 54, utc(2024, 1, 1, 0), utc(2024, 1, 1, 0) + 366*day},
		// The last ns of a month is in it; the next ns starts the next.
		{"last ns of January", 31*day - 1, CalendarMonth, 0, 0, 31 * day},
		{"first ns of February", 31 * day, CalendarMonth, 1, 31 * day, 59 * day},
		// Year boundary: December (31 days) ends at the new year, which
		// is month 12k and year k.
		{"last ns of 1999", utc(2000, 1, 1, 0) - 1, CalendarMonth, 29*12 + 11, utc(1999, 12, 1, 0), utc(2000, 1, 1, 0)},
		{"new year 2000", utc(2000, 1, 1, 0), CalendarMonth, 30 * 12, utc(2000, 1, 1, 0), utc(2000, 1, 1, 0) + 31*day},
		{"year 1999", utc(2000, 1, 1, 0) - 1, CalendarYear, 29, utc(1999, 1, 1, 0), utc(2000, 1, 1, 0)},
		// Before the epoch (a node's clock skewed back): December 1969
		// is month -1.
		{"December 1969", -1, CalendarMonth, -1, -31 * day, 0},
		{"1969", -1, CalendarYear, -1, -365 * day, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, start, end := calendarWindow(c.at, c.cal)
			require.Equal(t, [3]int64{c.k, int64(c.start), int64(c.end)}, [3]int64{k, int64(start), int64(end)})
			require.Equal(t, c.start, calendarWindowStart(k, c.cal))
			require.Equal(t, c.end, calendarWindowStart(k+1, c.cal))
		})
	}
	// The end of time.Duration's range (2262-04-11) is in April 2262,
	// whose end is beyond it: it saturates.
	_, _, end := calendarWindow(1<<63-1, CalendarMonth)
	require.Equal(t, time.Duration(1<<63-1), end)
}

func TestFixedWindowCalendarMonth(t *testing.T) {
	// Kong's month limit of 3 (kong/tools/timestamp.lua: the month period
	// starts at 00:00 UTC on the 1st), checked at each kind of month.
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 3, Per: CalendarMonth.Nominal(), Burst: 3, Calendar: CalendarMonth}})
	feb := utc(2023, 2, 1, 0)  // 28 days
	mar := utc(2023, 3, 1, 0)  // 31 days
	apr := utc(2023, 4, 1, 0)  // 30 days
	lfeb := utc(2024, 2, 1, 0) // 29 days
	checkRows(t, l, []decideRow{
		{at: feb, cost: 2, want: Accept},                        // count 2
		{at: feb + 27*day, cost: 1, want: Accept},               // Feb 28: count 3 = L
		{at: feb + 27*day, cost: 1, want: Reject, retry: day},   // full until March 1st, one day later (28 days)
		{at: mar - 1, cost: 1, want: Reject, retry: 1},          // the last ns of February is still February
		{at: mar, cost: 3, want: Accept},                        // March starts empty
		{at: mar + 30*day, cost: 1, want: Reject, retry: day},   // March 31st: 31 days
		{at: apr, cost: 3, want: Accept},                        // April
		{at: apr + 29*day, cost: 1, want: Reject, retry: day},   // April 30th: 30 days
		{at: apr + 30*day, cost: 1, want: Accept},               // May 1st
		{at: apr + 30*day, cost: 4, want: Reject, retry: Never}, // 4 > L
		{at: lfeb + 28*day, cost: 3, want: Accept},              // 2024-02-29 (leap day) is February
		{at: lfeb + 28*day + 12*time.Hour, cost: 1, want: Reject, retry: 12 * time.Hour},
		{at: lfeb + 29*day, cost: 3, want: Accept}, // March 1st 2024, 29 days after February 1st
	})
}

func TestFixedWindowCalendarYear(t *testing.T) {
	// Kong's year limit of 2: the year period starts at 00:00 UTC on
	// January 1st.
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 2, Per: CalendarYear.Nominal(), Burst: 2, Calendar: CalendarYear}})
	y23, y24, y25 := utc(2023, 1, 1, 0), utc(2024, 1, 1, 0), utc(2025, 1, 1, 0)
	checkRows(t, l, []decideRow{
		{at: y23 + 100*day, cost: 2, want: Accept},
		{at: y24 - 1, cost: 1, want: Reject, retry: 1},              // the last ns of 2023
		{at: y24, cost: 1, want: Accept},                            // 2024 starts empty
		{at: y24 + 59*day, cost: 1, want: Accept},                   // Feb 29, 2024 (day 60 of the year)
		{at: y24 + 59*day, cost: 1, want: Reject, retry: 307 * day}, // 366 - 59 days to 2025
		{at: y25 - 1, cost: 1, want: Reject, retry: 1},
		{at: y25, cost: 2, want: Accept},
	})
	require.Equal(t, y24+366*day, y25)
}

func TestFixedWindowCalendarRelease(t *testing.T) {
	// A key's count is released at the end of its calendar month.
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 3, Per: CalendarMonth.Nominal(), Burst: 3, Calendar: CalendarMonth}})
	h := l.(stateHolder)
	feb := utc(2023, 2, 1, 0)
	l.Decide(feb+10*day, 0, 1)
	requireLive(t, h, feb+28*day-1, 1, 16)
	requireLive(t, h, feb+28*day, 0, 0)
}

func TestFixedWindowWeekStartsThursday(t *testing.T) {
	// Fixed windows of any duration are aligned to the Unix epoch, so
	// envoy ratelimit's WEEK (168h) windows start on Thursdays at 00:00
	// UTC: 1970-01-01 was a Thursday.
	const week = 168 * time.Hour
	require.Equal(t, time.Thursday, time.Unix(0, 0).UTC().Weekday())
	at := utc(2024, 5, 15, 12) // a Wednesday
	k, e := windowAt(at, week)
	start := time.Unix(0, int64(at-e)).UTC()
	require.Equal(t, time.Thursday, start.Weekday())
	require.Equal(t, time.Date(2024, 5, 9, 0, 0, 0, 0, time.UTC), start)
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 1, Per: week, Burst: 1}})
	checkRows(t, l, []decideRow{
		{at: at, cost: 1, want: Accept},
		// Full until Thursday 2024-05-16 00:00 UTC, 12h later.
		{at: at, cost: 1, want: Reject, retry: 12 * time.Hour},
		{at: utc(2024, 5, 16, 0), cost: 1, want: Accept},
	})
	require.Equal(t, int64(2836), k) // weeks since 1970-01-01
}

func TestCalendarRefused(t *testing.T) {
	// Only fixed-window counts calendar windows; every other algorithm
	// names the field and says so.
	p := Params{Policy: Policy{Rate: 3, Per: CalendarMonth.Nominal(), Burst: 3, Calendar: CalendarMonth}}
	for _, name := range Names() {
		if name == "fixed-window" {
			continue
		}
		_, err := New(name, p)
		var pe *ParamError
		require.ErrorAs(t, err, &pe, name)
		require.Equal(t, "per", pe.Field, name)
		require.Equal(t, "1mo", pe.Found, name)
		require.Contains(t, pe.Want, "only fixed-window counts calendar windows", name)
	}
	// In an all-of row, a fixed-window limit may count months, others not.
	_, err := New("all-of", Params{Policy: p.Policy, Members: []Member{
		{Name: "fixed-window", Params: Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}}},
		{Name: "fixed-window", Params: p},
	}})
	require.NoError(t, err)
	_, err = New("all-of", Params{Policy: p.Policy, Members: []Member{{Name: "sliding-window", Params: p}}})
	require.ErrorContains(t, err, "limits[0]: per: 1mo: only fixed-window counts calendar windows")
	// Per must be the nominal duration that stands for the calendar.
	bad := p
	bad.Per = time.Hour
	_, err = New("fixed-window", bad)
	require.ErrorContains(t, err, "want 720h0m0s for per 1mo")
}
