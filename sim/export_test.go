package sim

// What the external tests of package sim (package sim_test) use: they run
// cluster rows, whose package (cluster/coord) imports sim.
var (
	BenchEngineOn   = benchEngineOn
	BenchAlgorithms = benchAlgorithms
	BenchAlgorithm  = benchAlgorithm
	ZipfPlan        = zipfPlan
)

// BatchArrivals is how many arrivals a batch of Run's feed holds.
const BatchArrivals = batchArrivals

// RunBatches is Run with feed batches of n arrivals.
func RunBatches(cfg Config, n int) (*Report, error) {
	return runWith(cfg, feedShape{n, ringBatches})
}
