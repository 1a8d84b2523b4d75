package traffic

import (
	"errors"
	"math"
	"time"
)

// Aligned models clients whose requests line up on boundaries: cron jobs
// firing at the top of the minute, clients retrying at the window reset.
// Its occurrences are the instants k*Every + Offset for k = 0, 1, 2, ...
// that fall in [Start, End); at each, every client sends Count requests,
// request i at occurrence + floor(i*Over/Count). Requests come in order of
// time, then client index, then i (a client's requests at one instant stay
// together). A request at or after End is cut; an occurrence before Start
// sends nothing, even the part of its spread after Start.
//
// Offset may be negative, to straddle a boundary from before it: with
// Every 1s and Offset -100ms the first occurrence is at 900ms (k = 1; k = 0
// would be at -100ms). |Offset| < Every, and Over < Every so that one
// occurrence's requests end before the next begins.
type Aligned struct {
	Common
	Every  time.Duration // > 0
	Offset time.Duration // -Every < Offset < Every
	Count  int64         // requests per client per occurrence, >= 1
	Over   time.Duration // 0 <= Over < Every
}

func (s *Aligned) Declare(k *Keys) { s.Clients.declare(k) }

// End of an aligned source is its own End: it repeats until the scenario's
// duration unless it has one.
func (s *Aligned) End() time.Duration { return s.Common.End }

func (s *Aligned) Open(k *Keys, index int, _ uint64) (Stream, error) {
	switch {
	case s.Every <= 0:
		return nil, errors.New("traffic: aligned every must be > 0")
	case s.Offset <= -s.Every || s.Offset >= s.Every:
		return nil, errors.New("traffic: aligned offset must be within (-every, every)")
	case s.Over < 0 || s.Over >= s.Every:
		return nil, errors.New("traffic: aligned over must be in [0, every)")
	}
	base, n := s.Clients.resolve(k)
	st := &alignedStream{src: s, base: base, n: int64(n), end: s.Common.End, source: int32(index)}
	if s.Count < 1 {
		st.done = true
		return st, nil
	}
	// The first occurrence at or after Start: occ(k) is within Every of
	// k*Every, so it is at most two steps from Start/Every - 1.
	st.k = max(int64(s.Start/s.Every)-1, 0)
	for {
		occ, ok := st.occurrence(st.k)
		if !ok {
			st.done = true
			break
		}
		if occ >= s.Start {
			st.enter(occ)
			break
		}
		st.k++
	}
	return st, nil
}

// alignedStream walks occurrence k, then within it the groups of request
// indexes that share an instant: for each group, every client sends its
// requests of the group in order.
type alignedStream struct {
	src    *Aligned
	base   uint32
	n      int64
	end    time.Duration
	source int32

	k      int64         // occurrence index
	occ    time.Duration // its instant
	group  int64         // first request index of the group being sent
	groupT time.Duration // the group's instant
	next   int64         // first index past the group
	c      int64         // client
	i      int64         // request index
	done   bool
}

// enter starts occurrence occ at its first group, client 0.
func (g *alignedStream) enter(occ time.Duration) {
	g.occ, g.group, g.i, g.c = occ, 0, 0, 0
	t, ok := g.at(0)
	g.groupT, g.done = t, !ok
}

func (g *alignedStream) Err() error { return nil }

// occurrence returns k*Every + Offset, or false past the largest time.
func (g *alignedStream) occurrence(k int64) (time.Duration, bool) {
	p, ok := mulDiv(k, int64(g.src.Every), 1)
	if !ok || g.src.Offset > 0 && p > math.MaxInt64-int64(g.src.Offset) {
		return 0, false
	}
	return time.Duration(p) + g.src.Offset, true
}

// at returns the instant of request i of the current occurrence, or false
// past the largest time.
func (g *alignedStream) at(i int64) (time.Duration, bool) {
	off, _ := mulDiv(i, int64(g.src.Over), g.src.Count) // i < Count: off < Over
	if off > math.MaxInt64-int64(g.occ) {
		return 0, false
	}
	return g.occ + time.Duration(off), true
}

func (g *alignedStream) Next(a *Arrival) bool {
	for !g.done {
		if g.end > 0 && g.groupT >= g.end { // and every later one
			g.done = true
			break
		}
		if g.i < g.src.Count {
			if t, ok := g.at(g.i); ok && t == g.groupT {
				*a = Arrival{At: t, Key: g.base + uint32(g.c), Cost: g.src.Cost, Source: g.source}
				g.i++
				return true
			}
		}
		// the client is done with this group
		g.next = g.i
		g.c++
		if g.c < g.n {
			g.i = g.group
			continue
		}
		// every client is done: the next group, or the next occurrence
		g.c = 0
		g.group, g.i = g.next, g.next
		if g.group < g.src.Count {
			t, ok := g.at(g.group)
			if !ok {
				g.done = true
				break
			}
			g.groupT = t
			continue
		}
		g.k++
		occ, ok := g.occurrence(g.k)
		if !ok {
			g.done = true
			break
		}
		g.enter(occ)
	}
	return false
}
