package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMarshalReadsBack: every built-in, decoded and marshalled, reads
// back as the same scenario.
func TestMarshalReadsBack(t *testing.T) {
	for _, info := range Builtins() {
		t.Run(info.Name, func(t *testing.T) {
			file, data, err := ResolveText(info.Name)
			require.NoError(t, err)
			f, err := Decode(file, data)
			require.NoError(t, err)
			out, err := Marshal(f)
			require.NoError(t, err)
			want, err := Parse(file, data)
			require.NoError(t, err)
			got, err := Parse(file, out)
			require.NoError(t, err, "%s", out)
			require.Equal(t, want, got, "%s", out)
		})
	}
}
