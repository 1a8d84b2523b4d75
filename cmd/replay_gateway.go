package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ratesim/ratesim/gateway"
)

// readGateway reads --gateway CONFIG for a replay of the trace at path:
// what the config gives the replay (gateway.ReadReplay).
func readGateway(stderr io.Writer, path string, f replayFlags, burstSet bool) (*gateway.Replay, error) {
	switch {
	case f.limit != "":
		return nil, usagef("--limit: with --gateway the limits are the config's: leave --limit out")
	case burstSet:
		return nil, usagef("--burst: with --gateway the limits are the config's: leave --burst out")
	}
	cfg, from, file, err := readGatewayConfig(stderr, f)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, name := range []string{"key-field", "format", "log-format"} {
		fields[name] = f.field(name)
	}
	g, err := gateway.ReadReplay(cfg, gateway.ReplayOptions{
		Options: gateway.Options{Scope: f.scope}, From: from, File: file, Trace: path, Fields: fields,
	})
	if err != nil {
		return nil, usageError{err}
	}
	for _, n := range g.Notes {
		fmt.Fprintf(stderr, "ratesim: %s\n", n)
	}
	return g, nil
}

// readGatewayConfig reads --gateway's config (or APIM's policy files of
// several scopes), read --from, and returns it with its gateway's name and
// its file (the files, for several).
func readGatewayConfig(stderr io.Writer, f replayFlags) (gateway.Config, string, string, error) {
	if gateway.AzureScoped(f.gateway) {
		if f.from != "" && f.from != "azure" {
			return nil, "", "", usagef("--gateway %s: several configs are Azure API Management's policy scopes: only --from azure reads them, not --from %s", strings.Join(f.gateway, " --gateway "), f.from)
		}
		cfg, err := readAzureScopes(f.gateway, f.from == "")
		if err != nil {
			return nil, "", "", err
		}
		// errors name the limits of all the files
		return cfg, "azure", strings.Join(f.gateway, ", "), nil
	}
	file := f.gateway[0]
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "", "", usagef("--gateway: %v", err)
	}
	from := f.from
	if from == "" {
		if from = gateway.Guess(file, data); from == "" {
			return nil, "", "", usagef("--gateway %s: cannot tell which gateway's config this is: name it with --from (one of %s)", file, strings.Join(gateway.Supported(), ", "))
		}
		fmt.Fprintf(stderr, "ratesim: reading %s with the %s reader (--from %s)\n", file, from, from)
	}
	cfg, err := gateway.Read(from, file, data)
	if err != nil {
		return nil, "", "", usageError{err}
	}
	return cfg, from, file, nil
}

// field is the value of the replay source field's flag, "" when unset.
func (f *replayFlags) field(name string) string {
	if v := f.fields[name]; v != nil {
		return *v
	}
	return ""
}
