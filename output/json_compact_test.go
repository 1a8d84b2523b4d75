package output

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"testing"
)

// compactReference is the plain statement of compactNumberArrays: an
// indented JSON array of numbers only, matched by a regular expression,
// written on one line.
func compactReference(b []byte) []byte {
	numberArray := regexp.MustCompile(`\[\n\s*(-?[0-9][0-9.eE+-]*(?:,\n\s*-?[0-9][0-9.eE+-]*)*)\n\s*\]`)
	commaNewline := regexp.MustCompile(`,\n\s*`)
	return numberArray.ReplaceAllFunc(b, func(m []byte) []byte {
		inner := numberArray.FindSubmatch(m)[1]
		out := append([]byte{'['}, commaNewline.ReplaceAll(inner, []byte(", "))...)
		return append(out, ']')
	})
}

// TestCompactNumberArraysMatchesReference: the one-pass compaction writes
// the bytes the regular expression writes, on indented JSON (arrays of
// numbers, of strings, of arrays, empty, nested in objects) and on random
// text made of the bytes that matter (brackets, commas, white space,
// number characters, quotes), where arrays are cut short or broken.
func TestCompactNumberArraysMatchesReference(t *testing.T) {
	check := func(in []byte) {
		t.Helper()
		if got, want := compactNumberArrays(in), compactReference(in); !bytes.Equal(got, want) {
			t.Fatalf("compacting %q\ngot  %q\nwant %q", in, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(8); {
		case k == 0 || depth > 3:
			return rng.Int64N(2001) - 1000
		case k == 1:
			return rng.NormFloat64() * 1e-9
		case k == 2:
			return "s[\n1,\n2\n]"
		case k == 3:
			nums := make([]float64, rng.IntN(5))
			for i := range nums {
				nums[i] = float64(rng.Int64N(1e6)) / 8
			}
			return nums
		case k == 4:
			vs := make([]any, rng.IntN(4))
			for i := range vs {
				vs[i] = value(depth + 1)
			}
			return vs
		default:
			m := map[string]any{}
			for i := range rng.IntN(4) {
				m[string(rune('a'+i))] = value(depth + 1)
			}
			return m
		}
	}
	for range 500 {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(value(0)); err != nil {
			t.Fatal(err)
		}
		check(buf.Bytes())
	}
	const alphabet = "[[[]],,\n\n \t\r\f-+01.eE\"a{}"
	for range 5000 {
		in := make([]byte, rng.IntN(40))
		for i := range in {
			in[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(in)
	}
	for _, in := range []string{"", "[", "[\n", "[\n1", "[\n1\n", "[\n1\n]", "[\n-\n]", "[\n1,\n]", "[\n1,\n2\n ]x[\n3\n]", "[\n[\n1\n]\n]"} {
		check([]byte(in))
	}
}
