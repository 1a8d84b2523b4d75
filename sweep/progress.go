package sweep

import (
	"sync"
	"time"
)

// Progress is how far a sweep is, as Options.Progress is told it.
type Progress struct {
	// Done is how many points are done, with fractions for the points
	// under way, each run counting by the virtual time its first row has
	// reached out of the scenario's duration; Total how many there are.
	Done  float64
	Total int
	// Replayed is, while a run replays a trace without a duration (whose
	// length is known only at its end), how far into the trace the least
	// advanced such run is; 0 otherwise. Done counts such a run's points
	// only once it ends.
	Replayed time.Duration
}

// progress adds up the runs under way: each run's first row reports the
// virtual time it has reached, which stands for the share of its points
// done, or, for a trace without a duration, how far into the trace.
type progress struct {
	report func(Progress)
	total  int

	mu       sync.Mutex
	finished float64               // points of the runs that ended
	running  map[int]float64       // by run: points done
	points   map[int]int           // by run: its points
	replayed map[int]time.Duration // by run of no known length: the time reached
	next     int
}

func (p *progress) start(points int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running, p.points, p.replayed = map[int]float64{}, map[int]int{}, map[int]time.Duration{}
	}
	p.next++
	p.running[p.next], p.points[p.next] = 0, points
	return p.next
}

func (p *progress) update(id int, done, total time.Duration) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if total <= 0 {
		p.replayed[id] = done
	} else {
		p.running[id] = float64(p.points[id]) * min(1, float64(done)/float64(total))
	}
	p.send()
}

func (p *progress) finish(id int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished += float64(p.points[id])
	delete(p.running, id)
	delete(p.points, id)
	delete(p.replayed, id)
	p.send()
}

// send reports, with p.mu held.
func (p *progress) send() {
	if p.report == nil {
		return
	}
	done := p.finished
	for _, d := range p.running {
		done += d
	}
	var replayed time.Duration
	first := true
	for _, d := range p.replayed {
		if first || d < replayed {
			replayed, first = d, false
		}
	}
	p.report(Progress{Done: min(done, float64(p.total)), Total: p.total, Replayed: replayed})
}
