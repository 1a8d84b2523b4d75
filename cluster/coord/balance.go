package coord

import "github.com/ratesim/ratesim/cluster"

// The weighted balancers (docs/cluster.md, "Nodes and the balancer"): the
// cluster's weights spread the arrivals unevenly over the live nodes, as
// a mesh does when connections or zones send one pod more than its share.

// weights is the state of a weighted balancer: each node's weight and,
// for the smooth round-robin, its current weight.
type weights struct {
	w   []int64
	cur []int64
}

func newWeights(cl *cluster.Config) weights {
	w := cl.Weights
	if len(w) != cl.Nodes {
		// a row built without the loader: every node weighs 1
		w = make([]int64, cl.Nodes)
		for i := range w {
			w[i] = 1
		}
	}
	return weights{w: w, cur: make([]int64, len(w))}
}

// pickWeighted is nginx's smooth weighted round-robin
// (ngx_http_upstream_get_peer in ngx_http_upstream_round_robin.c): every
// live node's current weight grows by its weight; the node with the
// largest (the first of equals) takes the arrival, and its current weight
// drops by the live nodes' total. A node that is down keeps its current
// weight until it comes back.
func (c *clusterRun) pickWeighted() int {
	b := &c.weights
	best, total := -1, int64(0)
	for i := range c.nodes {
		if c.nodes[i].down {
			continue
		}
		b.cur[i] += b.w[i]
		total += b.w[i]
		if best < 0 || b.cur[i] > b.cur[best] {
			best = i
		}
	}
	b.cur[best] -= total
	return best
}

// pickWeightedRandom draws a live node with probability its weight over
// the live nodes' total, from the balancer's stream of the seed.
func (c *clusterRun) pickWeightedRandom() int {
	b := &c.weights
	var total int64
	for i := range c.nodes {
		if !c.nodes[i].down {
			total += b.w[i]
		}
	}
	r := c.balRng.Int64N(total)
	last := 0
	for i := range c.nodes {
		if c.nodes[i].down {
			continue
		}
		if r < b.w[i] {
			return i
		}
		r -= b.w[i]
		last = i
	}
	return last
}
