package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// TestReadApigee: the documentation's example policies become their rows,
// with what the rows do not model as comments naming the lines.
func TestReadApigee(t *testing.T) {
	sa := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<SpikeArrest async="false" continueOnError="false" enabled="true" name="Spike-Arrest-1">
    <DisplayName>Spike Arrest-1</DisplayName>
    <Properties/>
    <Identifier ref="request.header.some-header-name"/>
    <MessageWeight ref="request.header.weight"/>
    <Rate>30ps</Rate>
    <UseEffectiveCount>true</UseEffectiveCount>
</SpikeArrest>
`
	require.Equal(t, "apigee", Guess("policies/sa.xml", []byte(sa)))
	g, err := Read("apigee", "policies/sa.xml", []byte(sa))
	require.NoError(t, err)
	im, err := g.Scenario(Options{})
	require.NoError(t, err)
	out, err := im.Text()
	require.NoError(t, err)
	require.Equal(t, `# Imported from sa.xml by ratesim import --from apigee: the policy's row,
# its key the header some-header-name.
name: sa
description: "The SpikeArrest policy of sa.xml."
limit: {rate: 30, per: 1s}
duration: 10s
algorithms:
  # sa.xml:2: SpikeArrest Spike-Arrest-1
  # sa.xml:6: MessageWeight ref="request.header.weight": the weight is the traffic's cost
  - {name: apigee-spike-arrest, label: Spike-Arrest-1, rate: 30, per: 1s, use-effective-count: true}
traffic:
  # a placeholder: replace it with your traffic, or replay an access log
  - {type: steady, key: client, rate: 60/1s}
`, out)
	keys, err := g.Keys(Options{})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyHeader, Name: "some-header-name", Where: Pos{Line: 5, Col: 5}}}, keys)

	q := `<Quota name="QuotaPolicy" type="flexi">
  <Allow count="5"/>
  <Interval>2</Interval>
  <TimeUnit>minute</TimeUnit>
</Quota>`
	g, err = Read("apigee", "q.xml", []byte(q))
	require.NoError(t, err)
	im, err = g.Scenario(Options{})
	require.NoError(t, err)
	out, err = im.Text()
	require.NoError(t, err)
	require.Contains(t, out, "  - {name: apigee-quota, label: QuotaPolicy, rate: 5, per: 2m, quota-type: flexi}\n")
	require.Contains(t, out, "its key one key for every request.")
}

// TestReadApigeeErrors: what the reader cannot map is an error naming
// file:line:col.
func TestReadApigeeErrors(t *testing.T) {
	for _, c := range invalidApigee {
		_, err := Read("apigee", "s.xml", []byte(c.src))
		require.ErrorContains(t, err, c.want, c.src)
		readOK(t, err) // an *Error
	}
}

var invalidApigee = []struct{ src, want string }{
	{`<SpikeArrest name="s"><Rate>30px</Rate></SpikeArrest>`, `s.xml:1:23: <Rate>30px: want Nps or Npm, like 30ps or 100pm`},
	{"<SpikeArrest name=\"s\">\n  <Rate ref=\"flow.rate\"/>\n</SpikeArrest>", `s.xml:2:3: <Rate ref="flow.rate">: the rate comes from a flow variable; write the rate as the element's text (Apigee's fallback) to import it`},
	{`<SpikeArrest name="s"><Rate>3ps</Rate><Bogus/></SpikeArrest>`, `s.xml:1:39: <Bogus>: not an element of SpikeArrest that ratesim reads`},
	{`<ResponseCache name="c"/>`, `s.xml:1:1: <ResponseCache>: want an Apigee SpikeArrest or Quota policy`},
	{"<Quota name=\"q\">\n <Allow count=\"5\"/>\n <Interval>3</Interval>\n <TimeUnit>month</TimeUnit>\n</Quota>", `s.xml:3:2: <Interval>3 with month: ratesim counts one calendar month (per: 1mo), not 3`},
	{`<Quota name="q"><Allow><Class ref="x"/></Allow><Interval>1</Interval><TimeUnit>hour</TimeUnit></Quota>`, `s.xml:1:24: <Allow> with <Class>: per-class counts are not modelled`},
	{`<Quota name="q" type="weekly"/>`, `s.xml:1:1: <Quota type="weekly">: want calendar, flexi or rollingwindow`},
	{`<SpikeArrest name="s"><Rate>3ps</Rate>`, `s.xml:1:`},
}

// FuzzReadApigee: any policy file is read or refused with an *Error, and
// what is read imports into a scenario that parses.
func FuzzReadApigee(f *testing.F) {
	f.Add([]byte("<SpikeArrest name=\"s\">\n  <Identifier ref=\"request.header.x\"/>\n  <MessageWeight ref=\"request.header.w\"/>\n  <Rate>100pm</Rate>\n  <UseEffectiveCount>true</UseEffectiveCount>\n</SpikeArrest>\n"))
	f.Add([]byte(`<Quota name="q" type="rollingwindow"><Allow count="5"/><Interval>2</Interval><TimeUnit>minute</TimeUnit><Identifier ref="client_id"/></Quota>`))
	f.Add([]byte(`<Quota name="q" type="calendar"><Allow count="1000"/><Interval>1</Interval><TimeUnit>month</TimeUnit><StartTime>2024-1-1 00:00:00</StartTime></Quota>`))
	for _, c := range invalidApigee {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read("apigee", "f.xml", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(g.Scenario(Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Keys(Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
