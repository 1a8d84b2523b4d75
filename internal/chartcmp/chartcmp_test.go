package chartcmp

import "testing"

func TestDiff(t *testing.T) {
	want := []byte(`<path d="M172.7,381.37L192.7,391.42" style="fill:#1F77B4" />` + "\n<text x=\"1\">peak 2.0x</text>\n")
	for _, tc := range []struct {
		name, got string
		same      bool
	}{
		{"the same", string(want), true},
		{"a last digit rounded the other way", `<path d="M172.7,381.38L192.7,391.41" style="fill:#1F77B4" />` + "\n<text x=\"1\">peak 2.0x</text>\n", true},
		{"moved", `<path d="M172.7,381.4L192.7,391.42" style="fill:#1F77B4" />` + "\n<text x=\"1\">peak 2.0x</text>\n", false},
		{"another colour", `<path d="M172.7,381.37L192.7,391.42" style="fill:#1F77B5" />` + "\n<text x=\"1\">peak 2.0x</text>\n", false},
		{"another text", `<path d="M172.7,381.37L192.7,391.42" style="fill:#1F77B4" />` + "\n<text x=\"1\">peak 2.1x</text>\n", false},
		{"another word", `<path d="M172.7,381.37L192.7,391.42" style="fill:#1F77B4" />` + "\n<text x=\"1\">peak 2.0y</text>\n", false},
		{"one element more", string(want) + "<path d=\"M0,0\" />", false},
		{"one element less", `<path d="M172.7,381.37L192.7,391.42" style="fill:#1F77B4" />`, false},
	} {
		if d := Diff([]byte(tc.got), want); (d == "") != tc.same {
			t.Errorf("%s: Diff = %q", tc.name, d)
		}
	}
}
