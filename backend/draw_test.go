package backend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNormQuantile: AS 241 is the normal quantile: the normal CDF
// (math.Erfc) at z gives back p to 1e-13 relative (math.Erfcinv itself is
// only within 2e-13 in the tails), and it is symmetric.
func TestNormQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		p := rng.Float64()
		if p == 0 {
			continue
		}
		if rng.IntN(4) == 0 { // the tails
			p = math.Pow(10, -1-rng.Float64()*14)
		}
		z := normQuantile(p)
		cdf := 0.5 * math.Erfc(-z/math.Sqrt2)
		if p > 0.5 {
			require.InDelta(t, 1-p, 0.5*math.Erfc(z/math.Sqrt2), 1e-13*(1-p), "p=%v", p)
			continue
		}
		require.InDelta(t, p, cdf, 1e-13*p, "p=%v", p)
	}
	require.InDelta(t, z99, normQuantile(0.99), 1e-15)
	require.Equal(t, 0.0, normQuantile(0.5))
	require.InDelta(t, -normQuantile(0.2), normQuantile(0.8), 1e-15)
	require.InDelta(t, -8.209536151601387, normQuantile(1.0/(1<<53)), 1e-12) // the least u drawn
}

// TestLognormalParams: the sigma solved from p99/mean gives back that
// mean and p99; p99 below the mean and p99/mean beyond exp(z99^2/2) are
// refused, the bound itself accepted.
func TestLognormalParams(t *testing.T) {
	for _, c := range []struct{ mean, p99 float64 }{{20e6, 120e6}, {100e6, 100e6}, {1e6, 14e6}, {1, 2}} {
		mu, sigma, err := lognormalParams(durNs(c.mean), durNs(c.p99))
		require.NoError(t, err)
		require.InDelta(t, c.mean, math.Exp(mu+sigma*sigma/2), c.mean*1e-12)
		require.InDelta(t, c.p99, math.Exp(mu+z99*sigma), c.p99*1e-12)
		require.LessOrEqual(t, sigma, z99) // the smaller root
	}
	_, _, err := lognormalParams(20e6, 19e6)
	require.ErrorContains(t, err, "below its mean")
	_, _, err = lognormalParams(1e6, 15e6)
	require.ErrorContains(t, err, "at most 14.97 times")
	_, sigma, err := lognormalParams(1e9, durNs(1e9*maxP99Ratio))
	require.NoError(t, err)
	require.InDelta(t, z99, sigma, 1e-4)
}

func durNs(x float64) time.Duration { return time.Duration(math.Round(x)) }
