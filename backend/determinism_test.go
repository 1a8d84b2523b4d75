package backend

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/portable"
)

// mixedConfig exercises every part of the model: lognormal service,
// errors, a bounded LIFO queue, timeouts with drop-expired, each fault.
func mixedConfig() Config {
	return Config{
		Workers: 3, Service: Service{Dist: Lognormal, Mean: 20 * ms, P99: 120 * ms},
		Queue: 20, Discipline: LIFO, Timeout: 150 * ms, DropExpired: true, Errors: 0.02,
		Faults: []Fault{
			{Type: Slow, At: 200 * time.Second, For: 100 * time.Second, Factor: 2.5},
			{Type: Pause, At: 250 * time.Second, For: 2 * time.Second},
			{Type: Workers, At: 400 * time.Second, For: 300 * time.Second, Count: 1},
		},
		Seed: 20240611, Bucket: 100 * ms,
	}
}

// digest runs the mixed backend over n Poisson arrivals at 140/s, one in
// five held by a shaper for up to 6ms, and returns the sha256 of every
// event and of the result with its series, in JSON.
func digest(t *testing.T, n int) string {
	h := sha256.New()
	var buf [40]byte
	b, err := New(mixedConfig(), func(e Event) {
		binary.LittleEndian.PutUint64(buf[0:], uint64(e.At))
		binary.LittleEndian.PutUint64(buf[8:], e.Req.ID)
		binary.LittleEndian.PutUint64(buf[16:], uint64(e.Service))
		binary.LittleEndian.PutUint64(buf[24:], uint64(e.Req.Admitted))
		buf[32] = byte(e.Kind)
		buf[33] = 0
		if e.Client {
			buf[33] = 1
		}
		h.Write(buf[:34])
	})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(99, 0x5eed))
	var at time.Duration
	for i := range n {
		u := float64(rng.Uint64()>>11+1) / (1 << 53)
		at += toDuration(float64(-portable.Log(u) * (float64(time.Second) / 140)))
		b.Until(at)
		r := Request{ID: uint64(i), Attempt: 1, Arrived: at, Admitted: at}
		if i%5 == 0 {
			r.Admitted += time.Duration(i%7) * ms
		}
		require.NoError(t, b.Submit(&r))
	}
	b.Until(math.MaxInt64)
	res := b.Result(0, at)
	js, err := json.Marshal(struct {
		R Result
		S Series
	}{res, res.Series})
	require.NoError(t, err)
	h.Write(js)
	return hex.EncodeToString(h.Sum(nil))
}

// drawsDigest is the sha256 of a million service draws of each
// distribution and of the portable functions over a sweep of arguments.
func drawsDigest() string {
	h := sha256.New()
	var buf [8]byte
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(buf[:], x)
		h.Write(buf[:])
	}
	for _, svc := range []Service{{Dist: Exponential, Mean: 20 * ms}, {Dist: Lognormal, Mean: 20 * ms, P99: 250 * ms}} {
		s := newSampler(&Config{Service: svc, Seed: 5})
		for id := range uint64(1_000_000) {
			put(uint64(s.service(s.root(id), int32(id%3+1))))
		}
	}
	for i := range 100_000 {
		x := float64(i+1) / 100_000
		put(math.Float64bits(portable.Log(x * 1e3)))
		put(math.Float64bits(portable.Exp(x*80 - 40)))
		put(math.Float64bits(normQuantile(x * 0.99999)))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The digests of the runs below. They must be the same on every platform
// and at every GOAMD64 level: run
//
//	GOAMD64=v1 go test ./backend/ -run Determinism
//	GOAMD64=v3 go test ./backend/ -run Determinism
//
// (v3 lets the compiler fuse a*b+c into an FMA wherever the code does not
// round the product explicitly).
const (
	wantRun   = "fbcc9689edc4703b9e4080ba8024230f80e266e7b74d74a5c9b9859e09985719"
	wantDraws = "61d8ab43613b6d4f82367512671a1c6a518a54eaa1206845da48adc54590adaa"
)

// TestDeterminism: the same run gives the same events and result, byte for
// byte, and the same as the recorded digest.
func TestDeterminism(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 30_000
	}
	got := digest(t, n)
	require.Equal(t, got, digest(t, n), "the same run twice")
	if !testing.Short() {
		require.Equal(t, wantRun, got, "the run's digest")
	}
	require.Equal(t, wantDraws, drawsDigest(), "the draws' digest")
}
