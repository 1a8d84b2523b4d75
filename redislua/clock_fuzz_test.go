package redislua

import "testing"

// FuzzParseClock: --clock's parser accepts exactly arg and redis, which
// print back as themselves, and refuses anything else with an error.
func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"arg", "redis", "", "Redis", "arg ", "wall", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseClock(s)
		if (err == nil) != (s == "arg" || s == "redis") {
			t.Fatalf("ParseClock(%q) = %v, %v", s, c, err)
		}
		if err == nil && c.String() != s {
			t.Fatalf("ParseClock(%q) prints as %q", s, c)
		}
	})
}
