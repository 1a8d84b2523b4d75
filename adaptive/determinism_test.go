package adaptive

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDeterminism feeds every algorithm a long seeded sequence of samples
// and hashes the sequence of its limits (and, for the throttle, of its
// decisions and probabilities) to a constant. The constants are the same
// under GOAMD64=v1 and GOAMD64=v3 (where Go would fuse an unrounded x*y+z
// into one FMA instruction) and on every machine: run
//
//	GOAMD64=v1 go test ./adaptive -run Determinism
//	GOAMD64=v3 go test ./adaptive -run Determinism
//
// The inputs are made with integer draws only (no ExpFloat64 or
// NormFloat64, which call math.Exp and math.Log).
func TestDeterminism(t *testing.T) {
	windowed := func(l Limit, err error) Limit {
		require.NoError(t, err)
		w, err := NewWindowed(DefaultWindowConfig(), l)
		require.NoError(t, err)
		return w
	}
	must := func(l Limit, err error) Limit {
		require.NoError(t, err)
		return l
	}
	envoyCfg := DefaultEnvoyConfig()
	envoyCfg.Interval, envoyCfg.MinRTTCalcInterval = 100*ms, 3*time.Second
	for _, c := range []struct {
		name string
		l    Limit
		want string
	}{
		{"aimd", must(NewAIMD(DefaultAIMDConfig())),
			"bcb5f5c43b7ac0278662b5d218bacf014edd0964942316fbe9d5e376d967b89a"},
		{"vegas", must(NewVegas(DefaultVegasConfig(), seeded(21))),
			"9928382db5d3f0063d7bbe4ca47d35e3b406ea583110a7ef17bc5e6d2e871aed"},
		{"gradient2", must(NewGradient2(DefaultGradient2Config())),
			"e55d7675621e818557aa7ab2c9da30eb9abc7a1ca695e68be2b1d760a2c9e21c"},
		{"aimd windowed", windowed(NewAIMD(DefaultAIMDConfig())),
			"90b790e39560eb95c9ba7d2cae3fbd19029beab00a3c0da3f30c908f07da26f7"},
		{"vegas windowed", windowed(NewVegas(DefaultVegasConfig(), seeded(22))),
			"8df0c1b71e81378ac9ca3b9acbcaf597f3368af47f632d2bf9fa04a5e8a8d8c3"},
		{"gradient2 windowed", windowed(NewGradient2(DefaultGradient2Config())),
			"be48938c56a77313c0bf60a59f2cb0d47e796116d36dec239575333f806a5645"},
		{"envoy-adaptive", must(NewEnvoy(envoyCfg, seeded(23), 0)),
			"eeeab672182e5210028f3c0be992dac309c77a43d5b5e56e22c36347804026e5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := seeded(99)
			h := sha256.New()
			var buf [8]byte
			now := time.Duration(0)
			distinct := map[int]bool{}
			for range 300000 {
				now += time.Duration(rng.Uint64N(uint64(500 * time.Microsecond)))
				lim := c.l.Limit(now)
				// rtts from 1ms to 40ms, a tenth of them up to 10x longer
				rtt := time.Millisecond + time.Duration(rng.Uint64N(uint64(39*time.Millisecond)))
				if rng.Uint64N(10) == 0 {
					rtt *= time.Duration(1 + rng.Uint64N(10))
				}
				// drops, one in 25, only in one 5s phase out of four, so that
				// windows without a drop occur too
				dropped := rng.Uint64N(25) == 0 && now/(5*time.Second)%4 == 3
				c.l.OnSample(now, rtt, 1+int(rng.Uint64N(uint64(2*lim+1))), dropped)
				binary.LittleEndian.PutUint64(buf[:], uint64(c.l.Limit(now)))
				h.Write(buf[:])
				distinct[c.l.Limit(now)] = true
				for _, f := range floatState(c.l) {
					binary.LittleEndian.PutUint64(buf[:], math.Float64bits(f))
					h.Write(buf[:])
				}
			}
			require.Greater(t, len(distinct), 10, "the limit moves: the hash covers real arithmetic")
			got := hex.EncodeToString(h.Sum(nil))
			require.Equal(t, c.want, got)
		})
	}
	t.Run("sre-throttle", func(t *testing.T) {
		th, err := NewThrottle(ThrottleConfig{K: 1.7, Window: 2 * time.Minute})
		require.NoError(t, err)
		rng := seeded(98)
		h := sha256.New()
		var buf [8]byte
		now := time.Duration(0)
		for range 300000 {
			now += time.Duration(rng.Uint64N(uint64(2 * time.Millisecond)))
			key := Key(rng.Uint64N(3))
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(th.RejectProbability(now, key)))
			h.Write(buf[:])
			if th.Admit(now, key, rng.Float64()) {
				h.Write([]byte{1})
				th.OnResult(now, key, rng.Uint64N(3) == 0)
			} else {
				h.Write([]byte{0})
			}
		}
		require.Equal(t, "06230662055eae38dd2328e3fa6ae5a320b916d518e4de1f632b2d2105520561", hex.EncodeToString(h.Sum(nil)))
	})
}

// floatState returns the floating-point state of a limit, for the
// determinism test: hashing it, not only the integer limits, catches a
// difference in the last bit of any float the rules keep.
func floatState(l Limit) []float64 {
	switch l := l.(type) {
	case *Vegas:
		return []float64{l.estimated, l.probeJitter}
	case *Gradient2:
		return []float64{l.estimated, l.long.value, l.long.sum}
	case *Windowed:
		return floatState(l.delegate)
	case *Envoy:
		return []float64{float64(l.minRTT), float64(l.sampleRTT)}
	}
	return nil
}
