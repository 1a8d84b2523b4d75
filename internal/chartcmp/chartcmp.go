// Package chartcmp compares two renderings of a chart as SVG by what they
// draw: the same elements, texts, colours and styles, and coordinates
// equal to within a hundredth of a point. Unlike the bytes of a PNG,
// which the rasterizer's floating point makes differ from one CPU to the
// next (fused multiply-add on arm64, or amd64 built with GOAMD64=v3), this
// holds on every platform, so that chart goldens are portable; an SVG
// golden is still a picture to look at when reviewing a change.
package chartcmp

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Tolerance is how far two coordinates may be apart and still be the same
// drawing: SVG writes them with two decimals, so a hundredth of a point
// and a little more, for a last digit rounded the other way.
const Tolerance = 0.015

var number = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)

// Diff returns "" when got and want draw the same, else where they first
// differ: the line of want and the two pieces.
func Diff(got, want []byte) string {
	g, w := pieces(string(got)), pieces(string(want))
	line := 1
	for i := range min(len(g), len(w)) {
		a, b := g[i], w[i]
		if a.num != b.num || (!a.num && a.text != b.text) || (a.num && math.Abs(a.val-b.val) > Tolerance) {
			return fmt.Sprintf("line %d: drawn %q, want %q", line, context(g, i), context(w, i))
		}
		line += strings.Count(b.text, "\n")
	}
	if len(g) != len(w) {
		return fmt.Sprintf("line %d: %d pieces drawn, want %d (one ends early)", line, len(g), len(w))
	}
	return ""
}

// piece is a run of text between numbers, or a number.
type piece struct {
	text string
	num  bool
	val  float64
}

func pieces(s string) []piece {
	var out []piece
	last := 0
	for _, m := range number.FindAllStringIndex(s, -1) {
		if m[0] > last {
			out = append(out, piece{text: s[last:m[0]]})
		}
		v, _ := strconv.ParseFloat(s[m[0]:m[1]], 64)
		out = append(out, piece{text: s[m[0]:m[1]], num: true, val: v})
		last = m[1]
	}
	if last < len(s) {
		out = append(out, piece{text: s[last:]})
	}
	return out
}

// context is piece i with a few around it, for a message.
func context(ps []piece, i int) string {
	var b strings.Builder
	for j := max(0, i-3); j < min(len(ps), i+4); j++ {
		b.WriteString(ps[j].text)
	}
	return b.String()
}
