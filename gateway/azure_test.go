package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadAzure: the documentation's rate-limit-by-key example (calls 10
// per 60s, increment-condition on status 200, by the caller's address)
// and a rate-limit before it become the in-order members of one all-of
// row, each labelled by its element and line; --scope picks one alone.
func TestReadAzure(t *testing.T) {
	src := `<policies>
    <inbound>
        <base />
        <rate-limit calls="20" renewal-period="90" remaining-calls-variable-name="remainingCallsPerSubscription"/>
        <rate-limit-by-key calls="10"
              renewal-period="60"
              increment-condition="@(context.Response.StatusCode == 200)"
              counter-key="@(context.Request.IpAddress)"
              remaining-calls-variable-name="remainingCallsPerIP"/>
    </inbound>
</policies>`
	require.Equal(t, "azure", Guess("policy.xml", []byte(src)))
	g, err := Read("azure", "policy.xml", []byte(src))
	require.NoError(t, err)
	im, err := g.Scenario(Options{})
	require.NoError(t, err)
	out, err := im.Text()
	require.NoError(t, err)
	parseImported(t, out)
	require.Contains(t, out, "  - name: all-of\n    label: inbound\n    commit: in-order\n")
	require.Contains(t, out, "      - {name: azure-rate-limit, label: \"rate-limit (policy.xml:4)\", rate: 20, per: 90s}\n")
	require.Contains(t, out, "      - {name: azure-rate-limit, label: \"rate-limit-by-key (policy.xml:5)\", by: remote_addr, rate: 10, per: 1m, increment-condition: true}\n")
	im, err = g.Scenario(Options{Scope: "rate-limit-by-key-5"})
	require.NoError(t, err)
	out, err = im.Text()
	require.NoError(t, err)
	require.Contains(t, out, "  - {name: azure-rate-limit, label: rate-limit-by-key-5, rate: 10, per: 1m, increment-condition: true}\n")
	keys, err := g.Keys(Options{Scope: "rate-limit-by-key-5"})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyAddr, Where: Pos{Line: 5, Col: 9}}}, keys)

	g, err = Read("azure", "p.xml", []byte(`<policies><inbound><rate-limit-by-key calls="5" renewal-period="10" counter-key="@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;,&quot;&quot;))"/></inbound></policies>`))
	require.NoError(t, err)
	keys, err = g.Keys(Options{})
	require.NoError(t, err)
	require.Equal(t, KeyHeader, keys[0].Kind)
	require.Equal(t, "x-client", keys[0].Name)
}

// TestReadAzureErrors: other policy expressions, and what is not
// modelled, are errors with their line.
func TestReadAzureErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"<policies>\n<inbound>\n  <rate-limit-by-key calls=\"5\" renewal-period=\"10\" counter-key=\"@(context.Subscription.Id)\"/>\n</inbound></policies>",
			`p.xml:3:3: rate-limit-by-key: counter-key="@(context.Subscription.Id)": a policy expression other than the address or a header is not modelled`},
		{`<policies><inbound><rate-limit calls="@(5)" renewal-period="10"/></inbound></policies>`, `p.xml:1:20: rate-limit: calls="@(5)": want a whole number`},
		{`<policies><inbound><rate-limit calls="5" renewal-period="301"/></inbound></policies>`, `renewal-period from 1 to 300 seconds`},
		{`<policies><inbound><rate-limit calls="5" renewal-period="10"><api name="a" calls="1" renewal-period="1"/></rate-limit></inbound></policies>`, `p.xml:1:62: <api> inside rate-limit: per-API and per-operation limits are not modelled`},
		{`<policies><inbound/></policies>`, `p.xml:1:1: no rate-limit or rate-limit-by-key policy`},
		// an increment-condition is read on the response, which is the 429
		// of a later limit when that one refuses: not modelled
		{"<policies><inbound>\n  <rate-limit calls=\"5\" renewal-period=\"10\" increment-condition=\"@(context.Response.StatusCode == 200)\"/>\n  <rate-limit-by-key calls=\"2\" renewal-period=\"10\" counter-key=\"@(context.Request.IpAddress)\"/>\n</inbound></policies>",
			`p.xml:2:3: rate-limit: increment-condition on a limit that another limit after it may refuse`},
	} {
		_, err := Read("azure", "p.xml", []byte(c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
}

// TestAzureInOrderGolden: a per-address limit, then (where <base /> puts
// the parent scope's policies) one per subscription, import as one all-of
// row with commit in-order whose members name their element and line.
func TestAzureInOrderGolden(t *testing.T) {
	g := readWith(t, "testdata/azure-inbound.xml", ReadAzure)
	im, err := g.Scenario(Options{})
	require.NoError(t, err)
	out, err := im.Text()
	require.NoError(t, err)
	parseImported(t, out)
	golden(t, "azure-inbound.golden.yaml", out)
}
