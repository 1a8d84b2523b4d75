package gateway

import (
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/scenarios"
)

// AWS is Amazon API Gateway's throttling and quotas as the AWS CLI prints
// them (JSON): the usage plans of `aws apigateway get-usage-plans` (or one
// of `get-usage-plan`), or a stage of `aws apigateway get-stage`. API
// Gateway ("Throttle requests to your REST APIs") applies token buckets at
// the account (per Region), the stage or method, and per API key through a
// usage plan, and a usage plan's quota per API key; each is a member of
// one all-of row per scope: the account's and the stage's count every
// request (by: global), the plan's count by the API key (by: api-key).
type AWS struct {
	File  string
	Plans []*AWSPlan
	Stage *AWSStage
}

// AWSThrottle is one token bucket: rateLimit requests a second (a decimal,
// kept exact as Rate per Per) and burstLimit.
type AWSThrottle struct {
	RateText string
	Rate     int64
	Per      time.Duration
	Burst    int64
	Where    Pos
}

// AWSMethod is a method's own throttle: its key as AWS writes it
// ("/pets/GET" in a usage plan, "~1pets/GET" in a stage).
type AWSMethod struct {
	Name     string
	Throttle *AWSThrottle
}

// AWSPlan is one usage plan: its throttle and quota per API key, and its
// methods' throttles (apiStages[].throttle).
type AWSPlan struct {
	ID, Name string
	Where    Pos
	Throttle *AWSThrottle
	Quota    *AWSQuota
	Methods  []AWSMethod
}

// AWSQuota is a usage plan's QuotaSettings: limit per period (DAY, WEEK,
// MONTH), offset off the initial period.
type AWSQuota struct {
	Limit, Offset int64
	Period        string
	Where         Pos
}

// AWSStage is one stage's methodSettings: "*/*" (every method) and each
// method's.
type AWSStage struct {
	Name    string
	Default *AWSThrottle
	Methods []AWSMethod
}

// awsAccountRate and awsAccountBurst are the account's default throttle per
// Region (API Gateway quotas: 10,000 requests a second, burst 5,000); an
// export does not hold the account's own.
const awsAccountRate, awsAccountBurst = 10000, 5000

// ReadAWS reads the JSON the AWS CLI prints for get-usage-plans,
// get-usage-plan or get-stage. A throttle's rate must be a decimal number
// (rateLimit 0.5 is 1 per 2s), its burst a whole number >= 1; a quota's
// period DAY, WEEK or MONTH. Anything else is an error naming
// file:line:col.
func ReadAWS(file string, data []byte) (*AWS, error) {
	root, err := readYAML(file, data)
	if err != nil {
		return nil, err
	}
	if err := root.mappingOf("the JSON of aws apigateway get-usage-plans, get-usage-plan or get-stage", nil, nil); err != nil {
		return nil, err
	}
	a := &AWS{File: file}
	switch {
	case root.get("items") != nil:
		items, err := root.get("items").listOf("a list of usage plans")
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			p, err := readAWSPlan(it)
			if err != nil {
				return nil, err
			}
			a.Plans = append(a.Plans, p)
		}
	case root.get("methodSettings") != nil || root.get("stageName") != nil:
		s, err := readAWSStage(root)
		if err != nil {
			return nil, err
		}
		a.Stage = s
	case root.get("throttle") != nil || root.get("quota") != nil || root.get("apiStages") != nil:
		p, err := readAWSPlan(root)
		if err != nil {
			return nil, err
		}
		a.Plans = append(a.Plans, p)
	default:
		return nil, root.errAt("neither usage plans (items, or a plan's throttle and quota) nor a stage's methodSettings: want the JSON of aws apigateway get-usage-plans, get-usage-plan or get-stage")
	}
	if len(a.Plans) == 0 && a.Stage == nil {
		return nil, root.errAt("no usage plan")
	}
	return a, nil
}

func readAWSPlan(t *tree) (*AWSPlan, error) {
	if err := t.mappingOf("a usage plan", nil, nil); err != nil {
		return nil, err
	}
	p := &AWSPlan{Where: t.pos}
	var err error
	if v := t.get("id"); v != nil {
		if p.ID, err = v.str(); err != nil {
			return nil, err
		}
	}
	if v := t.get("name"); v != nil {
		if p.Name, err = v.str(); err != nil {
			return nil, err
		}
	}
	if p.Name == "" && p.ID == "" {
		return nil, t.errAt("a usage plan with neither name nor id")
	}
	if v := t.get("throttle"); !v.isNull() {
		if p.Throttle, err = readAWSThrottle(v, "rateLimit", "burstLimit"); err != nil {
			return nil, err
		}
	}
	if v := t.get("quota"); !v.isNull() {
		if p.Quota, err = readAWSQuota(v); err != nil {
			return nil, err
		}
	}
	stages, err := t.get("apiStages").listOf("a list of API stages")
	if err != nil {
		return nil, err
	}
	for _, s := range stages {
		if err := s.mappingOf("an API stage", nil, nil); err != nil {
			return nil, err
		}
		th := s.get("throttle")
		if th.isNull() {
			continue
		}
		if err := th.mappingOf("a mapping of methods (/PATH/METHOD) to throttles", nil, nil); err != nil {
			return nil, err
		}
		for _, f := range th.fields {
			mt, err := readAWSThrottle(f.val, "rateLimit", "burstLimit")
			if err != nil {
				return nil, err
			}
			p.Methods = append(p.Methods, AWSMethod{Name: f.key, Throttle: mt})
		}
	}
	return p, nil
}

func readAWSStage(t *tree) (*AWSStage, error) {
	s := &AWSStage{}
	if v := t.get("stageName"); v != nil {
		var err error
		if s.Name, err = v.str(); err != nil {
			return nil, err
		}
	}
	ms := t.get("methodSettings")
	if ms.isNull() {
		return nil, t.errAt("stage %q has no methodSettings: no throttle of its own (the account's applies)", s.Name)
	}
	if err := ms.mappingOf("a mapping of methods (RESOURCE/METHOD) to settings", nil, nil); err != nil {
		return nil, err
	}
	for _, f := range ms.fields {
		if f.val.get("throttlingRateLimit") == nil && f.val.get("throttlingBurstLimit") == nil {
			continue // caching or logging only
		}
		th, err := readAWSThrottle(f.val, "throttlingRateLimit", "throttlingBurstLimit")
		if err != nil {
			return nil, err
		}
		if f.key == "*/*" {
			s.Default = th
			continue
		}
		// RESOURCE/METHOD with the path's slashes written ~1
		s.Methods = append(s.Methods, AWSMethod{Name: strings.ReplaceAll(f.key, "~1", "/"), Throttle: th})
	}
	if s.Default == nil && len(s.Methods) == 0 {
		return nil, ms.errAt("no method setting throttles (throttlingRateLimit, throttlingBurstLimit)")
	}
	return s, nil
}

// readAWSThrottle reads a throttle whose fields are called rate and burst.
func readAWSThrottle(t *tree, rate, burst string) (*AWSThrottle, error) {
	if err := t.mappingOf("a throttle {"+rate+", "+burst+"}", nil, nil); err != nil {
		return nil, err
	}
	th := &AWSThrottle{Where: t.pos}
	rv, bv := t.at(rate), t.at(burst)
	if rv.isNull() {
		return nil, rv.errAt("missing: want the requests a second, e.g. 5.0")
	}
	if bv.isNull() {
		return nil, bv.errAt("missing: want the bucket's size, e.g. 10")
	}
	r, per, err := awsRate(rv)
	if err != nil {
		return nil, err
	}
	b, err := bv.integer()
	if err != nil {
		return nil, err
	}
	if b < 1 {
		return nil, bv.errAt("%d: a burst of 0 refuses every request (not modelled); want 1 or more", b)
	}
	th.RateText, th.Rate, th.Per, th.Burst = rv.text, r, per, b
	return th, nil
}

// awsRate reads a rateLimit, a decimal number of requests a second, as a
// whole rate per a whole number of seconds: 5.0 is 5/1s, 0.5 is 1/2s, 2.25
// is 9/4s.
func awsRate(t *tree) (int64, time.Duration, error) {
	if t.kind != treeScalar || t.typ != "integer" && t.typ != "number" {
		return 0, 0, t.errAt("found %s, want the requests a second, e.g. 5.0", t.describe())
	}
	r, ok := new(big.Rat).SetString(t.text)
	if !ok || strings.ContainsAny(t.text, "eE") || r.Sign() <= 0 {
		return 0, 0, t.errAt("%s: want the requests a second as a decimal number above 0, e.g. 5.0", t.text)
	}
	if !r.Num().IsInt64() || !r.Denom().IsInt64() || r.Denom().Int64() > 1_000_000 || r.Num().Int64() > 1<<40 {
		return 0, 0, t.errAt("%s: out of range (want up to 2^40 a second, in steps of at least 1 per 1,000,000s)", t.text)
	}
	return r.Num().Int64(), time.Duration(r.Denom().Int64()) * time.Second, nil
}

func readAWSQuota(t *tree) (*AWSQuota, error) {
	if err := t.mappingOf("a quota {limit, offset, period}", nil, nil); err != nil {
		return nil, err
	}
	q := &AWSQuota{Where: t.pos}
	lv := t.at("limit")
	if lv.isNull() {
		return nil, lv.errAt("missing: want the requests a period")
	}
	var err error
	if q.Limit, err = lv.integer(); err != nil {
		return nil, err
	}
	if q.Limit < 1 || q.Limit > 1<<40 {
		return nil, lv.errAt("%d: want from 1 to 2^40 requests a period", q.Limit)
	}
	if ov := t.get("offset"); !ov.isNull() {
		if q.Offset, err = ov.integer(); err != nil {
			return nil, err
		}
		if q.Offset < 0 || q.Offset >= q.Limit {
			return nil, ov.errAt("%d: want from 0 to below the limit %d", q.Offset, q.Limit)
		}
	}
	pv := t.at("period")
	if q.Period, err = pv.str(); err != nil {
		return nil, err
	}
	if awsPeriod(q.Period) == "" {
		return nil, pv.errAt("%q: want DAY, WEEK or MONTH", q.Period)
	}
	return q, nil
}

// awsPeriod is the per of aws-usage-plan for a QuotaSettings period.
func awsPeriod(p string) string {
	switch p {
	case "DAY":
		return "24h"
	case "WEEK":
		return "168h"
	case "MONTH":
		return "1mo"
	}
	return ""
}

// label is the plan's row label: its name, else its id.
func (p *AWSPlan) label() string {
	if p.Name != "" {
		return p.Name
	}
	return p.ID
}

// awsScope is one all-of row of the import: its label and its members.
type awsScope struct {
	label   string
	members []awsMember
}

type awsMember struct {
	entry scenarios.AlgEntry
	lines []string
}

func (a *AWS) scopes() []awsScope {
	base := filepath.Base(a.File)
	// each member is labelled by its level and where it is written, so
	// that outputs say which level fired (API Gateway's 429 does not)
	account := awsMember{entry: scenarios.AlgEntry{Name: str("token-bucket"), Label: str("account"), By: str("global"), Rate: scenarios.IntOf(awsAccountRate), Per: scenarios.DurationOf("1s"), Burst: scenarios.IntOf(awsAccountBurst)},
		lines: []string{"the account's throttle in the Region: API Gateway's default quota (10,000 a second, burst 5,000); set yours"}}
	bucket := func(th *AWSThrottle, by, level, what string) awsMember {
		return awsMember{entry: scenarios.AlgEntry{Name: str("token-bucket"), Label: str(fmt.Sprintf("%s (%s:%d)", level, base, th.Where.Line)), By: str(by), Rate: scenarios.IntOf(th.Rate), Per: scenarios.DurationOf(scenarios.DurationText(th.Per)), Burst: scenarios.IntOf(th.Burst)},
			lines: []string{fmt.Sprintf("%s:%d: %s: rateLimit %s, burstLimit %d", base, th.Where.Line, what, th.RateText, th.Burst)}}
	}
	var out []awsScope
	for _, p := range a.Plans {
		var quota []awsMember
		if q := p.Quota; q != nil {
			e := scenarios.AlgEntry{Name: str("aws-usage-plan"), Label: str(fmt.Sprintf("quota (%s:%d)", base, q.Where.Line)), By: str("api-key"), Rate: scenarios.IntOf(q.Limit), Per: scenarios.DurationOf(awsPeriod(q.Period))}
			if q.Offset > 0 {
				e.QuotaOffset = scenarios.IntOf(q.Offset)
			}
			quota = append(quota, awsMember{entry: e, lines: []string{fmt.Sprintf("%s:%d: usage plan %s: quota %d per %s, offset %d", base, q.Where.Line, p.label(), q.Limit, q.Period, q.Offset)}})
		}
		var own []awsMember
		if p.Throttle != nil {
			own = append(own, bucket(p.Throttle, "api-key", "plan", "usage plan "+p.label()+"'s throttle per API key"))
		}
		out = append(out, awsScope{label: p.label(), members: slices.Concat(own, quota, []awsMember{account})})
		for _, m := range p.Methods {
			// a method's throttle in the plan replaces the plan's
			// for that method's requests
			own := []awsMember{bucket(m.Throttle, "api-key", "plan method", "usage plan "+p.label()+"'s throttle of "+m.Name+" per API key")}
			out = append(out, awsScope{label: p.label() + " " + m.Name, members: slices.Concat(own, quota, []awsMember{account})})
		}
	}
	if s := a.Stage; s != nil {
		name := "stage " + s.Name
		if s.Default != nil {
			out = append(out, awsScope{label: name, members: []awsMember{bucket(s.Default, "global", "stage", name+"'s throttle (*/*)"), account}})
		}
		for _, m := range s.Methods {
			// a method's setting replaces the stage's default for it
			out = append(out, awsScope{label: name + " " + m.Name, members: []awsMember{bucket(m.Throttle, "global", "method", name+"'s throttle of "+m.Name), account}})
		}
	}
	return out
}

// Scenario makes each usage plan, each method throttle of a plan, and the
// stage and each method of it an all-of row of the levels that apply to
// its requests, in the order API Gateway applies them ("Throttle requests
// to your REST APIs": a usage plan's per-client or per-method limits, the
// stage's per-method limits, then the account's per Region), with commit
// in-order: the reading modelled is that a request counts at each level it
// passes and goes no further than the first that refuses it.
func (a *AWS) Scenario(o Options) (*Import, error) {
	scopes, err := a.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(a.File)
	im := newImport(base, "The throttles and quotas of "+base+".",
		"Imported from "+base+" by ratesim import --from aws: one all-of row per usage plan,",
		"method or stage, holding the levels that apply to its requests in API Gateway's order:",
		"the usage plan's throttle and quota per API key (by: api-key), the stage's or method's",
		"throttle (by: global), the account's. Each throttle is a token bucket.")
	first := scopes[0].members[0].entry
	im.File.Limit = &scenarios.Limit{Rate: first.Rate, Per: first.Per, Burst: first.Burst}
	im.File.Duration = scenarios.DurationOf("10s")
	for _, s := range scopes {
		i := im.row(scenarios.AlgEntry{Name: str("all-of"), Label: str(s.label), Commit: str("in-order")})
		for _, m := range s.members {
			im.member(i, m.entry, m.lines...)
		}
	}
	im.note("NOTE: API Gateway calls its throttles and quotas best-effort; each level here is one exact counter.")
	im.File.Traffic = []scenarios.Source{{Type: str("steady"), Key: str("client"), Rate: scenarios.RateOf("20/s"),
		Attributes: scenarios.Attributes{{Name: "api-key", Value: str("key-1")}}}}
	im.Layout.Foot["algorithms"] = im.notes
	im.notes = nil
	im.Layout.Head["traffic[0]"] = []string{"a placeholder: replace it with your traffic; api-key is the API key a request carries"}
	return im, nil
}

func (a *AWS) pick(scope string) ([]awsScope, error) {
	all := a.scopes()
	if scope == "" {
		return all, nil
	}
	var names []string
	for _, s := range all {
		if s.label == scope {
			return []awsScope{s}, nil
		}
		names = append(names, strconv.Quote(s.label))
	}
	return nil, fmt.Errorf("--scope %q: no usage plan, method or stage of %s has that name (its scopes: %s)", scope, a.File, strings.Join(names, ", "))
}

// Keys returns what the levels count by: the API key (API Gateway reads it
// from the x-api-key header) for a usage plan's, one key for every request
// for the account's and a stage's.
func (a *AWS) Keys(o Options) ([]Key, error) {
	scopes, err := a.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	keys := []Key{{Kind: KeyGlobal}}
	for _, s := range scopes {
		for _, m := range s.members {
			if m.entry.By.Text == "api-key" {
				return append(keys, Key{Kind: KeyHeader, Name: "x-api-key"}), nil
			}
		}
	}
	return keys, nil
}

func guessAWS(_ string, data []byte) bool {
	s := string(data)
	return strings.HasPrefix(strings.TrimSpace(s), "{") &&
		(strings.Contains(s, `"apiStages"`) || strings.Contains(s, `"methodSettings"`) ||
			strings.Contains(s, `"quota"`) && strings.Contains(s, `"period"`))
}
