package sweep

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ratesim/ratesim/scenarios"
)

// MaxValues bounds the values of one --vary, and MaxPoints the grid: a
// typo such as 1..1000000:1 is an error, not an hour of work.
const (
	MaxValues = 10_000
	MaxPoints = 1_000_000
)

// Field is one varied scenario field: its path as written and the values
// it takes, in order.
type Field struct {
	Path   string
	segs   []segment
	Values []Value
}

// segment is one step of a field path: a mapping key, optionally followed
// by a selector in brackets (a list index, or an algorithm's label).
type segment struct {
	key    string
	sel    string
	hasSel bool
}

// Value is one value of a varied field: Text as it goes into the scenario
// file (a YAML scalar), and, when it is a number or a duration, Num (a
// duration in nanoseconds) for goals and charts.
type Value struct {
	Text string
	// Kind is "int", "decimal", "duration", "bool" or "string".
	Kind string
	Num  float64
}

// Usage is an error in a flag's value (--vary, --goal, --shard): the flag,
// what was found and what is wanted. The command exits 2 with it.
type Usage struct {
	Flag string
	Msg  string
}

func (e *Usage) Error() string { return e.Flag + ": " + e.Msg }

func usagef(flag, format string, args ...any) error {
	return &Usage{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}

const wantValues = "want a list (5,10,20), a range with a step (5..50:5, 10ms..100ms:10ms) or a geometric range (1ms..1s*10)"

// ParseVary parses one --vary FIELD=VALUES.
//
// VALUES is a comma-separated list of values, each as it would be written
// in the scenario file (5, 10ms, true, round-robin); a range A..B:S, from
// A to B included in steps of S, of integers, decimals or durations; or a
// geometric range A..B*F, from A multiplying by the integer F >= 2 while
// the value is at most B.
func ParseVary(s string) (Field, error) {
	const flag = "--vary"
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return Field{}, usagef(flag, "%q: want printable text, FIELD=VALUES", s)
	}
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		return Field{}, usagef(flag, "%q: want FIELD=VALUES, e.g. limit.burst=5,10,20", s)
	}
	path, vals := strings.TrimSpace(s[:eq]), strings.TrimSpace(s[eq+1:])
	segs, err := parsePath(path)
	if err != nil {
		return Field{}, usagef(flag, "%q: %v", path, err)
	}
	f := Field{Path: path, segs: segs}
	if vals == "" {
		return Field{}, usagef(flag, "%s=: no values, %s", path, wantValues)
	}
	if strings.Contains(vals, "..") {
		f.Values, err = parseRange(vals)
	} else {
		for _, t := range strings.Split(vals, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				err = fmt.Errorf("%q: an empty value in the list, %s", vals, wantValues)
				break
			}
			f.Values = append(f.Values, valueOf(t))
		}
	}
	if err != nil {
		return Field{}, usagef(flag, "%s=%v", path, err)
	}
	if len(f.Values) > MaxValues {
		return Field{}, usagef(flag, "%s=%s: %d values, want at most %d", path, vals, len(f.Values), MaxValues)
	}
	seen := map[string]bool{}
	for _, v := range f.Values {
		if seen[v.Text] {
			return Field{}, usagef(flag, "%s=%s: %s appears twice, want each value once", path, vals, v.Text)
		}
		seen[v.Text] = true
	}
	return f, nil
}

// parsePath splits a field path such as algorithms[gcra].burst or
// cluster.store.rtt into its segments.
func parsePath(p string) ([]segment, error) {
	if p == "" {
		return nil, fmt.Errorf("no field, want a scenario path such as limit.burst or algorithms[gcra].burst")
	}
	var segs []segment
	for p != "" {
		i := strings.IndexAny(p, ".[")
		var s segment
		if i < 0 {
			s.key, p = p, ""
		} else {
			s.key, p = p[:i], p[i:]
		}
		if s.key == "" {
			return nil, fmt.Errorf("an empty name in the path, want names joined by dots such as cluster.store.rtt")
		}
		if strings.HasPrefix(p, "[") {
			j := strings.IndexByte(p, ']')
			if j < 0 {
				return nil, fmt.Errorf("%s[ is not closed, want %s[LABEL] or %s[INDEX]", s.key, s.key, s.key)
			}
			s.sel, s.hasSel, p = p[1:j], true, p[j+1:]
			if s.sel == "" {
				return nil, fmt.Errorf("%s[]: want a label or an index in the brackets", s.key)
			}
		}
		segs = append(segs, s)
		if p == "" {
			break
		}
		if p[0] != '.' {
			return nil, fmt.Errorf("%q after ], want . and a field name", p)
		}
		p = p[1:]
		if p == "" {
			return nil, fmt.Errorf("the path ends with a dot, want a field name after it")
		}
	}
	return segs, nil
}

// valueOf classifies a value as written.
func valueOf(t string) Value {
	v := Value{Text: t, Kind: "string"}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		v.Kind, v.Num = "int", float64(n)
	} else if isDecimalText(t) {
		f, _ := strconv.ParseFloat(t, 64)
		v.Kind, v.Num = "decimal", f
	} else if t == "true" || t == "false" {
		v.Kind = "bool"
	} else if d, err := scenarios.ParseSignedDuration(t); err == nil && t != "0" {
		v.Kind, v.Num = "duration", float64(d)
	}
	return v
}

func isDecimalText(t string) bool {
	s := strings.TrimPrefix(t, "-")
	i := strings.IndexByte(s, '.')
	if i <= 0 || i == len(s)-1 {
		return false
	}
	for j, c := range s {
		if j != i && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// parseRange reads A..B:S or A..B*F.
func parseRange(s string) ([]Value, error) {
	lohi, step, geometric := s, "", false
	if i := strings.LastIndexAny(s, ":*"); i > 0 {
		lohi, step, geometric = s[:i], s[i+1:], s[i] == '*'
	} else {
		return nil, fmt.Errorf("%q: a range needs a step (:S) or a factor (*F), %s", s, wantValues)
	}
	parts := strings.Split(lohi, "..")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return nil, fmt.Errorf("%q: %s", s, wantValues)
	}
	lo, hi := valueOf(parts[0]), valueOf(parts[1])
	if geometric {
		f, err := strconv.ParseInt(step, 10, 64)
		if err != nil || f < 2 {
			return nil, fmt.Errorf("%q: factor %q, want an integer >= 2 (1ms..1s*10)", s, step)
		}
		return geometricRange(s, lo, hi, f)
	}
	return linearRange(s, lo, hi, valueOf(step))
}

// scaled is a number as an exact integer: a count, nanoseconds, or a
// decimal times 10^scale.
type scaled struct {
	n     *big.Int
	scale int // decimal places
}

func scaledOf(v Value) (scaled, bool) {
	switch v.Kind {
	case "int":
		n, _ := new(big.Int).SetString(v.Text, 10)
		return scaled{n: n}, true
	case "duration":
		d, _ := scenarios.ParseSignedDuration(v.Text)
		return scaled{n: big.NewInt(int64(d))}, true
	case "decimal":
		i := strings.IndexByte(v.Text, '.')
		n, ok := new(big.Int).SetString(v.Text[:i]+v.Text[i+1:], 10)
		return scaled{n: n, scale: len(v.Text) - i - 1}, ok
	}
	return scaled{}, false
}

func (s scaled) rescale(to int) *big.Int {
	return new(big.Int).Mul(s.n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(to-s.scale)), nil))
}

// kindOf is the kind of a range's values: durations if any bound is one.
func rangeKind(s string, vs ...Value) (string, error) {
	kind := ""
	for _, v := range vs {
		switch v.Kind {
		case "int", "decimal", "duration":
		default:
			return "", fmt.Errorf("%q: %q is not a number or a duration, %s", s, v.Text, wantValues)
		}
		if v.Text == "0" {
			continue // zero is a number and a duration
		}
		k := v.Kind
		if k == "decimal" && kind == "int" || k == "int" && kind == "decimal" {
			k = "decimal"
		}
		if kind != "" && k != kind && (k == "duration" || kind == "duration") {
			return "", fmt.Errorf("%q: mixes durations and numbers, want both bounds and the step alike (10ms..100ms:10ms)", s)
		}
		if kind == "" || k == "decimal" || k == "duration" {
			kind = k
		}
	}
	if kind == "" {
		kind = "int"
	}
	return kind, nil
}

func linearRange(s string, lo, hi, step Value) ([]Value, error) {
	kind, err := rangeKind(s, lo, hi, step)
	if err != nil {
		return nil, err
	}
	a, _ := scaledOf(lo)
	b, _ := scaledOf(hi)
	c, _ := scaledOf(step)
	sc := max(a.scale, b.scale, c.scale)
	x, end, d := a.rescale(sc), b.rescale(sc), c.rescale(sc)
	if d.Sign() <= 0 {
		return nil, fmt.Errorf("%q: step %s, want a step > 0", s, step.Text)
	}
	if x.Cmp(end) > 0 {
		return nil, fmt.Errorf("%q: %s > %s, want the smaller bound first", s, lo.Text, hi.Text)
	}
	n := new(big.Int).Sub(end, x)
	n.Div(n, d)
	if n.Cmp(big.NewInt(MaxValues)) >= 0 {
		return nil, fmt.Errorf("%q: more than %d values, want fewer (a larger step)", s, MaxValues)
	}
	var out []Value
	for ; x.Cmp(end) <= 0; x = new(big.Int).Add(x, d) {
		v, err := format(kind, x, sc)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func geometricRange(s string, lo, hi Value, f int64) ([]Value, error) {
	kind, err := rangeKind(s, lo, hi)
	if err != nil {
		return nil, err
	}
	a, _ := scaledOf(lo)
	b, _ := scaledOf(hi)
	sc := max(a.scale, b.scale)
	x, end := a.rescale(sc), b.rescale(sc)
	if x.Sign() <= 0 {
		return nil, fmt.Errorf("%q: a geometric range starts above 0, want 1ms..1s*10", s)
	}
	if x.Cmp(end) > 0 {
		return nil, fmt.Errorf("%q: %s > %s, want the smaller bound first", s, lo.Text, hi.Text)
	}
	var out []Value
	for ; x.Cmp(end) <= 0; x = new(big.Int).Mul(x, big.NewInt(f)) {
		v, err := format(kind, x, sc)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// format writes x (times 10^-scale) as a value of kind.
func format(kind string, x *big.Int, scale int) (Value, error) {
	if !x.IsInt64() {
		return Value{}, fmt.Errorf("%s is out of range", x)
	}
	n := x.Int64()
	switch kind {
	case "duration":
		return valueOf(FormatDuration(time.Duration(n))), nil
	case "decimal":
		neg := n < 0
		if neg {
			n = -n
		}
		p := int64(math.Pow10(scale))
		t := strconv.FormatInt(n/p, 10)
		if frac := n % p; frac != 0 {
			fs := fmt.Sprintf("%0*d", scale, frac)
			t += "." + strings.TrimRight(fs, "0")
		}
		if neg {
			t = "-" + t
		}
		return valueOf(t), nil
	}
	return valueOf(strconv.FormatInt(n, 10)), nil
}

// FormatDuration writes d exactly in the largest unit that divides it (90s,
// 1500ms, 2m, 250us), a form the scenario file takes back.
func FormatDuration(d time.Duration) string { return scenarios.DurationText(d) }
