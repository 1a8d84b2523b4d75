package traffic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Each source's attributes reach its arrivals: a request carries the value
// of every attribute its source gives and none of the others, and sources
// that give the same values share one tuple.
func TestAttributes(t *testing.T) {
	src := func(key string) Source {
		return &Times{Common: Common{Cost: 1, Clients: Clients{Key: key}}, At: []time.Duration{0}}
	}
	p := Plan{
		Sources: []Source{src("a"), src("b"), src("c"), src("d")},
		Attrs: []map[string]string{
			{"server": "api", "route": "/checkout"},
			{"server": "api"},
			nil,
			{"route": "/checkout", "server": "api"},
		},
	}
	require.Equal(t, []string{"route", "server"}, p.Attributes())
	keys, stream, err := p.Open()
	require.NoError(t, err)
	attrs := keys.Attrs()
	require.Equal(t, []string{"route", "server"}, attrs.Names())
	var got [][]string
	var a Arrival
	for stream.Next(&a) {
		var row []string
		for i, v := range attrs.Values(a.Attrs) {
			if v == NoValue {
				row = append(row, "-")
			} else {
				row = append(row, attrs.Value(i, v))
			}
		}
		got = append(got, append([]string{keys.Name(a.Key), "#" + string(rune('0'+a.Attrs))}, row...))
	}
	require.NoError(t, stream.Err())
	require.Equal(t, [][]string{
		{"a", "#1", "/checkout", "api"},
		{"b", "#2", "-", "api"},
		{"c", "#0", "-", "-"}, // tuple 0: no attributes
		{"d", "#1", "/checkout", "api"},
	}, got)
}
