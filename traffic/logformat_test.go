package traffic

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseLogTemplate: nginx's rules for a log_format's text
// (ngx_http_log_compile_format): $name and ${name}, names of letters,
// digits and _, the rest literal.
func TestParseLogTemplate(t *testing.T) {
	for _, tc := range []struct {
		text string
		lits []string
		vars []string
		err  string
	}{
		// the predefined combined: 9 variables, literal text around them
		{CombinedTemplate, []string{"", " - ", " [", `] "`, `" `, " ", ` "`, `" "`, `"`},
			[]string{"remote_addr", "remote_user", "time_local", "request", "status", "body_bytes_sent", "http_referer", "http_user_agent"}, ""},
		// ${...} ends at the brace; "ms" after it is literal text
		{"${msec}ms $status", []string{"", "ms ", ""}, []string{"msec", "status"}, ""},
		// a name stops at the first character that is not a name's: "." here
		{"$msec.$status", []string{"", ".", ""}, []string{"msec", "status"}, ""},
		{"$msec$status", nil, nil, "$status follows $msec with no text between them"},
		{"$ x", nil, nil, "a $ with no variable name"},
		{"${msec x", nil, nil, `the closing bracket in "${msec" is missing`},
		{"plain text", nil, nil, "has no variable"},
	} {
		tmpl, err := ParseLogTemplate(tc.text, "")
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.text)
			continue
		}
		require.NoError(t, err, tc.text)
		require.Equal(t, tc.lits, tmpl.Lits, tc.text)
		require.Equal(t, tc.vars, tmpl.Vars, tc.text)
	}
	_, err := ParseLogTemplate("$msec", "xml")
	require.ErrorContains(t, err, "escape=xml: want default, json or none")
}

// TestReplayLogFormat reads lines written with a log_format.
func TestReplayLogFormat(t *testing.T) {
	const tmpl = `$msec $remote_addr "$request" $status $limit_req_status $request_time "$http_x_client"`
	trace := writeTrace(t, "check.log", ``+
		// 1700000000.123 s exactly: 1700000000123000000 ns; $request_time
		// 0.000 takes nothing off
		`1700000000.123 10.0.0.1 "GET /a HTTP/1.1" 200 PASSED 0.000 "alice"`+"\n"+
		// written at .500 after 0.250 s of delay: it arrived at .250
		`1700000000.500 10.0.0.2 "GET /b HTTP/1.1" 200 DELAYED 0.250 "bob smith"`+"\n"+
		// a quoted value may hold spaces and the text after it is not read
		`1700000000.300 10.0.0.1 "GET /c d HTTP/1.1" 429 REJECTED 0.000 "alice" trailing`+"\n"+
		// no limit_req looked at it: "-" is not a verdict (LoggedNone)
		`1700000001.000 10.0.0.3 "GET / HTTP/1.1" 200 - 0.000 "-"`+"\n")
	r := &Replay{Path: trace, LogFormat: tmpl, CheckField: "limit_req_status", KeyField: "$http_x_client", Reorder: time.Second}
	k := NewKeys()
	s, err := r.Open(k, 0, 1)
	require.NoError(t, err)
	var got []string
	var a Arrival
	for s.Next(&a) {
		got = append(got, time.Duration(a.At).String()+" "+k.Name(a.Key)+" "+a.Logged.String())
	}
	require.NoError(t, s.Err())
	base := 1700000000 * time.Second
	require.Equal(t, []string{
		(base + 123*time.Millisecond).String() + " alice PASSED",
		(base + 250*time.Millisecond).String() + " bob smith DELAYED",
		(base + 300*time.Millisecond).String() + " alice REJECTED",
	}, got)
	st := r.Stats()
	require.Equal(t, "nginx", st.Format)
	// the last line's key is "-": nginx had no X-Client header to log
	require.Equal(t, int64(1), st.ByReason["missing field"])

	// the defaults: $msec for the time, $remote_addr for the key
	r = &Replay{Path: trace, LogFormat: tmpl, Reorder: time.Second}
	out := replayAll(t, r)
	require.Equal(t, []string{"10.0.0.1", "10.0.0.2", "10.0.0.1", "10.0.0.3"}, out.keys)

	// the time from $time_local: whole seconds, spread evenly
	trace = writeTrace(t, "local.log", "[10/Oct/2000:13:55:36 +0000] a\n[10/Oct/2000:13:55:36 +0000] b\n")
	out = replayAll(t, &Replay{Path: trace, LogFormat: "[$time_local] $http_x_key", KeyField: "http_x_key"})
	require.Equal(t, []time.Duration{s2000 + 250*time.Millisecond, s2000 + 750*time.Millisecond}, out.at)
	require.Equal(t, []string{"a", "b"}, out.keys)

	// escape=json: \" inside a quoted value does not end it
	trace = writeTrace(t, "json.log", `{"t":"1700000000.001","k":"a\"b"}`+"\n")
	out = replayAll(t, &Replay{Path: trace, LogFormat: `{"t":"$msec","k":"$http_k"}`, LogEscape: "json", KeyField: "http_k"})
	require.Equal(t, []string{`a\"b`}, out.keys)
}

func TestReplayLogFormatErrors(t *testing.T) {
	trace := writeTrace(t, "x.log", "1700000000.000 a\n")
	for _, tc := range []struct {
		r   Replay
		err string
	}{
		{Replay{LogFormat: "$msec $remote_addr", KeyField: "http_x_client"}, `key-field "http_x_client": the log_format has no such variable (its variables: $msec $remote_addr)`},
		{Replay{LogFormat: "$remote_addr $status"}, "the log_format has no time: want $msec"},
		{Replay{LogFormat: "$msec $remote_addr", CheckField: "limit_req_status"}, `check-field "limit_req_status": the log_format has no such variable`},
		{Replay{LogFormat: "$msec$remote_addr"}, "log-format: $remote_addr follows $msec"},
		{Replay{LogFormat: "$msec $remote_addr", Format: "csv"}, `format "csv" and log-format`},
	} {
		tc.r.Path = trace
		_, err := tc.r.Open(NewKeys(), 0, 1)
		require.ErrorContains(t, err, tc.err)
	}
	// a check field that holds no verdict makes the line malformed
	trace = writeTrace(t, "y.log", "1700000000.000 a OK\n1700000000.001 a 429\n")
	out := replayAll(t, &Replay{Path: trace, LogFormat: "$msec $remote_addr $status", CheckField: "status"})
	require.Equal(t, int64(1), out.stats.ByReason["bad check"])
	require.Equal(t, 1, len(out.at))
}

// TestParseLogged: $limit_req_status's five values, statuses, "-".
func TestParseLogged(t *testing.T) {
	for in, want := range map[string]Logged{"PASSED": LoggedPassed, "DELAYED": LoggedDelayed, "REJECTED": LoggedRejected,
		"DELAYED_DRY_RUN": LoggedDelayedDryRun, "REJECTED_DRY_RUN": LoggedRejectedDryRun, "-": LoggedNone, "": LoggedNone,
		"429": 429, "200": 200} {
		got, bad := ParseLogged([]byte(in))
		require.Empty(t, bad.reason, in)
		require.Equal(t, want, got, in)
		if want != LoggedNone {
			require.Equal(t, in, got.String())
		}
	}
	for _, in := range []string{"passed", "42", "1000", "OK"} {
		_, bad := ParseLogged([]byte(in))
		require.Equal(t, "bad check", bad.reason, in)
	}
}

func FuzzReplayLogFormat(f *testing.F) {
	f.Add([]byte(`1700000000.123 10.0.0.1 "GET /a HTTP/1.1" 200 PASSED 0.000 "alice"` + "\n"))
	f.Add([]byte(`1700000000.500 10.0.0.2 "GET /b" 200 DELAYED 9999999999.250 "bob"` + "\n-\n"))
	f.Add([]byte(`x "` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const tmpl = `$msec $remote_addr "$request" $status $limit_req_status $request_time "$http_x_client"`
		fuzzReplay(t, &Replay{LogFormat: tmpl, CheckField: "limit_req_status", KeyField: "$http_x_client", Reorder: time.Second}, data)
		fuzzReplay(t, &Replay{LogFormat: tmpl, LogEscape: "json", CheckField: "status", CostField: "request_time", Strict: true}, data)
		fuzzReplay(t, &Replay{LogFormat: "[$time_local] $remote_addr", Spread: "random"}, data)
		fuzzReplay(t, &Replay{LogFormat: "$time_iso8601|$remote_addr", KeyField: "none"}, data)
	})
}

// FuzzParseLogTemplate: any text compiles or is refused with an error,
// and what compiles writes back to a text that compiles alike.
func FuzzParseLogTemplate(f *testing.F) {
	for _, s := range []string{CombinedTemplate, "${msec}ms $status", "$msec$status", "$", "${a", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tmpl, err := ParseLogTemplate(text, "")
		if err != nil {
			return
		}
		require.Len(t, tmpl.Lits, len(tmpl.Vars)+1)
		again, err := ParseLogTemplate(tmpl.String(), "")
		if err == nil {
			require.Equal(t, tmpl.Vars, again.Vars)
		}
	})
}

// TestReplayLogFormatColumns: a bad line read through a log_format is
// placed at the column where the value that is wrong starts (where the
// text that ends a value is missing: where that value starts).
func TestReplayLogFormatColumns(t *testing.T) {
	trace := writeTrace(t, "cols.log", ``+
		`10.0.0.1 1700000000.123 "GET / HTTP/1.1" 200 0.000 alice`+"\n"+
		`10.0.0.1 17000000x0.123 "GET / HTTP/1.1" 200 0.000 alice`+"\n"+
		`10.0.0.1 1700000000.123 "GET / HTTP/1.1" OK 0.000 alice`+"\n"+
		`10.0.0.1 1700000000.123 "GET / HTTP/1.1" 200 0.0x0 alice`+"\n"+
		`10.0.0.1 1700000000.123 "GET / HTTP/1.1" 200 0.000 -`+"\n"+
		`10.0.0.1 1700000000.123 "GET / HTTP/1.1"`+"\n")
	out := replayAll(t, &Replay{Path: trace, LogFormat: `$remote_addr $msec "$request" $status $request_time $http_x_client`,
		KeyField: "http_x_client", CheckField: "status"})
	var cols []string
	for _, le := range out.stats.FirstBad {
		cols = append(cols, fmt.Sprintf("%d:%d: %s", le.Line, le.Col, le.Msg[:strings.Index(le.Msg, ":")]))
	}
	// 10.0.0.1 is columns 1-8, $msec 10-23, "$request" 25-40 (its
	// value from 26), $status 42, $request_time 46-50, the key 52
	require.Equal(t, []string{
		"2:10: bad time", "3:42: bad check", "4:46: bad time", "5:52: missing field", "6:26: missing field",
	}, cols)
}
