package traffic

import "strings"

// CostUnit names what the plan's costs count, for the words and headings
// of a report (docs/metrics.md): "" when every request costs 1, so that a
// cost is a request; "tokens" when a replay reads each request's cost from
// a field whose name says tokens (ContextTokens); "cost units" otherwise.
func CostUnit(p Plan) string {
	unit := ""
	for _, s := range p.Sources {
		switch u := sourceCostUnit(s); {
		case u == "":
		case unit == "" || unit == u:
			unit = u
		default:
			unit = "cost units" // sources that count different things
		}
	}
	return unit
}

// sourceCostUnit is CostUnit of one source.
func sourceCostUnit(s Source) string {
	if r, ok := s.(*Replay); ok && r.CostField != "" {
		if strings.Contains(strings.ToLower(r.CostField), "token") {
			return "tokens"
		}
		return "cost units"
	}
	if c, ok := s.(interface{ costPerRequest() int64 }); ok && c.costPerRequest() > 1 {
		return "cost units"
	}
	return ""
}

// costPerRequest is the cost of each of a source's requests (0 means 1).
func (c *Common) costPerRequest() int64 { return c.Cost }
