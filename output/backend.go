package output

import (
	"strconv"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/sim"
)

// What the outputs show of a backend with workers (SPEC section 11): the
// table's backend columns, the CSV's, and the findings' sentence on what
// each row did to the backend.

// withBackend reports whether any result has a backend object.
func withBackend(r *sim.Report) bool {
	for i := range r.Results {
		if r.Results[i].Backend != nil {
			return true
		}
	}
	return false
}

// backendHeader is the table's backend columns, before bytes/key.
var backendHeader = []string{"util", "p99 response", "goodput", "shed/timed out", "wasted", "recovered"}

// backendCells are a row's backend cells: "82%", "110ms", "9650",
// "120/80", "1.6s", "2.3s" (or "never" when the goodput did not come back
// after the faults, "-" when there were none to recover from).
func backendCells(b *backend.Result) []string {
	if b == nil {
		return []string{"-", "-", "-", "-", "-", "-"}
	}
	recovered := "-"
	if b.RecoveredNs != nil {
		recovered = FormatDuration(time.Duration(*b.RecoveredNs))
	} else if b.Faults > 0 {
		recovered = "never"
	}
	return []string{utilization(b.Utilization), FormatDuration(time.Duration(b.ResponseNs.P99)),
		strconv.FormatInt(b.Goodput, 10), strconv.FormatInt(b.Shed, 10) + "/" + strconv.FormatInt(b.TimedOut, 10),
		FormatDuration(time.Duration(b.WastedNs)), recovered}
}

// utilization writes a fraction as a whole percentage, rounded half up
// from its thousandths: "82%".
func utilization(u float64) string {
	return strconv.FormatInt(int64(u*100+0.5), 10) + "%"
}

// backendCSVHeader is the CSV's backend columns, at the end of a row.
var backendCSVHeader = []string{"backend_served", "backend_completed_ok", "backend_goodput", "backend_shed",
	"backend_timed_out", "backend_errors", "backend_wasted_ns", "backend_utilization",
	"backend_queue_wait_p99_ns", "backend_response_p50_ns", "backend_response_p99_ns", "backend_response_max_ns",
	"backend_retry_amplification", "backend_recovered_ns"}

// backendCSV is a row's backend columns (empty for a row without one).
func backendCSV(b *backend.Result) []string {
	if b == nil {
		return make([]string, len(backendCSVHeader))
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	recovered := ""
	if b.RecoveredNs != nil {
		recovered = i64(*b.RecoveredNs)
	}
	return []string{i64(b.Served), i64(b.CompletedOK), i64(b.Goodput), i64(b.Shed), i64(b.TimedOut),
		i64(b.Errors), i64(b.WastedNs), strconv.FormatFloat(b.Utilization, 'f', 4, 64),
		i64(b.QueueWaitNs.P99), i64(b.ResponseNs.P50), i64(b.ResponseNs.P99), i64(b.ResponseNs.Max),
		strconv.FormatFloat(b.RetryAmplification, 'f', 4, 64), recovered}
}
