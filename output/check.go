package output

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// What the outputs show of a check against a gateway's log
// (docs/replay.md, replay --check-field): the table's "agrees with FIELD" column
// ("99.57% of 2345"), the CSV's check columns, and a finding per row that
// disagreed, with its first disagreements.

// checkField is the field the report's rows were checked against, or ""
// when they were not.
func checkField(r *sim.Report) string {
	for i := range r.Results {
		if c := r.Results[i].Check; c != nil {
			return c.Field
		}
	}
	return ""
}

// checkHeader is the table's check column.
func checkHeader(field string) string { return "agrees with " + field }

// checkCell is a row's check cell: "99.57% of 2345", "-" when nothing
// was compared.
func checkCell(c *sim.CheckResult) string {
	if c == nil || c.Compared == 0 {
		return "-"
	}
	return SmallPercent(c.Agree, c.Compared) + " of " + strconv.FormatInt(c.Compared, 10)
}

// checkCSVHeader is the CSV's check columns, at the end of a row.
var checkCSVHeader = []string{"check_field", "check_compared", "check_agree", "check_ratio"}

// checkCSV is a row's check columns.
func checkCSV(c *sim.CheckResult) []string {
	if c == nil {
		return []string{"", "", "", ""}
	}
	return []string{c.Field, strconv.FormatInt(c.Compared, 10), strconv.FormatInt(c.Agree, 10),
		strconv.FormatFloat(c.Ratio, 'f', -1, 64)}
}

// gatewayCheckFindings says, for each row that decided some request otherwise
// than the gateway logged, how many and which came first; or that every
// row agreed with the log on every request compared.
func gatewayCheckFindings(r *sim.Report) []string {
	field := checkField(r)
	if field == "" {
		return nil
	}
	var out []string
	all := true
	for i := range r.Results {
		res := &r.Results[i]
		c := res.Check
		if c == nil || c.Agree == c.Compared {
			continue
		}
		all = false
		var first []string
		for _, d := range c.First {
			by := ""
			if d.Limit != "" {
				by = " by " + d.Limit
			}
			first = append(first, fmt.Sprintf("%s %s: the gateway logged %s, ratesim %s%s",
				reportInstant(r, d.TimeNs), strconv.Quote(d.Key), d.Gateway, d.Ratesim, by))
		}
		what := "the first"
		if len(first) > 1 {
			what = fmt.Sprintf("the first %d", len(first))
		}
		out = append(out, fmt.Sprintf("%s decided %d of %s otherwise than %s logged (%s); %s: %s.",
			res.Label, c.Compared-c.Agree, plural(c.Compared, "request"), field,
			SmallPercent(c.Compared-c.Agree, c.Compared), what, strings.Join(first, "; ")))
	}
	if all {
		out = append(out, fmt.Sprintf("Every row decided every request as %s logged it.", field))
	}
	return out
}
