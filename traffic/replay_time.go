package traffic

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// timeParser reads the time field of a line.
type timeParser struct {
	layout   string
	zeroFrac bool           // the layout has fixed fractional digits (.000)
	loc      *time.Location // for times without a zone; nil: UTC
	unit     int64          // TimeUnit in ns; 0: none
	clf      clfMinute      // the minute of the last CLF time read
}

func newTimeParser(r *Replay) (*timeParser, error) {
	p := &timeParser{layout: r.TimeLayout, loc: r.Timezone, unit: timeUnits[r.TimeUnit]}
	if p.loc == time.UTC {
		p.loc = nil
	}
	p.zeroFrac = strings.Contains(p.layout, "05.0") || strings.Contains(p.layout, "05,0")
	return p, nil
}

// maxSecond is the last whole second whose ns fit an int64.
const maxSecond = math.MaxInt64 / int64(time.Second)

func badTime(format string, args ...any) badLine {
	return badLine{reason: "bad time", detail: fmt.Sprintf(format, args...)}
}

// parse reads a time field: with the layout or the unit when set, else as
// a number (in nameUnit, the unit the field's name says, or guessed), RFC
// 3339 (a space may stand for the T; the zone may be missing) or CLF.
func (p *timeParser) parse(b []byte, nameUnit int64) (int64, bool, badLine) {
	switch {
	case p.layout != "":
		return p.parseLayout(b)
	case p.unit != 0:
		return parseUnix(b, p.unit)
	case len(b) == 0:
		return 0, false, badLine{reason: "missing field", detail: "empty time"}
	case isNumeric(b):
		unit := nameUnit
		if unit == 0 {
			unit = guessUnit(b)
		}
		return parseUnix(b, unit)
	case len(b) >= 19 && b[4] == '-' && b[7] == '-':
		return p.parseISO(b)
	case len(b) >= 20 && b[2] == '/' && b[6] == '/':
		return p.clf.parse(b)
	}
	return 0, false, badTime("%s is not a time (want RFC 3339 like 2006-01-02T15:04:05.999Z, 2006-01-02 15:04:05.9999999, 02/Jan/2006:15:04:05 -0700 or a Unix time; or set time-layout or time-unit)", quoteBytes(b))
}

// quoteBytes quotes b for a message, shortened if long.
func quoteBytes(b []byte) string {
	const max = 40
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

func (p *timeParser) parseLayout(b []byte) (int64, bool, badLine) {
	loc := p.loc
	if loc == nil {
		loc = time.UTC
	}
	t, err := time.ParseInLocation(p.layout, string(b), loc)
	if err != nil {
		return 0, false, badTime("%s does not match time-layout %q", quoteBytes(b), p.layout)
	}
	sec := t.Unix()
	switch {
	case sec < 0:
		return 0, false, badTime("%s is %s", quoteBytes(b), tooEarly)
	case sec >= maxSecond:
		return 0, false, badTime("%s is %s", quoteBytes(b), tooLate)
	}
	ns := sec*int64(time.Second) + int64(t.Nanosecond())
	return ns, !p.zeroFrac && t.Nanosecond() == 0, badLine{}
}

// isNumeric reports whether b is digits with at most one '.' (or a leading
// minus, to say "before 1970" rather than "not a time").
func isNumeric(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	dot := false
	digits := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// guessUnit guesses the unit of a Unix time from its integer digits: up to
// 10 digits seconds (up to 2286), 11-13 ms, 14-16 us, more ns.
func guessUnit(b []byte) int64 {
	n := 0
	for _, c := range b {
		if c == '.' {
			break
		}
		n++
	}
	switch {
	case n <= 10:
		return int64(time.Second)
	case n <= 13:
		return int64(time.Millisecond)
	case n <= 16:
		return int64(time.Microsecond)
	}
	return 1
}

// parseUnix reads a decimal number of units since the epoch exactly, as
// integer ns (digits below a ns are dropped). Integer seconds are whole.
func parseUnix(b []byte, unit int64) (int64, bool, badLine) {
	if len(b) == 0 {
		return 0, false, badLine{reason: "missing field", detail: "empty time"}
	}
	if b[0] == '-' {
		return 0, false, badTime("%s is %s", quoteBytes(b), tooEarly)
	}
	intPart, frac := b, []byte(nil)
	for i, c := range b {
		if c == '.' {
			intPart, frac = b[:i], b[i+1:]
			break
		}
	}
	if len(intPart) == 0 && len(frac) == 0 {
		return 0, false, badTime("%s is not a number", quoteBytes(b))
	}
	var v uint64
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return 0, false, badTime("%s is not a number (want digits, maybe with a decimal point)", quoteBytes(b))
		}
		hi, lo := bits.Mul64(v, 10)
		if hi != 0 {
			return 0, false, badTime("%s is %s", quoteBytes(b), tooLate)
		}
		var carry uint64
		v, carry = bits.Add64(lo, uint64(c-'0'), 0)
		if carry != 0 {
			return 0, false, badTime("%s is %s", quoteBytes(b), tooLate)
		}
	}
	hi, ns := bits.Mul64(v, uint64(unit))
	if hi != 0 || ns > math.MaxInt64 {
		return 0, false, badTime("%s is %s", quoteBytes(b), tooLate)
	}
	var f, pow uint64 = 0, 1
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, false, badTime("%s is not a number (want digits, maybe with a decimal point)", quoteBytes(b))
		}
		if pow < 1e18 { // digits past the 18th are below a ns of any unit
			f, pow = f*10+uint64(c-'0'), pow*10
		}
	}
	if pow > 1 {
		fh, fl := bits.Mul64(f, uint64(unit))
		q, _ := bits.Div64(fh, fl, pow) // f < pow, so fh < pow
		ns += q
		if ns > math.MaxInt64 {
			return 0, false, badTime("%s is %s", quoteBytes(b), tooLate)
		}
	}
	return int64(ns), unit == int64(time.Second) && len(frac) == 0, badLine{}
}

// digits reads b as an unsigned decimal of its whole length.
func digits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar, for y >= 1 (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// civil holds a date and time of day as written.
type civil struct {
	y, mo, d, h, mi, s int
	ns                 int64
}

// check says what is wrong with the fields, if anything.
func (c *civil) check() string {
	switch {
	case c.mo < 1 || c.mo > 12:
		return fmt.Sprintf("month %d", c.mo)
	case c.d < 1 || c.d > daysIn(c.y, c.mo):
		return fmt.Sprintf("day %d of month %d", c.d, c.mo)
	case c.h > 23:
		return fmt.Sprintf("hour %d", c.h)
	case c.mi > 59:
		return fmt.Sprintf("minute %d", c.mi)
	case c.s > 59:
		return fmt.Sprintf("second %d", c.s)
	}
	return ""
}

// instant returns ns since the epoch of c at UTC offset off (seconds east),
// or a message when it is out of [1970, 2262].
func (c *civil) instant(off int64) (int64, string) {
	if c.y < 1970 {
		return 0, tooEarly
	}
	if c.y > 2262 {
		return 0, tooLate
	}
	sec := daysFromCivil(int64(c.y), int64(c.mo), int64(c.d))*86400 + int64(c.h)*3600 + int64(c.mi)*60 + int64(c.s) - off
	return c.fromSecond(sec)
}

// fromSecond returns the instant of second sec plus c's fraction, or why
// it is out of the range of an int64 count of nanoseconds since 1970.
func (c *civil) fromSecond(sec int64) (int64, string) {
	switch {
	case sec < 0:
		return 0, tooEarly
	case sec >= maxSecond:
		return 0, tooLate
	}
	return sec*int64(time.Second) + c.ns, ""
}

// Why a time is out of range (the range of time.Duration since 1970).
const (
	tooEarly = "before 1970"
	tooLate  = "beyond 2262-04-11T23:47:16Z"
)

// inZone returns ns since the epoch of c in loc.
func (c *civil) inZone(loc *time.Location) (int64, string) {
	if loc == nil {
		return c.instant(0)
	}
	if c.y < 1969 || c.y > 2262 {
		return c.instant(0) // the same message
	}
	t := time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, c.s, int(c.ns), loc)
	return c.fromSecond(t.Unix())
}

// fraction reads the digits of a fraction of a second as ns (digits past
// the ninth dropped) and how many bytes they take.
func fraction(b []byte) (int64, int) {
	var ns int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n < 9 {
			ns = ns*10 + int64(b[n]-'0')
		}
		n++
	}
	for i := n; i < 9; i++ {
		ns *= 10
	}
	return ns, n
}

// parseISO reads 2006-01-02T15:04:05[.999999999][Z|+07:00|+0700|+07],
// with a space or t for the T; without a zone the time is in p.loc.
func (p *timeParser) parseISO(b []byte) (int64, bool, badLine) {
	if len(b) < 19 || b[10] != 'T' && b[10] != 't' && b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return 0, false, badTime("%s is not a time (want 2006-01-02T15:04:05 or 2006-01-02 15:04:05, maybe with a fraction and a zone)", quoteBytes(b))
	}
	var c civil
	var ok [6]bool
	c.y, ok[0] = digits(b[0:4])
	c.mo, ok[1] = digits(b[5:7])
	c.d, ok[2] = digits(b[8:10])
	c.h, ok[3] = digits(b[11:13])
	c.mi, ok[4] = digits(b[14:16])
	c.s, ok[5] = digits(b[17:19])
	if ok != [6]bool{true, true, true, true, true, true} {
		return 0, false, badTime("%s is not a time (want 2006-01-02T15:04:05 or 2006-01-02 15:04:05, maybe with a fraction and a zone)", quoteBytes(b))
	}
	rest := b[19:]
	whole := true
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		ns, n := fraction(rest[1:])
		if n == 0 {
			return 0, false, badTime("%s: no digits after the decimal point", quoteBytes(b))
		}
		c.ns, whole, rest = ns, false, rest[1+n:]
	}
	if msg := c.check(); msg != "" {
		return 0, false, badTime("%s: no %s", quoteBytes(b), msg)
	}
	var ns int64
	var msg string
	if len(rest) > 1 && rest[0] == ' ' && (rest[1] == '+' || rest[1] == '-' || rest[1] == 'Z') {
		rest = rest[1:] // 2006-01-02 15:04:05 +0700, as logs write it
	}
	if len(rest) == 0 {
		ns, msg = c.inZone(p.loc)
	} else {
		off, ok := zoneOffset(rest)
		if !ok {
			return 0, false, badTime("%s: bad zone %q (want Z, +07:00 or +0700)", quoteBytes(b), rest)
		}
		ns, msg = c.instant(off)
	}
	if msg != "" {
		return 0, false, badTime("%s is %s", quoteBytes(b), msg)
	}
	return ns, whole, badLine{}
}

// zoneOffset reads Z, +07:00, +0700 or +07 (also with -) as seconds east.
func zoneOffset(b []byte) (int64, bool) {
	if len(b) == 1 && (b[0] == 'Z' || b[0] == 'z') {
		return 0, true
	}
	if len(b) < 3 || b[0] != '+' && b[0] != '-' {
		return 0, false
	}
	h, ok := digits(b[1:3])
	if !ok || h > 23 {
		return 0, false
	}
	m := 0
	switch rest := b[3:]; {
	case len(rest) == 0:
	case len(rest) == 3 && rest[0] == ':':
		m, ok = digits(rest[1:])
	case len(rest) == 2:
		m, ok = digits(rest)
	default:
		ok = false
	}
	if !ok || m > 59 {
		return 0, false
	}
	off := int64(h*3600 + m*60)
	if b[0] == '-' {
		off = -off
	}
	return off, true
}

// months are the month names of CLF, exactly as written there.
var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func month(b []byte) int {
	for i, m := range months {
		if string(b) == m {
			return i + 1
		}
	}
	return 0
}

// clfMinute remembers the minute of the last CLF time read without a
// fraction, so that the next time of the same minute and zone (consecutive
// lines of a log mostly are) costs a comparison and two digits: the
// date, hour, minute and zone of 10/Oct/2000:13:55:36 -0700 are checked
// and converted once a minute, not once a line.
type clfMinute struct {
	set bool // a minute has been read
	// the time's bytes 0-7, 8-15, and 16-17 with the zone (bytes 20-25),
	// as read little-endian
	w0, w1, w2 uint64
	base       int64 // the minute's first second, since the epoch
}

// clfWords packs the 26 bytes of a CLF time but for its seconds (bytes 18
// and 19) into three words.
func clfWords(b []byte) (w0, w1, w2 uint64) {
	_ = b[25]
	w0 = binary.LittleEndian.Uint64(b[0:8])
	w1 = binary.LittleEndian.Uint64(b[8:16])
	w2 = uint64(binary.LittleEndian.Uint16(b[16:18])) | uint64(binary.LittleEndian.Uint32(b[20:24]))<<16 |
		uint64(binary.LittleEndian.Uint16(b[24:26]))<<48
	return w0, w1, w2
}

// parse is parseCLFTime, faster for a time of the minute last read: a
// time of that minute and zone whose seconds are 00-59 and which is in
// range is what parseCLFTime gives, as parseCLFTime has read the rest; any
// other goes to parseCLFTime (and becomes the minute read if it is right
// and has no fraction).
func (c *clfMinute) parse(b []byte) (int64, bool, badLine) {
	if len(b) == 26 {
		w0, w1, w2 := clfWords(b)
		if w0 == c.w0 && w1 == c.w1 && w2 == c.w2 && c.set {
			s1, s0 := b[18]-'0', b[19]-'0' // a byte below '0' wraps to > 9
			if s1 <= 5 && s0 <= 9 {
				if sec := c.base + int64(s1)*10 + int64(s0); sec >= 0 && sec < maxSecond {
					return sec * int64(time.Second), true, badLine{}
				}
			}
		}
	}
	t, whole, bad := parseCLFTime(b)
	if bad.reason == "" && len(b) == 26 {
		// 26 bytes read right are a time without a fraction, a whole
		// second: t is the minute's first second plus the seconds
		c.set = true
		c.w0, c.w1, c.w2 = clfWords(b)
		c.base = t/int64(time.Second) - int64(b[18]-'0')*10 - int64(b[19]-'0')
	}
	return t, whole, bad
}

// parseCLFTime reads 10/Oct/2000:13:55:36 -0700, the time of the common
// log format (with, if present, a fraction after the seconds).
func parseCLFTime(b []byte) (int64, bool, badLine) {
	if len(b) < 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' {
		return 0, false, badTime("%s is not a CLF time (want 10/Oct/2000:13:55:36 -0700)", quoteBytes(b))
	}
	var c civil
	c.mo = month(b[3:6])
	if c.mo == 0 {
		return 0, false, badLine{reason: "bad month", detail: fmt.Sprintf("%q is not a month (want Jan, Feb, Mar, Apr, May, Jun, Jul, Aug, Sep, Oct, Nov or Dec)", b[3:6])}
	}
	var ok [5]bool
	c.d, ok[0] = digits(b[0:2])
	c.y, ok[1] = digits(b[7:11])
	c.h, ok[2] = digits(b[12:14])
	c.mi, ok[3] = digits(b[15:17])
	c.s, ok[4] = digits(b[18:20])
	if ok != [5]bool{true, true, true, true, true} {
		return 0, false, badTime("%s is not a CLF time (want 10/Oct/2000:13:55:36 -0700)", quoteBytes(b))
	}
	rest := b[20:]
	whole := true
	if rest[0] == '.' || rest[0] == ',' {
		ns, n := fraction(rest[1:])
		if n == 0 {
			return 0, false, badTime("%s: no digits after the decimal point", quoteBytes(b))
		}
		c.ns, whole, rest = ns, false, rest[1+n:]
	}
	if len(rest) != 6 || rest[0] != ' ' {
		return 0, false, badTime("%s: want a zone like -0700 after the time", quoteBytes(b))
	}
	off, okz := zoneOffset(rest[1:])
	if !okz || len(rest) != 6 {
		return 0, false, badTime("%s: bad zone %q (want -0700)", quoteBytes(b), rest[1:])
	}
	if msg := c.check(); msg != "" {
		return 0, false, badTime("%s: no %s", quoteBytes(b), msg)
	}
	ns, msg := c.instant(off)
	if msg != "" {
		return 0, false, badTime("%s is %s", quoteBytes(b), msg)
	}
	return ns, whole, badLine{}
}
