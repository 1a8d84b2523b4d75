package output

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/backend"
)

// The backend's cells: utilisation as a whole percentage, the p99
// response, goodput, shed/timed out, wasted time, and the recovery: its
// time, "never" when faults came and the goodput did not come back, "-"
// with no faults.
func TestBackendCells(t *testing.T) {
	rec := int64(2_300_000_000)
	b := &backend.Result{Served: 9800, CompletedOK: 9700, Goodput: 9650, Shed: 120, TimedOut: 80, Errors: 98,
		WastedNs: 1_600_000_000, Utilization: 0.8249, ResponseNs: backend.Percentiles{P50: 18_000_000, P99: 110_000_000, Max: 210_000_000},
		QueueWaitNs: backend.Percentiles{P99: 48_000_000}, RetryAmplification: 1.07, RecoveredNs: &rec, Faults: 1}
	require.Equal(t, []string{"82%", "110ms", "9650", "120/80", "1.6s", "2.3s"}, backendCells(b))
	b.RecoveredNs = nil
	require.Equal(t, "never", backendCells(b)[5])
	b.Faults = 0
	require.Equal(t, "-", backendCells(b)[5])
	require.Equal(t, []string{"-", "-", "-", "-", "-", "-"}, backendCells(nil))

	b.RecoveredNs, b.Faults = &rec, 1
	require.Equal(t, []string{"9800", "9700", "9650", "120", "80", "98", "1600000000", "0.8249", "48000000",
		"18000000", "110000000", "210000000", "1.0700", "2300000000"}, backendCSV(b))

	r := doubleBurst()
	r.Results[0].Backend = b
	var buf bytes.Buffer
	require.NoError(t, Table(&buf, r))
	require.Contains(t, buf.String(), "p99 response")
	require.Contains(t, buf.String(), "120/80")
	buf.Reset()
	require.NoError(t, CSV(&buf, r))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Contains(t, rows[0], "backend_goodput")
	require.Equal(t, make([]string, len(backendCSVHeader)), rows[2][len(rows[2])-len(backendCSVHeader):], "a row without a backend")

	buf.Reset()
	require.NoError(t, Table(&buf, doubleBurst()))
	require.NotContains(t, buf.String(), "p99 response", "no backend, no columns")
}

// The findings on the backend: the lowest and highest p99 response, the
// row that lost the most requests, and after faults whose goodput came
// back (at once, or in how long) and whose never did.
func TestHealthFindings(t *testing.T) {
	r := doubleBurst()
	r.Results = r.Results[:3]
	zero, later := int64(0), int64(300_000_000)
	r.Results[0].Backend = &backend.Result{Goodput: 90, Shed: 5, TimedOut: 2, ResponseNs: backend.Percentiles{P99: 600_000_000}, Faults: 1, RecoveredNs: &zero}
	r.Results[1].Backend = &backend.Result{Goodput: 97, ResponseNs: backend.Percentiles{P99: 240_000_000}, Faults: 1, RecoveredNs: &later}
	r.Results[2].Backend = &backend.Result{Goodput: 80, Shed: 1, TimedOut: 19, ResponseNs: backend.Percentiles{P99: 300_000_000}, Faults: 1}
	l0, l1, l2 := r.Results[0].Label, r.Results[1].Label, r.Results[2].Label
	require.Equal(t, []string{
		l1 + " kept the backend's p99 response lowest: 240ms, against 600ms for " + l0 + ".",
		l2 + " lost the most requests at the backend: 1 shed by its full queue and 19 timed out; its goodput was 80.",
		"After the backend's faults, goodput came back for " + l0 + " at once and " + l1 + " in 300ms.",
		"After the backend's faults, goodput never came back for " + l2 + ".",
	}, healthFindings(r))
	require.Nil(t, healthFindings(doubleBurst()))
}
