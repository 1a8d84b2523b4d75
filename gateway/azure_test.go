package gateway

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
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
	require.Equal(t, []Key{{Kind: KeyAddr, Where: Pos{File: "policy.xml", Line: 5, Col: 9}}}, keys)

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
	for _, c := range invalidAzure {
		g, err := Read("azure", "p.xml", []byte(c.src))
		if err == nil {
			_, err = g.Scenario(Options{}) // limits that cannot go together
		}
		require.ErrorContains(t, err, c.want, c.src)
		readOK(t, err) // an *Error
	}
}

var invalidAzure = []struct{ src, want string }{
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
}

// FuzzReadAzure: any policy file is read or refused with an *Error, and
// what is read imports into a scenario that parses, whole or by --scope.
func FuzzReadAzure(f *testing.F) {
	data, err := os.ReadFile("testdata/azure-inbound.xml")
	require.NoError(f, err)
	f.Add(data, "")
	f.Add([]byte(`<policies><inbound><rate-limit-by-key calls="5" renewal-period="10" counter-key="@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;,&quot;&quot;))"/><choose><when condition="@(true)"><rate-limit calls="2" renewal-period="1"/></when></choose></inbound></policies>`), "rate-limit-1")
	f.Add([]byte(`<policies><inbound><llm-token-limit tokens-per-minute="5000" counter-key="k"/><rate-limit-by-key calls="5" renewal-period="300" counter-key="k" increment-condition="@(true)"/></inbound></policies>`), "")
	for _, c := range invalidAzure {
		f.Add([]byte(c.src), "")
	}
	f.Fuzz(func(t *testing.T, data []byte, scope string) {
		g, err := Read("azure", "f.xml", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(g.Scenario(Options{Scope: scope}))
		if err != nil {
			var ge *Error // limits that cannot go together, with their line
			if !strings.HasPrefix(err.Error(), "--scope") && !errors.As(err, &ge) {
				t.Fatal(err)
			}
			return
		}
		if _, err := g.Keys(Options{Scope: scope}); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
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

// apimScopes reads the example policy files of examples/apim, outermost
// first, with the content of the scopes in replace instead of theirs.
func apimScopes(t *testing.T, replace map[string]string) []AzureFile {
	var files []AzureFile
	for _, sc := range AzureScopes {
		f := AzureFile{Scope: sc, File: "examples/apim/" + sc + ".xml"}
		if src, ok := replace[sc]; ok {
			f.Data = []byte(src)
		} else {
			data, err := os.ReadFile("../" + f.File)
			require.NoError(t, err)
			f.Data = data
		}
		files = append(files, f)
	}
	return files
}

// TestAzureScopesGolden: the four scopes of examples/apim join at
// <base /> into one in-order all-of: the API's limit by X-Client (it
// writes <base /> after it), then the global scope's by address (what
// the product's <base /> stands for, before the product's own
// rate-limit), the product's rate-limit, and the operation's by the
// constant "checkout" (after its <base />). Each member is labelled by
// scope, element and file:line; each counts by its own key.
func TestAzureScopesGolden(t *testing.T) {
	az, err := ReadAzureScopes(apimScopes(t, nil))
	require.NoError(t, err)
	var labels []string
	for _, l := range az.Limits {
		labels = append(labels, l.label())
	}
	require.Equal(t, []string{
		"api rate-limit-by-key (api.xml:3)",
		"global rate-limit-by-key (global.xml:3)",
		"product rate-limit (product.xml:4)",
		"operation rate-limit-by-key (operation.xml:4)",
	}, labels)
	im, err := az.Scenario(Options{})
	require.NoError(t, err)
	out, err := im.Text()
	require.NoError(t, err)
	parseImported(t, out)
	golden(t, "azure-scopes.golden.yaml", out)
	keys, err := az.Keys(Options{})
	require.NoError(t, err)
	var kinds []string
	for _, k := range keys {
		kinds = append(kinds, k.Kind+" "+k.Name+" "+k.Where.String())
	}
	require.Equal(t, []string{
		"header x-client examples/apim/api.xml:3:9",
		"addr  examples/apim/global.xml:3:9",
		"other the subscription examples/apim/product.xml:4:9",
		"global checkout examples/apim/operation.xml:4:9",
	}, kinds)
}

// TestAzureScopesBase: a scope whose <inbound> has no <base /> drops the
// scopes above it there, as APIM does; the import says which.
func TestAzureScopesBase(t *testing.T) {
	// the operation writes no <base />: its own limit alone applies
	noBase := "<policies>\n    <inbound>\n        <rate-limit-by-key calls=\"2\" renewal-period=\"10\" counter-key=\"checkout\" />\n    </inbound>\n</policies>\n"
	az, err := ReadAzureScopes(apimScopes(t, map[string]string{"operation": noBase}))
	require.NoError(t, err)
	require.Len(t, az.Limits, 1)
	require.Equal(t, "operation-rate-limit-by-key-3", az.Limits[0].Name())
	require.Equal(t, []string{
		"the global scope's <inbound> (examples/apim/global.xml) does not apply: the <inbound> of examples/apim/operation.xml (operation.xml:2) has no <base />, so APIM runs none of the scopes above the operation there",
		"the product scope's <inbound> (examples/apim/product.xml) does not apply: the <inbound> of examples/apim/operation.xml (operation.xml:2) has no <base />, so APIM runs none of the scopes above the operation there",
		"the api scope's <inbound> (examples/apim/api.xml) does not apply: the <inbound> of examples/apim/operation.xml (operation.xml:2) has no <base />, so APIM runs none of the scopes above the operation there",
	}, az.Notes)
	im, err := az.Scenario(Options{})
	require.NoError(t, err)
	out, err := im.Text()
	require.NoError(t, err)
	require.Contains(t, out, "  # the api scope's <inbound> (examples/apim/api.xml) does not apply:")
	require.Contains(t, out, "  - {name: azure-rate-limit, label: operation-rate-limit-by-key-3, rate: 2, per: 10s}\n")

	// the API writes none: the global and product limits drop, the API's
	// and the operation's stay, in order
	apiNoBase := "<policies>\n    <inbound>\n        <rate-limit-by-key calls=\"4\" renewal-period=\"10\" counter-key=\"@(context.Request.IpAddress)\" />\n    </inbound>\n</policies>\n"
	az, err = ReadAzureScopes(apimScopes(t, map[string]string{"api": apiNoBase}))
	require.NoError(t, err)
	var labels []string
	for _, l := range az.Limits {
		labels = append(labels, l.label())
	}
	require.Equal(t, []string{"api rate-limit-by-key (api.xml:3)", "operation rate-limit-by-key (operation.xml:4)"}, labels)
	require.Len(t, az.Notes, 2)
	require.Contains(t, az.Notes[1], "the product scope's <inbound> (examples/apim/product.xml) does not apply: the <inbound> of examples/apim/api.xml (api.xml:2) has no <base />")

	// a product without an <inbound> at all runs neither its limit nor
	// the global scope's there
	az, err = ReadAzureScopes(apimScopes(t, map[string]string{"product": "<policies>\n  <outbound><base /></outbound>\n</policies>\n"}))
	require.NoError(t, err)
	require.Equal(t, []string{"the global scope's <inbound> (examples/apim/global.xml) does not apply: examples/apim/product.xml has no <inbound>, so APIM runs none of the scopes above the product there"}, az.Notes)
	require.Len(t, az.Limits, 2)
}

// TestAzureScopesErrors: what the join cannot model, and mistakes in any
// scope's file, are errors naming file:line:col.
func TestAzureScopesErrors(t *testing.T) {
	for _, c := range []struct {
		replace map[string]string
		want    string
	}{
		// rate-limit is not a global-scope policy
		{map[string]string{"global": "<policies>\n  <inbound>\n    <rate-limit calls=\"5\" renewal-period=\"10\" />\n  </inbound>\n</policies>"},
			"examples/apim/global.xml:3:5: rate-limit: not allowed in the global scope"},
		// a mistake in a scope the join drops is still one
		{map[string]string{"product": "<policies>\n  <inbound>\n    <rate-limit calls=\"@(5)\" renewal-period=\"10\" />\n  </inbound>\n</policies>"},
			"examples/apim/product.xml:3:5: rate-limit: calls=\"@(5)\": want a whole number"},
		{map[string]string{"operation": "<policies>\n  <inbound>\n    <choose><when condition=\"@(true)\"><base /></when></choose>\n  </inbound>\n</policies>"},
			"examples/apim/operation.xml:3:39: <base /> inside <when>: it is modelled directly in a section"},
		{map[string]string{"api": "<base />"}, "examples/apim/api.xml:1:1: <base /> as the document: it is modelled directly in a section"},
		// the operation's by address shares the global scope's counter
		{map[string]string{"operation": "<policies>\n  <inbound>\n    <base />\n    <rate-limit-by-key calls=\"1\" renewal-period=\"5\" counter-key=\"@(context.Request.IpAddress)\" />\n  </inbound>\n</policies>"},
			"examples/apim/operation.xml:4:5: rate-limit-by-key: the counter-key of the one at examples/apim/global.xml:3:9 (the client address): APIM keeps one counter per key value"},
		// a count once the response is known, before another scope's limit
		{map[string]string{"global": "<policies>\n  <inbound>\n    <rate-limit-by-key calls=\"5\" renewal-period=\"10\" increment-condition=\"@(context.Response.StatusCode == 200)\" counter-key=\"@(context.Request.IpAddress)\" />\n  </inbound>\n</policies>"},
			"examples/apim/global.xml:3:5: rate-limit-by-key: increment-condition on a limit that another limit after it may refuse"},
		{map[string]string{"operation": "<policies>\n  <inbound />\n</policies>", "api": "<policies>\n  <inbound />\n</policies>"},
			"examples/apim/operation.xml:1:1: no rate-limit or rate-limit-by-key policy applies to the operation's requests, in examples/apim/global.xml, examples/apim/product.xml, examples/apim/api.xml, examples/apim/operation.xml joined at <base />"},
	} {
		a, err := ReadAzureScopes(apimScopes(t, c.replace))
		if err == nil {
			_, err = a.Scenario(Options{}) // limits that cannot go together
		}
		require.ErrorContains(t, err, c.want)
		var ge *Error
		require.ErrorAs(t, err, &ge)
	}
}

// TestAzureScopesAlone: limits that cannot be imported together (one
// counter-key in two scopes, an increment-condition before another limit)
// are refused whole, with the names --scope takes, and each of them is
// imported alone.
func TestAzureScopesAlone(t *testing.T) {
	for _, c := range []struct {
		replace map[string]string
		want    string // the end of the error
		scope   string
		row     string // the row that scope imports
	}{
		{map[string]string{"operation": "<policies>\n  <inbound>\n    <base />\n    <rate-limit-by-key calls=\"1\" renewal-period=\"5\" counter-key=\"@(context.Request.IpAddress)\" />\n  </inbound>\n</policies>"},
			"(give each its own key); --scope imports one alone (api-rate-limit-by-key-3, global-rate-limit-by-key-3, product-rate-limit-4, operation-rate-limit-by-key-4)",
			"operation-rate-limit-by-key-4", "  - {name: azure-rate-limit, label: operation-rate-limit-by-key-4, rate: 1, per: 5s}\n"},
		{map[string]string{"global": "<policies>\n  <inbound>\n    <rate-limit-by-key calls=\"5\" renewal-period=\"10\" increment-condition=\"@(context.Response.StatusCode == 200)\" counter-key=\"@(context.Request.IpAddress)\" />\n  </inbound>\n</policies>"},
			"which is not modelled; --scope imports one alone (api-rate-limit-by-key-3, global-rate-limit-by-key-3, product-rate-limit-4, operation-rate-limit-by-key-4)",
			"global-rate-limit-by-key-3", "  - {name: azure-rate-limit, label: global-rate-limit-by-key-3, rate: 5, per: 10s, increment-condition: true}\n"},
	} {
		a, err := ReadAzureScopes(apimScopes(t, c.replace))
		require.NoError(t, err)
		_, err = a.Scenario(Options{})
		require.ErrorContains(t, err, c.want)
		_, err = a.Keys(Options{})
		require.ErrorContains(t, err, c.want)
		out, err := text(a.Scenario(Options{Scope: c.scope}))
		require.NoError(t, err)
		parseImported(t, out)
		require.Contains(t, out, c.row)
	}
}

// TestAzureScopeArgs: import's files, outermost first, FILE or
// SCOPE=FILE.
func TestAzureScopeArgs(t *testing.T) {
	scopes := func(args ...string) string {
		files, err := AzureScopeArgs(args)
		if err != nil {
			return err.Error()
		}
		var s []string
		for _, f := range files {
			s = append(s, f.Scope+"="+f.File)
		}
		return strings.Join(s, " ")
	}
	require.Equal(t, "=p.xml", scopes("p.xml"))
	require.Equal(t, "api=p.xml", scopes("api=p.xml"))
	require.Equal(t, "global=g.xml product=p.xml api=a.xml operation=o.xml", scopes("g.xml", "p.xml", "a.xml", "o.xml"))
	require.Equal(t, "global=g.xml product=p.xml", scopes("g.xml", "p.xml"))
	require.Equal(t, "api=a.xml operation=o.xml", scopes("api=a.xml", "o.xml"))
	require.Equal(t, "global=g.xml operation=o.xml", scopes("g.xml", "operation=o.xml"))
	require.Equal(t, "api=a.xml: the api scope after the operation scope: give the policy files outermost first (global, product, api, operation), each scope once", scopes("operation=o.xml", "api=a.xml"))
	require.Equal(t, "api=b.xml: the api scope after the api scope: give the policy files outermost first (global, product, api, operation), each scope once", scopes("api=a.xml", "api=b.xml"))
	require.Equal(t, "x.xml: a policy file after the operation's: APIM has four scopes, global, product, api, operation, outermost first", scopes("g.xml", "p.xml", "a.xml", "o.xml", "x.xml"))
}

// TestAzureRowsKeys: limits that are rows apart (one in a <choose>
// branch) and count by other keys than the first's are each an all-of of
// one member counting by its key, so that a replay gives each its own.
func TestAzureRowsKeys(t *testing.T) {
	choose := "<policies>\n    <inbound>\n        <base />\n        <choose>\n            <when condition=\"@(true)\">\n" +
		"                <rate-limit-by-key calls=\"1\" renewal-period=\"10\" counter-key=\"posts\" />\n" +
		"            </when>\n        </choose>\n    </inbound>\n</policies>\n"
	az, err := ReadAzureScopes(apimScopes(t, map[string]string{"operation": choose}))
	require.NoError(t, err)
	im, err := az.Scenario(Options{})
	require.NoError(t, err)
	out, err := im.Text()
	require.NoError(t, err)
	parseImported(t, out)
	// the API's X-Client has a default ("anonymous"), so a request always
	// has a value of it: an attribute, and the address the request's key
	require.Contains(t, out, "  - {name: azure-rate-limit, label: global-rate-limit-by-key-3, rate: 5, per: 10s}\n")
	require.Contains(t, out, "  - name: all-of\n    label: api-rate-limit-by-key-3\n    commit: in-order\n    limits:\n"+
		"      # api scope, api.xml:3: rate-limit-by-key calls=4 renewal-period=10; key the header x-client\n"+
		"      # counter-key's default \"anonymous\" is the counter of the requests without X-Client: a replayed line without http_x_client counts under it\n"+
		"      # counts by http_x_client, not by the request's key (by: http_x_client)\n"+
		"      - {name: azure-rate-limit, label: \"api rate-limit-by-key (api.xml:3)\", by: http_x_client, rate: 4, per: 10s}\n")
	require.Contains(t, out, "      - {name: azure-rate-limit, label: \"product rate-limit (product.xml:4)\", by: subscription, rate: 3, per: 10s}\n")
	require.Contains(t, out, "      - {name: azure-rate-limit, label: \"operation rate-limit-by-key (operation.xml:6)\", by: global, rate: 1, per: 10s}\n")
	require.Contains(t, out, "    attributes: {http_x_client: http_x_client, subscription: subscription}\n")
}
