package output

import (
	"strconv"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/sim"
)

// What the outputs show of a backend with workers (docs/backend.md): the
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
	return strconv.FormatInt(int64(float64(u*100)+0.5), 10) + "%" // the product rounded: no FMA
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

// healthFindings says what the rows did to the backend: which kept its p99
// response lowest and which highest, which lost the most requests to sheds
// and timeouts, and, after faults, whose goodput came back and how fast.
func healthFindings(r *sim.Report) []string {
	var rows []*sim.Result
	for i := range r.Results {
		if r.Results[i].Backend != nil {
			rows = append(rows, &r.Results[i])
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var out []string
	lo, hi := rows[0], rows[0]
	for _, res := range rows[1:] {
		if res.Backend.ResponseNs.P99 < lo.Backend.ResponseNs.P99 {
			lo = res
		}
		if res.Backend.ResponseNs.P99 > hi.Backend.ResponseNs.P99 {
			hi = res
		}
	}
	if lo != hi {
		out = append(out, lo.Label+" kept the backend's p99 response lowest: "+
			FormatDuration(time.Duration(lo.Backend.ResponseNs.P99))+", against "+
			FormatDuration(time.Duration(hi.Backend.ResponseNs.P99))+" for "+hi.Label+".")
	}
	worst := rows[0]
	lost := func(res *sim.Result) int64 { return res.Backend.Shed + res.Backend.TimedOut }
	for _, res := range rows[1:] {
		if lost(res) > lost(worst) {
			worst = res
		}
	}
	if b := worst.Backend; lost(worst) > 0 {
		out = append(out, worst.Label+" lost the most requests at the backend: "+
			strconv.FormatInt(b.Shed, 10)+" shed by its full queue and "+strconv.FormatInt(b.TimedOut, 10)+
			" timed out; its goodput was "+strconv.FormatInt(b.Goodput, 10)+".")
	}
	var back, never []string
	for _, res := range rows {
		b := res.Backend
		switch {
		case b.RecoveredNs != nil && *b.RecoveredNs == 0:
			back = append(back, res.Label+" at once")
		case b.RecoveredNs != nil:
			back = append(back, res.Label+" in "+FormatDuration(time.Duration(*b.RecoveredNs)))
		case b.Faults > 0:
			never = append(never, res.Label)
		}
	}
	if len(back) > 0 {
		out = append(out, "After the backend's faults, goodput came back for "+Join(back)+".")
	}
	if len(never) > 0 {
		out = append(out, "After the backend's faults, goodput never came back for "+Join(never)+".")
	}
	return out
}
