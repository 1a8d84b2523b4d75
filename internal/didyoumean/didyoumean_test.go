package didyoumean

import "testing"

func TestClosest(t *testing.T) {
	algorithms := []string{"fixed-window", "sliding-log", "sliding-window", "token-bucket", "gcra", "leaky-bucket", "nginx", "concurrency", "x-time-rate"}
	burst := []string{"at", "count", "over", "type", "key", "clients", "key-prefix", "cost", "start", "end", "retry", "attributes"}
	for _, tc := range []struct {
		s     string
		names []string
		want  string
	}{
		// transposed letters are one edit: count, not cost
		{"cuont", burst, "count"},
		{"cosst", burst, "cost"},
		// case and _ for - are no edit at all
		{"leaky_bucket", algorithms, "leaky-bucket"},
		{"GCRA", algorithms, "gcra"},
		{"Token-Bucket", algorithms, "token-bucket"},
		{"FIXED_WINDOW", algorithms, "fixed-window"},
		{"gcar", algorithms, "gcra"},
		{"fixed-windwo", algorithms, "fixed-window"},
		{"slidng-log", algorithms, "sliding-log"},
		// a typo plus a case difference
		{"Leaky_Bukcet", algorithms, "leaky-bucket"},
		// too far: nothing
		{"hello", algorithms, ""},
		{"abc", []string{"at"}, ""},
		// a name itself suggests nothing
		{"gcra", algorithms, ""},
	} {
		if got := Closest(tc.s, tc.names); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2},
		{"count", "count", 0}, {"cuont", "count", 1}, {"cuont", "cost", 2},
		{"ab", "ba", 1}, {"abc", "ca", 3}, {"kitten", "sitting", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
