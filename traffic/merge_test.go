package traffic

import (
	"cmp"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sliceStream yields its arrivals, then ends with err (nil: a clean end).
type sliceStream struct {
	arr   []Arrival
	err   error
	ended bool
}

func (s *sliceStream) Next(a *Arrival) bool {
	if len(s.arr) == 0 {
		s.ended = true
		return false
	}
	*a, s.arr = s.arr[0], s.arr[1:]
	return true
}

func (s *sliceStream) Err() error {
	if !s.ended {
		return nil
	}
	return s.err
}

// arr is an arrival at t from stream src, its seq-th: Key carries seq so
// that the order within one stream shows.
func arr(t int64, src int32, seq uint32) Arrival {
	return Arrival{At: time.Duration(t), Key: seq, Cost: 1, Source: src}
}

// streams makes a clean-ending stream of each list.
func streams(ss ...[]Arrival) []Stream {
	out := make([]Stream, len(ss))
	for i, s := range ss {
		out[i] = &sliceStream{arr: s}
	}
	return out
}

func TestMerge(t *testing.T) {
	for _, tt := range []struct {
		name    string
		streams []Stream
		want    []Arrival
	}{
		{"no streams", nil, nil},
		{"one stream", streams([]Arrival{arr(0, 0, 0), arr(0, 0, 1), arr(5, 0, 2)}),
			[]Arrival{arr(0, 0, 0), arr(0, 0, 1), arr(5, 0, 2)}},
		{"empty streams", streams(nil, nil), nil},
		{
			// time order first; at 0 and at 10, streams in the order given,
			// and stream 0's two arrivals at 10 in the order it made them
			name: "interleaved",
			streams: streams(
				[]Arrival{arr(0, 0, 0), arr(10, 0, 1), arr(10, 0, 2)},
				[]Arrival{arr(0, 1, 0), arr(5, 1, 1), arr(10, 1, 2)},
				[]Arrival{arr(10, 2, 0), arr(20, 2, 1)},
			),
			want: []Arrival{
				arr(0, 0, 0), arr(0, 1, 0), // equal instants: stream 0 then 1
				arr(5, 1, 1),
				arr(10, 0, 1), arr(10, 0, 2), arr(10, 1, 2), arr(10, 2, 0), // 0, 0, 1, 2
				arr(20, 2, 1),
			},
		},
		{
			// a later stream with an earlier instant still comes first
			name:    "later stream earlier",
			streams: streams([]Arrival{arr(7, 0, 0)}, nil, []Arrival{arr(3, 2, 0), arr(7, 2, 1)}),
			want:    []Arrival{arr(3, 2, 0), arr(7, 0, 0), arr(7, 2, 1)},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := drain(Merge(tt.streams...))
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestMergeStable: for random streams, the merge is the streams concatenated
// in order, then stably sorted by time: by time, then stream, then the
// stream's own order.
func TestMergeStable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 200 {
		n := r.IntN(9)
		var all []Arrival
		ss := make([][]Arrival, n)
		for i := range n {
			var at int64
			for j := range r.IntN(12) {
				at += int64(r.IntN(3)) // many equal instants
				a := arr(at, int32(i), uint32(j))
				ss[i] = append(ss[i], a)
				all = append(all, a)
			}
		}
		slices.SortStableFunc(all, func(a, b Arrival) int { return cmp.Compare(a.At, b.At) })
		got, err := drain(Merge(streams(ss...)...))
		require.NoError(t, err)
		require.Equal(t, all, got, "round %d", round)
	}
}

func TestMergeError(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name    string
		streams []Stream
		want    []Arrival
	}{
		{
			// stream 1 fails after 15: everything before it is delivered, 15
			// included; 20 is not, as stream 1 might have had something sooner
			name: "midway",
			streams: []Stream{
				&sliceStream{arr: []Arrival{arr(0, 0, 0), arr(10, 0, 1), arr(20, 0, 2)}},
				&sliceStream{arr: []Arrival{arr(5, 1, 0), arr(15, 1, 1)}, err: boom},
			},
			want: []Arrival{arr(0, 0, 0), arr(5, 1, 0), arr(10, 0, 1), arr(15, 1, 1)},
		},
		{
			// stream 1 fails before its first arrival: nothing is sure
			name: "at once",
			streams: []Stream{
				&sliceStream{arr: []Arrival{arr(0, 0, 0)}},
				&sliceStream{err: boom},
			},
		},
		{
			// one stream is the merge: its arrivals, then its error
			name:    "one stream",
			streams: []Stream{&sliceStream{arr: []Arrival{arr(0, 0, 0), arr(1, 0, 1)}, err: boom}},
			want:    []Arrival{arr(0, 0, 0), arr(1, 0, 1)},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := Merge(tt.streams...)
			got, err := drain(m)
			require.Equal(t, tt.want, got)
			require.ErrorIs(t, err, boom)
			var a Arrival
			require.False(t, m.Next(&a)) // stays stopped
			require.ErrorIs(t, m.Err(), boom)
		})
	}
}

func TestMergeEnded(t *testing.T) {
	m := Merge(streams([]Arrival{arr(0, 0, 0)}, []Arrival{arr(1, 1, 0)})...)
	got, err := drain(m)
	require.NoError(t, err)
	require.Len(t, got, 2)
	var a Arrival
	require.False(t, m.Next(&a)) // an ended merge stays ended
	require.NoError(t, m.Err())
}

// closingStream is a stream of no arrivals that counts its Close calls.
type closingStream struct {
	closed int
	err    error
}

func (s *closingStream) Next(*Arrival) bool { return false }
func (s *closingStream) Err() error         { return nil }
func (s *closingStream) Close() error {
	s.closed++
	return s.err
}

// TestMergeCloses: closing a merge closes each stream that has a Close
// method, once, whatever the others do, and returns the first error.
func TestMergeCloses(t *testing.T) {
	boom := errors.New("boom")
	a, b := &closingStream{}, &closingStream{err: boom}
	m := Merge(a, &sliceStream{}, b)
	c, ok := m.(io.Closer)
	require.True(t, ok)
	require.ErrorIs(t, c.Close(), boom)
	require.Equal(t, 1, a.closed)
	require.Equal(t, 1, b.closed)
}

// BenchmarkMerge merges 8 streams of 125,000 arrivals each (1,000,000 in
// all, instants drawn at random, some shared between streams); one op is
// one arrival merged.
//
//	go test ./traffic/ -run '^$' -bench BenchmarkMerge
func BenchmarkMerge(b *testing.B) {
	const n, k = 1_000_000, 8
	rng := rand.New(rand.NewPCG(1, 2))
	lists := make([][]Arrival, k)
	for i := range lists {
		var t int64
		for j := range n / k {
			t += rng.Int64N(16)
			lists[i] = append(lists[i], arr(t, int32(i), uint32(j)))
		}
	}
	var a Arrival
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			b.StopTimer()
			m := Merge(streams(lists...)...)
			b.StartTimer()
			benchMerged = m
		}
		if !benchMerged.Next(&a) {
			b.Fatal("ended early")
		}
	}
}

var benchMerged Stream
