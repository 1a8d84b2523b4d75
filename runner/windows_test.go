package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// TestWindowsArePeaks: on every built-in, the largest count of each row's
// trailing policy window is its peak over that window, every key together,
// and the key's is its key peak, of the key the key peak names.
func TestWindowsArePeaks(t *testing.T) {
	for _, info := range scenarios.Builtins() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			sc, err := scenarios.Builtin(info.Name)
			require.NoError(t, err)
			r, err := Run(sc, Options{Windows: true})
			require.NoError(t, err)
			for i := range r.Results {
				res := &r.Results[i]
				w := int64(policyWindow(&r.Config, i))
				var pk sim.Peak
				var kp sim.KeyPeak
				for _, p := range res.Peaks {
					if p.WindowNs == w {
						pk = p
					}
				}
				for _, p := range res.KeyPeaks {
					if p.WindowNs == w {
						kp = p
					}
				}
				require.Equal(t, w, pk.WindowNs, "%s: no peak over its policy window", res.Label)
				require.Equal(t, pk.Count, peakOf(res.Window), "%s: every key", res.Label)
				if r.Keys > 1 && kp.Count > 0 {
					require.NotNil(t, res.KeyWindow, res.Label)
					require.Equal(t, kp.Key, res.KeyWindow.Key, res.Label)
					require.Equal(t, kp.Count, peakOf(res.KeyWindow), "%s: key %s", res.Label, kp.Key)
				}
			}
		})
	}
}

func peakOf(s *sim.WindowSeries) int64 {
	if s == nil {
		return 0
	}
	return slices.Max(s.Max)
}

// TestKeyRunProgress: the charts' second run, which follows each row's
// busiest key, says how far it has got as the first does; with one key
// there is no second run, so nothing is said of one.
func TestKeyRunProgress(t *testing.T) {
	const text = `name: keys
limit: 100/s
duration: 10s
algorithms: [token-bucket]
traffic:
  - {type: steady, key: bob, rate: 10000/s}
`
	for _, c := range []struct {
		extra  string
		second bool
	}{
		{"", false},
		{"  - {type: steady, key: alice, rate: 1000/s}\n", true},
	} {
		sc, err := scenarios.Parse("keys.yaml", []byte(text+c.extra))
		require.NoError(t, err)
		var first, second []time.Duration
		r, err := Run(sc, Options{
			Windows:     true,
			Progress:    func(done, total time.Duration) { first = append(first, done) },
			KeyProgress: func(done, total time.Duration) { second = append(second, done) },
		})
		require.NoError(t, err)
		require.NotEmpty(t, first)
		if !c.second {
			require.Empty(t, second, "a second run with one key")
			require.Nil(t, r.Results[0].KeyWindow)
			continue
		}
		require.NotEmpty(t, second, "the second run said nothing")
		require.True(t, slices.IsSorted(second))
		require.Equal(t, "bob", r.Results[0].KeyWindow.Key)
	}
}
