package traffic

import (
	"os"
	"slices"
	"strconv"
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
	keys, arrivals, rows := readAttrs(t, p)
	require.Equal(t, []string{"route", "server"}, keys.Attrs().Names())
	var got [][]string
	for i, a := range arrivals {
		got = append(got, append([]string{keys.Name(a.Key), "#" + string(rune('0'+a.Attrs))}, rows[i]...))
	}
	require.Equal(t, [][]string{
		{"a", "#1", "/checkout", "api"},
		{"b", "#2", "-", "api"},
		{"c", "#0", "-", "-"}, // tuple 0: no attributes
		{"d", "#1", "/checkout", "api"},
	}, got)
}

// A replay's requests carry their attributes from each line's fields, in
// every format: the value of the named field, none where it is empty or
// nginx's "-", and each attribute by its own name beside a source's.
func TestReplayAttributes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	cases := []struct {
		name string
		r    Replay
	}{
		{"nginx", Replay{Path: write("n.log", "1.0.0.1 c1 1700000000.100\n1.0.0.2 - 1700000000.200\n1.0.0.1 c2 1700000000.300\n"),
			LogFormat: "$remote_addr $http_x_client $msec", KeyField: "remote_addr",
			AttrFields: []AttrField{{Name: "remote_addr", Field: "remote_addr"}, {Name: "x", Field: "http_x_client"}}}},
		{"csv", Replay{Path: write("t.csv", "time_ms,ip,client\n1700000000100,1.0.0.1,c1\n1700000000200,1.0.0.2,\n1700000000300,1.0.0.1,c2\n"),
			KeyField: "ip", AttrFields: []AttrField{{Name: "remote_addr", Field: "ip"}, {Name: "x", Field: "client"}}}},
		{"jsonl", Replay{Path: write("t.jsonl", `{"ts":1700000000.1,"ip":"1.0.0.1","client":"c1"}`+"\n"+`{"ts":1700000000.2,"ip":"1.0.0.2"}`+"\n"+`{"ts":1700000000.3,"ip":"1.0.0.1","client":"c2"}`+"\n"),
			TimeUnit: "s", KeyField: "ip", AttrFields: []AttrField{{Name: "remote_addr", Field: "ip"}, {Name: "x", Field: "client"}}}},
		{"combined", Replay{Path: write("c.log", `1.0.0.1 - c1 [14/Nov/2023:22:13:20 +0000] "GET / HTTP/1.1" 200 1 "-" "a"`+"\n"+
			`1.0.0.2 - - [14/Nov/2023:22:13:21 +0000] "GET / HTTP/1.1" 200 1 "-" "a"`+"\n"+
			`1.0.0.1 - c2 [14/Nov/2023:22:13:22 +0000] "GET / HTTP/1.1" 200 1 "-" "a"`+"\n"),
			AttrFields: []AttrField{{Name: "remote_addr", Field: "ip"}, {Name: "x", Field: "user"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Plan{Sources: []Source{&c.r}}
			require.Equal(t, []string{"remote_addr", "x"}, p.Attributes())
			_, _, got := readAttrs(t, p)
			require.Equal(t, [][]string{{"1.0.0.1", "c1"}, {"1.0.0.2", "-"}, {"1.0.0.1", "c2"}}, got)
			require.Zero(t, c.r.Stats().Malformed)
		})
	}
}

// An attribute's field that the trace does not have is an error at Open
// that names it; a log's attribute must be one of its fields.
func TestReplayAttributeFieldMissing(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/n.log"
	require.NoError(t, os.WriteFile(p, []byte("1.0.0.1 1700000000.100\n"), 0o644))
	r := &Replay{Path: p, LogFormat: "$remote_addr $msec", AttrFields: []AttrField{{Name: "http_x_client", Field: "http_x_client"}}}
	_, _, err := Plan{Sources: []Source{r}}.Open()
	require.ErrorContains(t, err, `attribute http_x_client: field "http_x_client": the log_format has no such variable (its variables: $remote_addr $msec)`)
	r = &Replay{Path: p, Format: "common", AttrFields: []AttrField{{Name: "x", Field: "agent"}}}
	require.ErrorContains(t, r.Validate(), `attribute x: field "agent": a common log's fields are ip, ident, user, request or status`)
}

// AttributeValues lists an attribute's values in the order of their ids
// in a run: the ids that Open's arrivals carry.
func TestAttributeValues(t *testing.T) {
	src := func(key string) Source {
		return &Times{Common: Common{Cost: 1, Clients: Clients{Key: key}}, At: []time.Duration{0}}
	}
	p := Plan{
		Sources: []Source{src("a"), src("b"), src("c"), src("d"), src("e")},
		Attrs: []map[string]string{
			{"class": "batch"},
			{"route": "/x"},
			{"class": "live", "route": "/y"},
			{"class": "batch"},
			{"class": "bulk"},
		},
	}
	require.Equal(t, []string{"batch", "live", "bulk"}, p.AttributeValues("class"))
	require.Equal(t, []string{"/x", "/y"}, p.AttributeValues("route"))
	require.Empty(t, p.AttributeValues("server"))
	keys, stream, err := p.Open()
	require.NoError(t, err)
	attrs := keys.Attrs()
	class := slices.Index(attrs.Names(), "class")
	var a Arrival
	for stream.Next(&a) {
		v := attrs.Values(a.Attrs)[class]
		if v == NoValue {
			continue
		}
		require.Equal(t, p.AttributeValues("class")[v], attrs.Value(class, v), "id %d", v)
	}
	require.NoError(t, stream.Err())
}

// A plan's Named values of an attribute that a replay reads from its
// lines have their ids before the run, in the order named, after the
// values the sources give as constants: the ids Open's arrivals carry,
// whatever order the lines bring them in. A value no name lists (bulk)
// comes after them.
func TestAttributeValuesNamed(t *testing.T) {
	path := t.TempDir() + "/t.csv"
	require.NoError(t, os.WriteFile(path, []byte("time_ms,class\n1700000000100,bulk\n1700000000200,batch\n1700000000300,\n1700000000400,live\n"), 0o644))
	p := Plan{
		Sources: []Source{&Replay{Path: path, KeyField: KeyFieldNone, AttrFields: []AttrField{{Name: "class", Field: "class"}}}},
		Named:   map[string][]string{"class": {"live", "batch"}, "other": {"x"}},
	}
	require.Equal(t, []string{"live", "batch"}, p.AttributeValues("class"))
	keys, stream, err := p.Open()
	require.NoError(t, err)
	attrs := keys.Attrs()
	var got []string
	var a Arrival
	for stream.Next(&a) {
		v := attrs.Values(a.Attrs)[0]
		if v == NoValue {
			got = append(got, "none")
			continue
		}
		got = append(got, attrs.Value(0, v)+" "+strconv.Itoa(int(v)))
	}
	require.NoError(t, stream.Err())
	require.Equal(t, []string{"bulk 2", "batch 1", "none", "live 0"}, got)
}

// joinDeriver derives "client@ip" from two fields, none when the client
// is empty.
type joinDeriver struct{}

func (joinDeriver) Vars() []string { return []string{"client", "ip"} }
func (joinDeriver) Derive(vals []string) string {
	if vals[0] == "" {
		return ""
	}
	return vals[0] + "@" + vals[1]
}

// A JSON line's attribute may be derived from its fields, as a log
// format's from its variables: an absent field reads as "", and "" is no
// value.
func TestReplayAttributeDerivedJSON(t *testing.T) {
	p := t.TempDir() + "/t.jsonl"
	require.NoError(t, os.WriteFile(p, []byte(`{"ts":1700000000.1,"ip":"1.0.0.1","client":"c1"}`+"\n"+`{"ts":1700000000.2,"ip":"1.0.0.2"}`+"\n"), 0o644))
	plan := Plan{Sources: []Source{&Replay{Path: p, TimeUnit: "s", KeyField: "ip",
		AttrFields: []AttrField{{Name: "x", Field: "client", Derive: joinDeriver{}}}}}}
	_, _, got := readAttrs(t, plan)
	require.Equal(t, [][]string{{"c1@1.0.0.1"}, {"-"}}, got)
}

// readAttrs opens p and reads all its arrivals, each with its attributes'
// values in the order of Attrs().Names(), "-" for none.
func readAttrs(t *testing.T, p Plan) (*Keys, []Arrival, [][]string) {
	t.Helper()
	keys, stream, err := p.Open()
	require.NoError(t, err)
	attrs := keys.Attrs()
	var arrivals []Arrival
	var rows [][]string
	var a Arrival
	for stream.Next(&a) {
		row := []string{}
		for i, v := range attrs.Values(a.Attrs) {
			if v == NoValue {
				row = append(row, "-")
			} else {
				row = append(row, attrs.Value(i, v))
			}
		}
		arrivals, rows = append(arrivals, a), append(rows, row)
	}
	require.NoError(t, stream.Err())
	return keys, arrivals, rows
}
