package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
)

// shedHead has requests of class batch (the first value of class: id 0),
// then live (id 1), and a route attribute.
const shedHead = "name: t\nduration: 2s\nlimit: 10/s\nbackend: {service: 1s}\n" +
	"traffic:\n" +
	"  - {type: steady, key: a, rate: 5/s, attributes: {class: batch, route: /list}}\n" +
	"  - {type: steady, key: a, rate: 5/s, attributes: {class: live}}\n" +
	"algorithms:\n"

// The priority-shedding rows' by and named values reach their Params as
// the ids the run gives them; a bad one is refused where it is written.
func TestParseShedding(t *testing.T) {
	src := shedHead +
		"  - {name: netflix-partitioned, max: 10, by: class, partitions: {live: 0.9, batch: 0.1}}\n" +
		"  - {name: stripe-fleet-shedder, by: route, critical: [/list], reserve: 0.25}\n" +
		"  - {name: stripe-fleet-shedder, label: pct, by: class, critical: [live], reserve: 12.5%}\n"
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	p := sc.Algorithms[0].Params
	require.Equal(t, 1, p.ClassBy) // attributes sorted: class, route
	require.Equal(t, []algorithms.Class{{Name: "live", Value: 1, Share: 0.9}, {Name: "batch", Value: 0, Share: 0.1}}, p.Partitions)
	p = sc.Algorithms[1].Params
	require.Equal(t, 2, p.ClassBy)
	require.Equal(t, []algorithms.Class{{Name: "/list", Value: 0}}, p.Critical)
	require.Equal(t, int64(250_000), p.Reserve)
	require.Equal(t, int64(125_000), sc.Algorithms[2].Params.Reserve)

	for _, c := range []struct{ src, want string }{
		{"  - {name: netflix-partitioned, by: clas, partitions: {live: 1}}\n", `s.yaml:9:37: algorithms[0].by: "clas": no source gives this attribute (want an attribute that a source sets in attributes or a replay reads in attribute-fields: class or route); did you mean "class"?`},
		{"  - {name: netflix-partitioned, by: class, partitions: {lvie: 1}}\n", `s.yaml:9:57: algorithms[0].partitions.lvie: "lvie": no source gives class this value (want batch or live); did you mean "live"?`},
		{"  - {name: netflix-partitioned, partitions: {live: 1}}\n", `s.yaml:9:5: algorithms[0]: netflix-partitioned needs by: the attribute`},
		{"  - {name: netflix-partitioned, by: class}\n", `needs partitions`},
		{"  - {name: netflix-partitioned, by: class, partitions: {live: 1.5}}\n", `algorithms[0].partitions.live: 1.5: want a percent from 0.0 to 1.0`},
		{"  - {name: netflix-partitioned, by: class, partitions: {live: 0.56, batch: 0.33, x: 0.11}}\n", `want percents that add up to at most 1.0`},
		{"  - {name: stripe-fleet-shedder, by: class, critical: [batch], reserve: 1}\n", `algorithms[0].reserve: 1: want a fraction from 0 to below 1`},
		{"  - {name: stripe-fleet-shedder, by: class, critical: [batch], reserve: 0.1234567}\n", `at most 6 decimals`},
		{"  - {name: stripe-fleet-shedder, by: class, critical: [liv]}\n", `s.yaml:9:56: algorithms[0].critical[0]: "liv": no source gives class this value (want batch or live); did you mean "live"?`},
		{"  - {name: stripe-fleet-shedder, by: class, critical: []}\n", `empty list`},
		{"  - {name: stripe-fleet-shedder, by: class, partitions: {live: 1}}\n", `stripe-fleet-shedder takes no option "partitions"`},
		{"  - {name: concurrency, by: class}\n", `concurrency takes no option "by"`},
	} {
		_, err := Parse("s.yaml", []byte(shedHead+c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
	_, err = Parse("s.yaml", []byte("name: t\nduration: 2s\nlimit: 10/s\nbackend: {workers: 2, service: 1s}\n"+
		"traffic: [{type: steady, key: a, rate: 5/s, attributes: {class: live}}]\nalgorithms:\n"+
		"  - {name: netflix-partitioned, by: class, partitions: {live: 1}}\n"))
	require.ErrorContains(t, err, "takes a backend without workers")
}

// A shedding row may name values of an attribute that a replay reads from
// its lines: they are not known before the run, so no value is refused
// there (a value no line carries takes no request); the attribute itself
// must be one the replay reads.
func TestParseSheddingReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(path, []byte("time_ms,priority\n1700000000100,live\n"), 0o644))
	head := "name: t\nlimit: 10/s\nbackend: {service: 1s}\n" +
		"traffic:\n  - {type: replay, path: " + path + ", key-field: none, attribute-fields: {class: priority}}\n" +
		"algorithms:\n"
	_, err := Parse("s.yaml", []byte(head+
		"  - {name: netflix-partitioned, max: 10, by: class, partitions: {live: 0.9, batch: 0.1}}\n"+
		"  - {name: stripe-fleet-shedder, by: class, critical: [live, checkout], reserve: 0.25}\n"))
	require.NoError(t, err)
	_, err = Parse("s.yaml", []byte(head+"  - {name: stripe-fleet-shedder, by: priority, critical: [live]}\n"))
	require.ErrorContains(t, err, `s.yaml:7:38: algorithms[0].by: "priority": no source gives this attribute (want an attribute that a source sets in attributes or a replay reads in attribute-fields: class)`)
	_, err = Parse("s.yaml", []byte(head+"  - {name: stripe-fleet-shedder, by: clas, critical: [live]}\n"))
	require.ErrorContains(t, err, `did you mean "class"?`)
}
