package sim

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// LimitKeyPeak is, for one limit of an all-of row whose limits count by
// different keys (by:), the busiest key of that limit: the largest total
// cost released to the backend under one of its keys in any half-open
// interval [StartNs, StartNs+WindowNs) of its own window (its per), that
// Count, the Key (the request's key, an attribute's value, or "global"),
// the earliest such start, and the Ratio of Count to the limit's rate
// (docs/metrics.md, key_peaks). Count 0 and Key "" when nothing was
// released under it.
type LimitKeyPeak struct {
	Limit    string `json:"limit"`
	WindowNs int64  `json:"window_ns"`
	Count    int64  `json:"count"`
	Key      string `json:"key"`
	StartNs  int64  `json:"start_ns"`
	Ratio    Ratio  `json:"ratio"`
}

// limitPeaks counts, for each limit of an all-of row whose limits count
// by different keys, the busiest of its keys (LimitKeyPeak), each with a
// keyPeaks of the limit's own window over the keys it counts by: the
// request's key, one key (0) for by: global, or the value ids of its
// attribute. A request without a value of a limit's attribute is not
// counted under it (the limit did not look at it).
type limitPeaks struct {
	members []algorithms.Member
	peaks   []keyPeaks
}

func newLimitPeaks(members []algorithms.Member) *limitPeaks {
	l := &limitPeaks{members: members}
	for _, m := range members {
		l.peaks = append(l.peaks, newKeyPeaks([]time.Duration{m.Params.Per}))
	}
	return l
}

// add counts a release of cost at at by a request of key whose attribute
// values are values (a tuple of the key space, nil for none).
func (l *limitPeaks) add(at time.Duration, cost int64, key uint32, values []uint32) {
	for i, m := range l.members {
		switch {
		case m.By == algorithms.ByAll:
			l.peaks[i].add(at, cost, 0)
		case m.By == algorithms.ByKey:
			l.peaks[i].add(at, cost, key)
		case m.By-1 < len(values) && values[m.By-1] != traffic.NoValue:
			l.peaks[i].add(at, cost, values[m.By-1])
		}
	}
}

// report closes the windows: each limit's busiest key, named from keys.
func (l *limitPeaks) report(keys *traffic.Keys) []LimitKeyPeak {
	attrs := keys.Attrs()
	var out []LimitKeyPeak
	for i, m := range l.members {
		name := func(k uint32) string {
			switch {
			case m.By == algorithms.ByAll:
				return GlobalKey
			case m.By == algorithms.ByKey:
				return keys.Name(k)
			}
			return attrs.Value(m.By-1, k)
		}
		kp, _ := l.peaks[i].peaks(m.Params.Policy, name)
		p := kp[0]
		out = append(out, LimitKeyPeak{Limit: LimitName(m, i), WindowNs: p.WindowNs, Count: p.Count, Key: p.Key, StartNs: p.StartNs, Ratio: p.Ratio})
	}
	return out
}
