package output

import (
	"bytes"
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// CSV writes one header row and one row per result:
//
//	algorithm,label,offered,attempts,accepted,delayed,rejected,gave_up,
//	delay_p50_ns,delay_p90_ns,delay_p99_ns,delay_max_ns,
//	peak_<V>_count,peak_<V>_start_ns,peak_<V>_ratio   (for each window V)
//	key_peak_<V>_count,key_peak_<V>_key,key_peak_<V>_ratio   (for each V)
//	bytes_per_key_max,keys_peak,bytes_peak,keys_limited,
//	attempt_peak_<V>_count,attempt_peak_<V>_start_ns,attempt_peak_<V>_ratio (for each V)
//
// The peaks count every key together, the key peaks one key (named) at a
// time: with several keys, the key peak's ratio is the one to hold against
// the limit, which is per key. keys_limited counts the keys with at least
// one rejected attempt; the attempt peaks count first tries and retries
// reaching the limiter. When rows ran on a cluster (docs/cluster.md), each
// row ends with
//
//	coordination,nodes,balancer,reference_admitted,extra_admitted,
//	extra_ratio,store_ops,store_ops_per_attempt,store_busy,added_p50_ns,
//	added_p99_ns,added_max_ns,store_errors,fail_open,fail_closed
//
// With --baseline (docs/accuracy.md) each row ends with
//
//	baseline_label,baseline_compared,baseline_differs,
//	baseline_wrongly_allowed,baseline_wrongly_limited,baseline_first_divergences
//
// empty for the baseline row, and first_divergences empty where it is not
// defined (sim.BaselineResult). With a check against a gateway's log
// (docs/replay.md, replay --check-field) each row ends with
//
//	check_field,check_compared,check_agree,check_ratio
//
// (the first disagreements are in the JSON and the table's findings).
//
// V is the window as time.Duration.String writes it (peak_1s_count,
// peak_100ms_ratio); ratios are written as the JSON writes them (2.0). A
// result without a peak for some window has empty fields there.
func CSV(w io.Writer, r *sim.Report) error {
	return CSVWith(w, r, nil)
}

// Column is a column a caller adds at the end of every CSV row: its
// header, and its field for each result.
type Column struct {
	Name string
	Cell func(res *sim.Result) string
}

// CSVWith writes the report as CSV does, with the columns extra after
// the others (compare's expectations, docs/expect.md).
func CSVWith(w io.Writer, r *sim.Report, extra []Column) error {
	if r == nil {
		return errNilReport
	}
	ws := windows(r)
	header := []string{"algorithm", "label", "offered", "attempts", "accepted", "delayed",
		"rejected", "gave_up", "delay_p50_ns", "delay_p90_ns", "delay_p99_ns", "delay_max_ns"}
	for _, v := range ws {
		p := "peak_" + time.Duration(v).String() + "_"
		header = append(header, p+"count", p+"start_ns", p+"ratio")
	}
	for _, v := range ws {
		p := "key_peak_" + time.Duration(v).String() + "_"
		header = append(header, p+"count", p+"key", p+"ratio")
	}
	header = append(header, "bytes_per_key_max", "keys_peak", "bytes_peak", "keys_limited")
	for _, v := range ws {
		p := "attempt_peak_" + time.Duration(v).String() + "_"
		header = append(header, p+"count", p+"start_ns", p+"ratio")
	}
	cl := clustered(r)
	if cl {
		header = append(header, clusterCSVHeader...)
	}
	be := withBackend(r)
	if be {
		header = append(header, backendCSVHeader...)
	}
	rd := onRedis(r)
	if rd {
		header = append(header, redisCSVHeader...)
	}
	zn := zoned(r)
	if zn {
		header = append(header, "zone_evictions", "zone_refusals")
	}
	vs := baselineLabel(r) != ""
	if vs {
		header = append(header, baselineCSVHeader...)
	}
	chk := checkField(r) != ""
	if chk {
		header = append(header, checkCSVHeader...)
	}

	for _, c := range extra {
		header = append(header, c.Name)
	}

	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.Write(header); err != nil {
		return err
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	row := make([]string, 0, len(header))
	for i := range r.Results {
		res := &r.Results[i]
		row = append(row[:0], res.Algorithm, res.Label,
			i64(res.Offered), i64(res.Attempts), i64(res.Accepted), i64(res.Delayed),
			i64(res.Rejected), i64(res.GaveUp),
			i64(res.DelayNs.P50), i64(res.DelayNs.P90), i64(res.DelayNs.P99), i64(res.DelayNs.Max))
		// each window's peak: its count, where it is (start_ns, or the
		// key) and its ratio; empty where the window has none
		peaks := func(ps []sim.Peak) {
			for _, v := range ws {
				if p, ok := findPeak(ps, v); ok {
					row = append(row, i64(p.Count), i64(p.StartNs), p.Ratio.Text())
				} else {
					row = append(row, "", "", "")
				}
			}
		}
		peaks(res.Peaks)
		for _, v := range ws {
			if p, ok := findKeyPeak(res.KeyPeaks, v); ok {
				row = append(row, i64(p.Count), p.Key, p.Ratio.Text())
			} else {
				row = append(row, "", "", "")
			}
		}
		row = append(row, i64(res.Memory.BytesPerKeyMax), i64(res.Memory.KeysPeak), i64(res.Memory.BytesPeak),
			i64(res.Keys.Limited))
		peaks(res.AttemptPeaks)
		if cl {
			row = append(row, clusterCSV(res.Cluster)...)
		}
		if be {
			row = append(row, backendCSV(res.Backend)...)
		}
		if rd {
			row = append(row, redisCSV(res.Redis)...)
		}
		if zn {
			if res.ZoneEvictions != nil {
				row = append(row, i64(*res.ZoneEvictions), i64(*res.ZoneRefusals))
			} else {
				row = append(row, "", "")
			}
		}
		if vs {
			row = append(row, baselineCSV(res.Baseline)...)
		}
		if chk {
			row = append(row, checkCSV(res.Check)...)
		}
		for _, c := range extra {
			row = append(row, c.Cell(res))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
