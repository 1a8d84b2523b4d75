package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadAzure: the documentation's rate-limit-by-key example (calls 10
// per 60s, increment-condition on status 200, by the caller's address)
// and a rate-limit beside it become azure-rate-limit rows.
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
	require.Contains(t, out, "  - {name: azure-rate-limit, label: rate-limit-4, rate: 20, per: 90s}\n")
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
	} {
		_, err := Read("azure", "p.xml", []byte(c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
}
