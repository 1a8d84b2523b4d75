package cmd

import (
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// expectColumns are the columns compare's CSV adds for the outcomes
// (output.CSVWith), for each row: how many of its claims hold, fail and do
// not apply, and the ones that fail, "; " between them, each with what was
// measured: "peak(1s) <= 10 (measured 20)".
func expectColumns(outs []expect.Outcome) []output.Column {
	of := func(res *sim.Result) []expect.Outcome {
		var mine []expect.Outcome
		for _, o := range outs {
			if o.Row == res.Label {
				mine = append(mine, o)
			}
		}
		return mine
	}
	count := func(f func(expect.Counts) int) func(*sim.Result) string {
		return func(res *sim.Result) string { return strconv.Itoa(f(expect.CountOf(of(res)))) }
	}
	return []output.Column{
		{Name: "expect_holds", Cell: count(func(c expect.Counts) int { return c.Holds })},
		{Name: "expect_fails", Cell: count(func(c expect.Counts) int { return c.Fails })},
		{Name: "expect_not_applicable", Cell: count(func(c expect.Counts) int { return c.NotApplicable })},
		{Name: "expect_failing", Cell: func(res *sim.Result) string {
			var fails []string
			for _, o := range of(res) {
				if o.Status == expect.Fails {
					fails = append(fails, o.Claim.String()+" (measured "+o.MeasuredText()+")")
				}
			}
			return strings.Join(fails, "; ")
		}},
	}
}
