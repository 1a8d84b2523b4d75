package lessons

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLessonWordsHaveNoNumbers: every figure a lesson prints comes from a
// placeholder; its words hold no digits.
func TestLessonWordsHaveNoNumbers(t *testing.T) {
	digit := regexp.MustCompile(`[0-9]`)
	for _, l := range All() {
		texts := append([]string{l.Title}, l.explain...)
		texts = append(texts, l.shows...)
		for _, s := range texts {
			words := placeholder.ReplaceAllString(s, "")
			require.False(t, digit.MatchString(words), "lesson %s: a number written in the text: %q", l.Name, s)
		}
	}
}

func TestFill(t *testing.T) {
	s, err := fill("{a} and {b_2}", map[string]string{"a": "x", "b_2": "y"})
	require.NoError(t, err)
	require.Equal(t, "x and y", s)
	_, err = fill("{a} {c}", map[string]string{"a": "x"})
	require.EqualError(t, err, "no figure for {c}")
}

func TestSeconds(t *testing.T) {
	for in, want := range map[int64]string{
		900_000_000: "0.90 s", 1_090_000_000: "1.09 s", 0: "0.00 s", 17_954_240_519: "17.954 s",
		1_095_000_000: "1.095 s", 12_000_000_000: "12.00 s",
	} {
		require.Equal(t, want, seconds(time.Duration(in)))
	}
}

// TestRegistry: the lessons are listed in their order, each name once, each
// with words, runs and figures; Named finds each.
func TestRegistry(t *testing.T) {
	// the first lessons, in their order (more may follow)
	want := []string{"double-burst", "token-vs-leaky", "sliding-window-accuracy", "retry-storm",
		"nginx-burst", "flexible-consistency", "protect-the-backend"}
	require.GreaterOrEqual(t, len(Names()), len(want))
	require.Equal(t, want, Names()[:len(want)])
	seen := map[int]string{}
	for _, l := range All() {
		require.NotContains(t, seen, l.order, "lessons %s and %s share an order", seen[l.order], l.Name)
		seen[l.order] = l.Name
		require.NotEmpty(t, l.Title, l.Name)
		require.NotEmpty(t, l.Runs, l.Name)
		require.NotEmpty(t, l.explain, l.Name)
		require.NotEmpty(t, l.shows, l.Name)
		require.NotNil(t, l.figures, l.Name)
		got, ok := Named(l.Name)
		require.True(t, ok)
		require.Same(t, l, got)
	}
	_, ok := Named("nope")
	require.False(t, ok)
	all := All()
	all[0] = nil
	require.NotNil(t, All()[0], "All returns a copy")
}

// TestWriteWrongRuns: a lesson given fewer runs than it makes says so and
// writes nothing.
func TestWriteWrongRuns(t *testing.T) {
	l, ok := Named("retry-storm")
	require.True(t, ok)
	var buf bytes.Buffer
	err := l.Write(&buf, nil, Options{Width: 80})
	require.EqualError(t, err, "lesson retry-storm: want 2 runs, have 0")
	require.Empty(t, buf.String())
}

func TestWrap(t *testing.T) {
	require.Equal(t, "one two\nthree\n\nfour\n", wrap("one two three\n\nfour", 8))
	require.Equal(t, "  a  table   kept\n", wrap("  a  table   kept", 4))
	require.Equal(t, "- one two\n  three\n", wrapIndent("one two three", 9, "- ", "  "))
	require.True(t, slices.Equal(strings.Split(wrap("x", 1), "\n"), []string{"x", ""}))
}
