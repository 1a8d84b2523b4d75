package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// TestImportAWS: the usage plans of get-usage-plans and the stage of
// get-stage, as the AWS CLI prints them, import to the goldens beside
// them, and the scenarios load.
func TestImportAWS(t *testing.T) {
	for _, name := range []string{"aws-usage-plans", "aws-stage"} {
		t.Run(name, func(t *testing.T) {
			path := "testdata/" + name + ".json"
			data := readWith(t, path, func(_ string, data []byte) ([]byte, error) { return data, nil })
			require.Equal(t, "aws", Guess(path, data))
			a := readWith(t, path, ReadAWS)
			out, err := text(a.Scenario(Options{}))
			require.NoError(t, err)
			golden(t, name+".golden.yaml", out)
			parseImported(t, out)
		})
	}
	a := readWith(t, "testdata/aws-usage-plans.json", ReadAWS)
	out, err := text(a.Scenario(Options{Scope: "Basic /pets/GET"}))
	require.NoError(t, err)
	// rateLimit 0.5 is 1 per 2s
	require.Contains(t, out, "- {name: token-bucket, label: \"plan method (aws-usage-plans.json:12)\", by: api-key, rate: 1, per: 2s, burst: 2}\n")
	require.NotContains(t, out, "Premium")
	keys, err := a.Keys(Options{})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyGlobal}, {Kind: KeyHeader, Name: "x-api-key"}}, keys)
	_, err = a.Scenario(Options{Scope: "Gold"})
	require.EqualError(t, err, `--scope "Gold": no usage plan, method or stage of testdata/aws-usage-plans.json has that name (its scopes: "Basic", "Basic /pets/GET", "Premium")`)
}

// TestImportAWSOrder: one usage plan (get-usage-plan) is one all-of row,
// its levels in the order API Gateway applies them: the plan's throttle,
// its quota, the account's throttle.
func TestImportAWSOrder(t *testing.T) {
	a, err := ReadAWS("plan.json", []byte(`{"id": "p1", "name": "plan", "throttle": {"burstLimit": 10, "rateLimit": 5.0}, "quota": {"limit": 20, "offset": 5, "period": "DAY"}}`))
	require.NoError(t, err)
	out, err := text(a.Scenario(Options{}))
	require.NoError(t, err)
	sc := parseImported(t, out)
	require.Len(t, sc.Algorithms, 1)
	require.Equal(t, "plan", sc.Algorithms[0].Label)
	require.Equal(t, []string{"token-bucket", "aws-usage-plan", "token-bucket"}, memberNames(sc.Algorithms[0]))
}

func memberNames(a scenarios.Algorithm) []string {
	var names []string
	for _, m := range a.Params.Members {
		names = append(names, m.Name)
	}
	return names
}

var invalidAWS = []struct{ src, want string }{
	{`[1, 2]`, `a.json:1:1: found a list, want the JSON of aws apigateway get-usage-plans, get-usage-plan or get-stage`},
	{`{"name": "x"}`, `a.json:1:1: neither usage plans (items, or a plan's throttle and quota) nor a stage's methodSettings: want the JSON of aws apigateway get-usage-plans, get-usage-plan or get-stage`},
	{"{\"items\": [\n  {\"name\": \"p\", \"quota\": {\"limit\": 10, \"period\": \"YEAR\"}}]}", `a.json:2:50: items[0].quota.period: "YEAR": want DAY, WEEK or MONTH`},
	{"{\"items\": [\n  {\"name\": \"p\", \"throttle\": {\"burstLimit\": 0, \"rateLimit\": 1}}]}", `a.json:2:44: items[0].throttle.burstLimit: 0: a burst of 0 refuses every request (not modelled); want 1 or more`},
	{"{\"items\": [\n  {\"name\": \"p\", \"throttle\": {\"burstLimit\": 2, \"rateLimit\": \"fast\"}}]}", `a.json:2:60: items[0].throttle.rateLimit: found string "fast", want the requests a second, e.g. 5.0`},
	{"{\"items\": [\n  {\"name\": \"p\", \"throttle\": {\"burstLimit\": 2, \"rateLimit\": 1e3}}]}", `a.json:2:60: items[0].throttle.rateLimit: found string "1e3", want the requests a second`},
	{"{\"items\": [\n  {\"name\": \"p\", \"throttle\": {\"burstLimit\": 2}}]}", `a.json:2:29: items[0].throttle.rateLimit: missing: want the requests a second, e.g. 5.0`},
	{"{\"items\": [\n  {\"name\": \"p\", \"quota\": {\"limit\": 10, \"offset\": 10, \"period\": \"DAY\"}}]}", `a.json:2:50: items[0].quota.offset: 10: want from 0 to below the limit 10`},
	{`{"items": [{"throttle": {"burstLimit": 1, "rateLimit": 1}}]}`, `a.json:1:12: items[0]: a usage plan with neither name nor id`},
	{"{\"stageName\": \"prod\",\n \"methodSettings\": {\"*/*\": {\"metricsEnabled\": true}}}", `a.json:2:20: methodSettings: no method setting throttles (throttlingRateLimit, throttlingBurstLimit)`},
	{`{"stageName": "prod", "methodSettings": {"*/*": {"throttlingRateLimit": 10}}}`, `a.json:1:49: methodSettings.*/*.throttlingBurstLimit: missing`},
	{`{"items": [}`, `a.json:1:12: YAML syntax error`},
}

// TestReadAWSErrors: what cannot be read is an error at its file:line:col.
func TestReadAWSErrors(t *testing.T) {
	for _, c := range invalidAWS {
		_, err := ReadAWS("a.json", []byte(c.src))
		require.Error(t, err, c.src)
		require.True(t, strings.HasPrefix(err.Error(), c.want), "%s\ngot  %v\nwant %s", c.src, err, c.want)
		readOK(t, err) // an *Error
	}
}

func FuzzReadAWS(f *testing.F) {
	for _, p := range []string{"testdata/aws-usage-plans.json", "testdata/aws-stage.json"} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data, "")
	}
	for _, c := range invalidAWS {
		f.Add([]byte(c.src), "")
	}
	f.Add([]byte(`{"id": "x", "throttle": {"burstLimit": 3, "rateLimit": 0.000001}, "quota": {"limit": 1099511627776, "period": "WEEK"}}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, scope string) {
		a, err := ReadAWS("f.json", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(a.Scenario(Options{Scope: scope}))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--scope") {
				t.Fatal(err)
			}
			return
		}
		if _, err := a.Keys(Options{Scope: scope}); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
