package output

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// DecisionsHeader is the header row of the decisions CSV (docs/commands.md).
const DecisionsHeader = "algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns"

// ClusterDecisionsHeader is the header of a cluster scenario's decisions
// (docs/cluster.md): two more columns, the node that took the attempt and
// when its verdict took effect there.
const ClusterDecisionsHeader = DecisionsHeader + ",node,decided_ns"

// GrantedColumn is the column the decisions CSV ends with when a row of
// the run may admit less than the cost asked (a partial admission,
// redis-rate-at-most): the cost granted, 0 for a rejection.
const GrantedColumn = ",granted"

// LimitColumn is the column the decisions CSV ends with, after the others,
// when a row of the scenario is an all-of (docs/commands.md): the limit of
// the row that rejected or delayed the request (sim.Decision.Fired), empty
// when none did and on rows of one limit.
const LimitColumn = ",limit"

// KeyColumns are the columns the decisions CSV ends with, after the
// limit, when an all-of row's limits count by different keys (by:): n
// columns key_1 ... key_n, the key each limit of the row counted the
// request under (sim.Decision.MemberKeys), empty past the row's limits.
func KeyColumns(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(",key_")
		b.WriteString(strconv.Itoa(i + 1))
	}
	return b.String()
}

// RouteColumn is the column the decisions CSV ends with, after all the
// others, when a replay routes its requests through a gateway's config
// (replay --gateway, docs/outputs.md): the location, route or router that
// took the request (sim.Decision.Route), named as the rows are.
const RouteColumn = ",route"

// DecisionColumns are the columns of a decisions CSV beyond
// DecisionsHeader's, in their order.
type DecisionColumns struct {
	// Cluster adds node and decided_ns, Granted the cost granted
	Cluster, Granted bool
	// Limits adds the limit column, LimitNames naming the row's limits
	// (NewLimitDecisions), and Keys so many key columns
	Limits     bool
	LimitNames []string
	Keys       int
	// Routes, when not nil, adds the route column: the names of the
	// router's routes, a decision's Route - 1 indexing them
	Routes []string
}

// NewDecisionsWith is NewDecisions with the columns c, for any mix of
// them.
func NewDecisionsWith(w io.Writer, algorithm, label string, header bool, c DecisionColumns) *Decisions {
	d := newDecisions(w, algorithm, label, false, c.Cluster, c.Granted, c.Limits, c.LimitNames)
	d.keys, d.routes = c.Keys, c.Routes
	if header && d.err == nil {
		_, d.err = d.w.WriteString(d.header() + "\n")
	}
	return d
}

// Decisions writes one algorithm's decisions as CSV rows, for
// `ratesim compare --decisions FILE`: algorithm, label, time_ns, key, cost,
// attempt, verdict (accept, delay or reject), delay_ns, and retry_after_ns,
// which is empty for admitted requests and -1 for a request that can never
// be admitted. Fields are quoted as encoding/csv quotes them.
//
// It is an Observer for one run: rows are formatted into one reused buffer
// and written through a bufio.Writer, so memory stays constant however many
// decisions a run makes and the row path does not allocate. Call Flush at
// the end of the run. A Decisions is not safe for concurrent use; runs of
// different algorithms that share one file must write to it one after the
// other (rows of each label contiguous, in processing order).
//
// The first write error is kept: Observe and Flush return it from then on.
type Decisions struct {
	w      *bufio.Writer
	prefix []byte // "algorithm,label," quoted as needed
	row    []byte // reused for every row
	err    error
	// cluster adds the node and decided_ns columns, granted the granted
	// column
	cluster, granted bool
	// withLimits adds the limit column, limits naming the row's limits
	withLimits bool
	limits     []string
	// keys is the number of key columns after the limit (KeyColumns),
	// memberKeys their buffer
	keys       int
	memberKeys []string
	// routes adds the route column: the route names (RouteColumn)
	routes []string
}

var _ sim.Observer = (*Decisions)(nil)

// NewDecisions returns a writer of the decisions of the run of algorithm
// under label to w, which writes DecisionsHeader first when header is true
// (for the first run written to a file).
func NewDecisions(w io.Writer, algorithm, label string, header bool) *Decisions {
	return newDecisions(w, algorithm, label, header, false, false, false, nil)
}

// NewDecisionsOf is NewDecisions (cluster false) or NewClusterDecisions,
// each row ending with the cost granted (GrantedColumn) when granted is
// true: for a run that has a row which may admit part of a cost.
func NewDecisionsOf(w io.Writer, algorithm, label string, header, cluster, granted bool) *Decisions {
	return newDecisions(w, algorithm, label, header, cluster, granted, false, nil)
}

// NewLimitDecisions is NewDecisionsOf for a run with an all-of row: each
// row ends with the limit that decided the request (LimitColumn), one of
// limits (the row's limits, sim.LimitName; none for a row of one limit),
// then keys columns of the key each limit counted it under (KeyColumns;
// 0 for none).
func NewLimitDecisions(w io.Writer, algorithm, label string, header, cluster, granted bool, limits []string, keys int) *Decisions {
	d := newDecisions(w, algorithm, label, false, cluster, granted, true, limits)
	d.keys = keys
	if header && d.err == nil {
		_, d.err = d.w.WriteString(d.header() + "\n")
	}
	return d
}

// NewClusterDecisions is NewDecisions for a cluster scenario: each row ends
// with the node and decided_ns, under ClusterDecisionsHeader.
func NewClusterDecisions(w io.Writer, algorithm, label string, header bool) *Decisions {
	return newDecisions(w, algorithm, label, header, true, false, false, nil)
}

func newDecisions(w io.Writer, algorithm, label string, header, cluster, granted, withLimits bool, limits []string) *Decisions {
	d := &Decisions{
		cluster:    cluster,
		granted:    granted,
		withLimits: withLimits,
		limits:     limits,
		w:          bufio.NewWriterSize(w, 64<<10),
		row:        make([]byte, 0, 256),
	}
	d.prefix = appendCSVField(d.prefix, algorithm)
	d.prefix = append(d.prefix, ',')
	d.prefix = appendCSVField(d.prefix, label)
	d.prefix = append(d.prefix, ',')
	if header {
		_, d.err = d.w.WriteString(d.header() + "\n")
	}
	return d
}

// header is the header row of d's columns.
func (d *Decisions) header() string {
	h := DecisionsHeader
	if d.cluster {
		h = ClusterDecisionsHeader
	}
	if d.granted {
		h += GrantedColumn
	}
	if d.withLimits {
		h += LimitColumn
	}
	h += KeyColumns(d.keys)
	if d.routes != nil {
		h += RouteColumn
	}
	return h
}

// Observe writes the row of one decision.
func (d *Decisions) Observe(x *sim.Decision) error {
	if d.err != nil {
		return d.err
	}
	b := append(d.row[:0], d.prefix...)
	b = strconv.AppendInt(b, int64(x.Time), 10)
	b = append(b, ',')
	b = appendCSVField(b, x.Key)
	b = append(b, ',')
	b = strconv.AppendInt(b, x.Cost, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(x.Attempt), 10)
	b = append(b, ',')
	b = append(b, x.Verdict.String()...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(x.Delay), 10)
	b = append(b, ',')
	if x.Verdict == algorithms.Reject {
		b = strconv.AppendInt(b, int64(x.RetryAfter), 10) // algorithms.Never is -1
	}
	if d.cluster {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(x.Node), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(x.Decided), 10)
	}
	if d.granted {
		b = append(b, ',')
		b = strconv.AppendInt(b, algorithms.GrantedOf(x.Decision, x.Cost), 10)
	}
	if d.withLimits {
		b = append(b, ',')
		if x.Fired > 0 && x.Fired <= len(d.limits) {
			b = appendCSVField(b, d.limits[x.Fired-1])
		}
	}
	if d.keys > 0 {
		d.memberKeys = x.MemberKeys.Append(d.memberKeys[:0])
	}
	for i := range d.keys {
		b = append(b, ',')
		if i < len(d.memberKeys) {
			b = appendCSVField(b, d.memberKeys[i])
		}
	}
	if d.routes != nil {
		b = append(b, ',')
		if r := int(x.Route); r > 0 && r <= len(d.routes) {
			b = appendCSVField(b, d.routes[r-1])
		}
	}
	b = append(b, '\n')
	d.row = b
	_, d.err = d.w.Write(b)
	return d.err
}

// Flush writes the buffered rows to the underlying writer.
func (d *Decisions) Flush() error {
	if d.err != nil {
		return d.err
	}
	d.err = d.w.Flush()
	return d.err
}

// appendCSVField appends s as encoding/csv writes a field with comma ','
// and LF line endings: quoted, with quotes doubled, when it contains a
// comma, a quote, CR or LF, begins with a space, or is `\.`.
func appendCSVField(b []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// csvNeedsQuotes is encoding/csv's fieldNeedsQuotes for comma ','.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, "\",\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
