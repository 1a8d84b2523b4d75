// Package didyoumean finds the name a mistyped one was likely meant to be,
// for the "did you mean" of ratesim's errors (docs/commands.md, Errors).
package didyoumean

import "strings"

// Closest returns the name in names that s was most likely meant to be, or
// "" when none is close enough to be a likely typo. Case and '_' for '-'
// are no difference at all (GCRA is gcra, leaky_bucket is leaky-bucket);
// otherwise the distance counts an inserted, deleted or replaced letter,
// and two neighbouring letters swapped (cuont for count), as one edit. A
// name is close at one or two edits, and at most half its length. On a
// tie the first of names wins.
func Closest(s string, names []string) string {
	ns := normal(s)
	best, bestDist := "", 3
	for _, n := range names {
		nn := normal(n)
		if nn == ns {
			if n == s {
				continue // s is a name: nothing to suggest
			}
			return n
		}
		if dist := distance(ns, nn); dist < bestDist && 2*dist <= len(nn) {
			best, bestDist = n, dist
		}
	}
	return best
}

// normal is s in lower case with '_' written '-'.
func normal(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

// distance is the optimal string alignment distance of a and b, in bytes:
// insertions, deletions, substitutions and transpositions of neighbours,
// each one edit (Damerau, "A technique for computer detection and
// correction of spelling errors", CACM 1964). Strings longer than 64
// bytes are never close.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	// three rows of the table: i-2, i-1 and i
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				c = min(c, prev2[j-2]+1)
			}
			cur[j] = c
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
