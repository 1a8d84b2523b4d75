package traffic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// drain reads s to its end and returns its arrivals and its error.
func drain(s Stream) ([]Arrival, error) {
	var out []Arrival
	var a Arrival
	for s.Next(&a) {
		out = append(out, a)
	}
	return out, s.Err()
}

// openOne opens src alone, as source index of a plan, and returns all its
// arrivals and the key space.
func openOne(t *testing.T, src Source, index int) ([]Arrival, *Keys) {
	t.Helper()
	k := NewKeys()
	k.declare(func() { src.Declare(k) })
	s, err := src.Open(k, index, 0)
	require.NoError(t, err)
	got, err := drain(s)
	require.NoError(t, err)
	return got, k
}

// ats returns the instants of arrivals.
func ats(as []Arrival) []time.Duration {
	var out []time.Duration
	for _, a := range as {
		out = append(out, a.At)
	}
	return out
}

// keyNames returns the key names of arrivals.
func keyNames(k *Keys, as []Arrival) []string {
	var out []string
	for _, a := range as {
		out = append(out, k.Name(a.Key))
	}
	return out
}

// one is a single client named "k" with cost 1 and no start or end.
var one = Common{Clients: Clients{Key: "k"}, Cost: 1}

// clients is n clients named c-0 .. c-(n-1) with cost 1.
func clients(n int) Common {
	return Common{Clients: Clients{N: n, Prefix: "c"}, Cost: 1}
}
