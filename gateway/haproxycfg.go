package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// hword is one word of an haproxy.cfg line, after quotes and escapes, and
// the column where it starts.
type hword struct {
	s   string
	col int
}

// hline is one non-empty line of an haproxy.cfg: its words and where.
type hline struct {
	words []hword
	line  int
}

// arg returns word i's text, or "" past the end.
func (l *hline) arg(i int) string {
	if i < len(l.words) {
		return l.words[i].s
	}
	return ""
}

// text returns the line's words joined by one space, as written roughly.
func (l *hline) text() string {
	s := make([]string, len(l.words))
	for i, w := range l.words {
		s[i] = w.s
	}
	return strings.Join(s, " ")
}

// splitHAProxy splits an haproxy.cfg into lines of words as HAProxy's
// parse_line (src/tools.c) does, for what the limits need: words are
// separated by blanks; '#' outside quotes starts a comment to the end of
// the line; "..." and '...' quote blanks and '#' (the quotes removed; in
// double quotes a backslash escapes the next character, in single quotes
// nothing is escaped); outside quotes a backslash escapes the next
// character (\ , \#, \\, \", \'). Environment variables are kept as
// written (HAProxy expands "${NAME}"; the limits read here do not use
// them). A quote left open at the end of a line is an error.
func splitHAProxy(file string, data []byte) ([]hline, error) {
	var out []hline
	for n, raw := range strings.Split(string(data), "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		l := hline{line: n + 1}
		var cur strings.Builder
		inWord := false
		start := 0
		var quote byte
		quoteCol := 0
		flush := func() {
			if inWord {
				l.words = append(l.words, hword{cur.String(), start})
				cur.Reset()
				inWord = false
			}
		}
		i := 0
	scan:
		for i < len(raw) {
			c := raw[i]
			col := i + 1
			switch {
			case quote == '\'':
				if c == '\'' {
					quote = 0
				} else {
					cur.WriteByte(c)
				}
			case quote == '"':
				switch {
				case c == '"':
					quote = 0
				case c == '\\' && i+1 < len(raw):
					i++
					cur.WriteByte(raw[i])
				default:
					cur.WriteByte(c)
				}
			case c == ' ' || c == '\t':
				flush()
			case c == '#':
				break scan
			default:
				if !inWord {
					inWord, start = true, col
				}
				switch {
				case c == '"' || c == '\'':
					quote, quoteCol = c, col
				case c == '\\' && i+1 < len(raw):
					i++
					cur.WriteByte(raw[i])
				default:
					cur.WriteByte(c)
				}
			}
			i++
		}
		if quote != 0 {
			return nil, &Error{File: file, Line: n + 1, Col: quoteCol, Msg: fmt.Sprintf("unclosed %c quote", quote)}
		}
		flush()
		if len(l.words) > 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

// haproxyDuration parses a time as HAProxy's parse_time_err does: a whole
// number followed by a unit, us, ms, s, m, h or d; without one, unit
// (HAProxy's default for the setting: ms for expire and the periods).
func haproxyDuration(s string, unit time.Duration) (time.Duration, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	switch s[i:] {
	case "":
	case "us":
		unit = time.Microsecond
	case "ms":
		unit = time.Millisecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	default:
		return 0, false
	}
	if n > int64(1<<62)/int64(unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// haproxySize parses a stick-table size: a whole number, optionally
// followed by k, m or g (HAProxy's parse_size_err: powers of 1024).
func haproxySize(s string) bool {
	s = strings.TrimRight(s, "kKmMgG")
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}
