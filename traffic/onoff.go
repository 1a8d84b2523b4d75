package traffic

import (
	"errors"
	"math"
	"time"
)

// OnOff sends at Rate during On, then is silent during Off, repeating from
// Start: phase p covers [Start + p*(On+Off), Start + p*(On+Off) + On). Within
// a phase request j (from 0 in each phase) is at phase start +
// floor(j*W/L) for the rate L/W, while inside the On part and before End.
// With N clients request i of the whole source (counted across phases) goes
// to client i mod N.
type OnOff struct {
	Common
	Rate    Rate
	On, Off time.Duration // both > 0
}

func (s *OnOff) Declare(k *Keys) { s.Clients.declare(k) }

// End of an onoff source is its own End: it repeats until the scenario's
// duration unless it has one.
func (s *OnOff) End() time.Duration { return s.Common.End }

func (s *OnOff) Open(k *Keys, index int, _ uint64) (Stream, error) {
	if s.On <= 0 || s.Off <= 0 {
		return nil, errors.New("traffic: onoff on and off must be > 0")
	}
	base, n := s.Clients.resolve(k)
	return &onOffStream{src: s, base: base, n: int64(n), phase: s.Start,
		end: s.Common.End, source: int32(index), done: s.Rate.Count < 1 || s.Rate.Per < 1}, nil
}

type onOffStream struct {
	src    *OnOff
	base   uint32
	n      int64
	end    time.Duration // 0: none
	source int32

	phase time.Duration // start of the current phase
	j     int64         // request index in the phase
	i     int64         // request index in the source
	done  bool
}

func (o *onOffStream) Err() error { return nil }

func (o *onOffStream) Next(a *Arrival) bool {
	for !o.done {
		off, ok := mulDiv(o.j, int64(o.src.Rate.Per), o.src.Rate.Count)
		if ok && off < int64(o.src.On) && off <= math.MaxInt64-int64(o.phase) {
			t := o.phase + time.Duration(off)
			if o.end > 0 && t >= o.end {
				break
			}
			*a = Arrival{At: t, Key: o.base + uint32(o.i%o.n), Cost: o.src.Cost, Source: o.source}
			o.i++
			o.j++
			return true
		}
		if ok && off < int64(o.src.On) {
			break // past the largest time
		}
		// the next phase; j = 0 is at its start, so it sends at least once
		room := math.MaxInt64 - int64(o.phase)
		if int64(o.src.On) > room || int64(o.src.Off) > room-int64(o.src.On) {
			break
		}
		o.phase += o.src.On + o.src.Off
		o.j = 0
	}
	o.done = true
	return false
}
