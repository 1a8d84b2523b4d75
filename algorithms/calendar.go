package algorithms

import (
	"math"
	"time"

	"github.com/ratesim/ratesim/internal/intmath"
)

// Calendar is a period that follows the calendar, in UTC, instead of a
// fixed number of nanoseconds: Kong's month and year limits. Only
// fixed-window counts calendar windows.
//
// Kong's rate-limiting plugin keys each count by the start of the period
// that holds the request (kong/plugins/rate-limiting/policies/init.lua,
// from kong/tools/timestamp.lua's get_timestamps): the request's UTC time
// table with the smaller fields zeroed, so the month period starts at
// 00:00:00 UTC on the 1st (day = 1) and the year period at 00:00:00 UTC on
// January 1st (day = 1, month = 1). A month is therefore 28, 29, 30 or 31
// days long and a year 365 or 366, as the calendar has them.
type Calendar uint8

const (
	// NotCalendar: the period is Policy.Per, a fixed duration.
	NotCalendar Calendar = iota
	// CalendarMonth is `per: 1mo`: the calendar month, UTC.
	CalendarMonth
	// CalendarYear is `per: 1y`: the calendar year, UTC.
	CalendarYear
)

// String returns the calendar period as a scenario spells it: 1mo or 1y
// ("" for NotCalendar).
func (c Calendar) String() string {
	switch c {
	case CalendarMonth:
		return "1mo"
	case CalendarYear:
		return "1y"
	}
	return ""
}

// Nominal is the duration that stands for a calendar period wherever a
// duration is needed rather than a window (Policy.Per: a rate shown in a
// table, the default peak windows W and W/10, a peak's ratio, the padding
// after the traffic ends): 30 days for a month and 365 days for a year,
// the lengths Kong itself gives these periods when it sets a counter's
// expiry (kong/plugins/rate-limiting/expiration.lua: month = 2592000 s,
// year = 31536000 s). No decision reads it.
func (c Calendar) Nominal() time.Duration {
	switch c {
	case CalendarMonth:
		return 30 * 24 * time.Hour
	case CalendarYear:
		return 365 * 24 * time.Hour
	}
	return 0
}

// Longest is the longest window of the calendar period: 31 days for a
// month, 366 days for a year.
func (c Calendar) Longest() time.Duration {
	switch c {
	case CalendarMonth:
		return 31 * 24 * time.Hour
	case CalendarYear:
		return 366 * 24 * time.Hour
	}
	return 0
}

// ParseCalendar returns the calendar period spelled s (1mo or 1y), or
// false.
func ParseCalendar(s string) (Calendar, bool) {
	switch s {
	case "1mo":
		return CalendarMonth, true
	case "1y":
		return CalendarYear, true
	}
	return NotCalendar, false
}

// calendarWindow returns the calendar window of c that holds the instant t
// (ns since the Unix epoch, UTC): its index k (months or years since
// January 1970, negative before), and its bounds [start, end). A bound
// beyond the range of time.Duration (before 1677-09-21 or after
// 2262-04-11) saturates at that end of the range.
func calendarWindow(t time.Duration, c Calendar) (k int64, start, end time.Duration) {
	u := time.Unix(0, int64(t)).UTC()
	y, m := u.Year(), u.Month()
	if c == CalendarYear {
		k = int64(y) - 1970
		return k, unixNanos(y, time.January), unixNanos(y+1, time.January)
	}
	k = (int64(y)-1970)*12 + int64(m) - 1
	return k, unixNanos(y, m), unixNanos(y, m+1) // time.Date normalises month 13
}

// unixNanos returns 00:00:00 UTC on the 1st of month m of year y as ns
// since the Unix epoch, saturating outside the range of time.Duration.
func unixNanos(y int, m time.Month) time.Duration {
	s := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix()
	switch {
	case s > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	case s < math.MinInt64/int64(time.Second):
		return math.MinInt64
	}
	return time.Duration(s) * time.Second
}

// calendarWindowStart returns the start of window k of c (the inverse of
// calendarWindow's index), saturating as calendarWindow does.
func calendarWindowStart(k int64, c Calendar) time.Duration {
	if c == CalendarYear {
		return unixNanos(int(1970+k), time.January)
	}
	y := 1970 + intmath.FloorDiv(k, 12)
	return unixNanos(int(y), time.Month(k-(y-1970)*12+1))
}
