// Package traffic produces the arrivals a simulation replays: synthetic
// sources (times, burst, steady, ...) and recorded traces (Replay). Every
// source is seeded and streaming: it yields arrivals one at a time in
// non-decreasing time order and holds constant memory however long it runs.
//
// A Plan is the traffic of one scenario. Opening it again gives the same
// arrivals; the engine opens it once per comparison and every algorithm
// reads the same arrivals, while their key space (Keys) is shared: interned
// by the reader of the traffic, resolved by the others.
package traffic

import (
	"hash/fnv"
	"slices"
	"strconv"
	"time"
)

// Arrival is one request reaching the limiter for the first time.
type Arrival struct {
	At  time.Duration // virtual time, ns from the Unix epoch
	Key uint32        // dense key id, see Keys
	// Attrs is the id of the request's other attributes in the key space
	// (Keys.Attrs): 0 when it carries none but its key.
	Attrs  uint32
	Cost   int64 // >= 1
	Source int32 // index of the source in the scenario, in file order
	// Logged is what the gateway that wrote a replayed log decided of the
	// request (Replay.CheckField), for replay --check-field; LoggedNone
	// elsewhere. Attrs and Logged fit in the struct's padding: an Arrival
	// is 32 bytes with or without them.
	Logged Logged
	// Route is 1 + the index of the route that took the request when a
	// Router routes the trace (Replay.Router), 0 otherwise; a row that
	// names a route takes only its requests. It fits in the padding too.
	Route uint16
}

// Stream yields arrivals in non-decreasing order of At. Next fills a and
// reports whether there was one; after it returns false, Err says whether the
// stream ended because of an error.
type Stream interface {
	Next(a *Arrival) bool
	Err() error
}

// Source is one configured traffic source of a scenario.
type Source interface {
	// Declare registers the keys the source will use, before any source of
	// the plan is opened, so that names shared between sources (a key
	// "client-3" and a source of clients with prefix "client") get one id.
	Declare(k *Keys)
	// Open starts a new stream of the source's arrivals. index is the
	// source's position in the scenario (copied into Arrival.Source) and
	// seed its own seed, derived from the scenario's.
	Open(k *Keys, index int, seed uint64) (Stream, error)
	// End is the instant by which the source has produced every arrival,
	// or 0 when it runs until the scenario's duration.
	End() time.Duration
}

// Plan is the traffic of a scenario: its sources in file order and the seed
// every random draw derives from.
type Plan struct {
	Sources []Source
	Seed    uint64
	// SeedNames names each source for seeding: source i draws from
	// SourceSeed(Seed, SeedNames[i]), so a source keeps its draws when
	// other sources are added before or after it. A source without a name
	// is named by its index ("#3").
	SeedNames []string
	// Attrs are the attributes each source gives its requests beside
	// their key, by source index: names to values, constant for the
	// source (an address, a route, a server). A source without an entry
	// (or a nil slice) gives none. See Attributes.
	Attrs []map[string]string
	// Named are values of attributes that the rows name before the run
	// (a shedding row's partitions), by attribute: Open interns each
	// after the sources' own values (Attrs), in this order, so that its
	// id (AttributeValues) is known before a replay's lines bring their
	// values. A value no source gives is simply never carried.
	Named map[string][]string
}

// lineAttributes is a source whose requests carry attributes of their
// own, each its value (a replay's AttrFields, read from each line).
type lineAttributes interface {
	AttributeNames() []string
}

// Attributes lists the names of the attributes the plan's sources give,
// their own (Attrs) and their requests' (a replay's AttrFields), sorted:
// attribute j of a request (Keys.Attrs) is the one named Attributes()[j].
func (p Plan) Attributes() []string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, m := range p.Attrs {
		for n := range m {
			add(n)
		}
	}
	for _, s := range p.Sources {
		if l, ok := s.(lineAttributes); ok {
			for _, n := range l.AttributeNames() {
				add(n)
			}
		}
	}
	slices.Sort(names)
	return names
}

// AttributeValues lists the values the plan's sources give the attribute
// called name as constants (Plan.Attrs), in the order of their ids in a run
// (Attrs.Value): the order in which sources first give each, sources in
// file order, then the plan's Named values of it that no source gives as a
// constant, in their order; Open interns them before any arrival. Values
// that a replay reads from its lines come after them, as the lines bring
// them, and are not listed. A row that names values of an attribute (a
// partition, a critical method) finds their ids here before the run.
func (p Plan) AttributeValues(name string) []string {
	var values []string
	for i := range p.Sources {
		if i >= len(p.Attrs) {
			break
		}
		if v, ok := p.Attrs[i][name]; ok && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	for _, v := range p.Named[name] {
		if !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	return values
}

// seedName is the name source i is seeded by.
func (p Plan) seedName(i int) string {
	if i < len(p.SeedNames) && p.SeedNames[i] != "" {
		return p.SeedNames[i]
	}
	return "#" + strconv.Itoa(i)
}

// Open builds the key space of one run and the merged stream of all its
// sources.
func (p Plan) Open() (*Keys, Stream, error) {
	keys := NewKeys()
	keys.declare(func() {
		for _, s := range p.Sources {
			s.Declare(keys)
		}
	})
	keys.attrs = newAttrSpace(p.Attributes())
	streams := make([]Stream, len(p.Sources))
	for i, s := range p.Sources {
		st, err := s.Open(keys, i, SourceSeed(p.Seed, p.seedName(i)))
		if err != nil {
			return nil, nil, err
		}
		if i < len(p.Attrs) && len(p.Attrs[i]) > 0 {
			st = &attributed{Stream: st, id: keys.attrs.tuple(p.Attrs[i])}
		}
		streams[i] = st
	}
	keys.attrs.name(p.Named) // before any line is read
	return keys, Merge(streams...), nil
}

// SourceSeed derives a source's own seed from the scenario seed and the
// source's seed name (SplitMix64 over the seed and the FNV-1a hash of the
// name), so adding a source never changes another source's draws.
func SourceSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return splitmix64(splitmix64(seed) ^ h.Sum64())
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
