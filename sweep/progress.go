package sweep

import (
	"sync"
	"time"
)

// progress adds up the runs under way: each run's first row reports the
// virtual time it has reached, which stands for the share of its points
// done.
type progress struct {
	report func(done float64, total int)
	total  int

	mu       sync.Mutex
	finished float64         // points of the runs that ended
	running  map[int]float64 // by run: points done
	points   map[int]int     // by run: its points
	next     int
}

func (p *progress) start(points int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running, p.points = map[int]float64{}, map[int]int{}
	}
	p.next++
	p.running[p.next], p.points[p.next] = 0, points
	return p.next
}

func (p *progress) update(id int, done, total time.Duration) {
	if p.report == nil || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[id] = float64(p.points[id]) * min(1, float64(done)/float64(total))
	p.send()
}

func (p *progress) finish(id int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished += float64(p.points[id])
	delete(p.running, id)
	delete(p.points, id)
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
	p.report(min(done, float64(p.total)), p.total)
}
