package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ratesim/ratesim/gateway"
	"github.com/spf13/cobra"
)

func newImportCmd() *cobra.Command {
	var from, scope, envoyVersion string
	var split bool
	c := &cobra.Command{
		Use:   "import CONFIG...",
		Short: "Print a scenario whose rows are the rate limits of a gateway config (nginx, Kong, envoy, Traefik, HAProxy, Apigee, Azure APIM, AWS API Gateway, Cloudflare)",
		Long: `Reads a gateway's config and prints a scenario (YAML) whose algorithm rows are
the limits in it, each with a comment naming the file and line it came from.

nginx: limit_req_zone, limit_req (burst, nodelay, delay), limit_req_status and
limit_req_dry_run, inherited http -> server -> location as nginx merges them
(a level with any limit_req of its own replaces its parent's). One row per
location; several limit_req in one location are one all-of row with commit
all-or-nothing, as nginx enforces them. --scope picks one location by its
name ("SERVER LOCATION", as the rows are labelled) or by its location alone.
--split-limits adds, beside each all-of row, one row per limit of it alone,
to see what counting them apart would decide.

envoy: the ratelimit service's config (domain, descriptors nested, rate_limit
with unit and requests_per_unit, unlimited, replaces, shadow_mode): one
fixed-window row per descriptor, counting every hit, in windows aligned to the
Unix epoch. --scope names a descriptor by its path (header_match=api/
remote_address), or several joined by " + " (those one request carries): an
all-of row with commit every-hit.

envoy-local: the local_ratelimit filter, in a whole bootstrap (its listeners'
http_filters and typed_per_filter_config) or alone: a token-bucket row per
scope and descriptor (all-of with commit in-order with the default bucket),
refilled continuously, or tokens_per_fill at once every fill_interval with
--envoy-version before 1.31.

kong: a declarative config (decK, YAML or JSON): the rate-limiting and
rate-limiting-advanced plugins, global and on services, routes and consumers,
one per route after Kong's precedence (consumer > route > service > global).
One window is a fixed-window row, several one all-of row; policy local, redis
and cluster are the rows' coordination local, central and racy on a cluster
of 3 nodes (a placeholder: set yours). --scope picks a route, a service or a
row label.

traefik: a dynamic configuration (YAML or TOML): each rateLimit middleware as
an x-time-rate row (average/period, burst) with Traefik's max-delay and idle
TTL, one per router that uses it. --scope picks a router, a middleware or a
row label.

haproxy: in each frontend and listen section, http-request deny on a tracked
sc_http_req_rate (gt L, or ge L), the http-request track-scN before it and
the stick-table storing http_req_rate(PERIOD) that it counts in (the
section's own, or another's named by table). One haproxy row per section,
labelled by its name; --scope picks one section.

apigee: one SpikeArrest or Quota policy file (apiproxy/policies/NAME.xml):
an apigee-spike-arrest row (Rate Nps or Npm, UseEffectiveCount) or an
apigee-quota row (Allow count per Interval TimeUnit, type calendar, flexi or
rollingwindow), labelled by the policy's name, keyed by its Identifier.

azure: an API Management policy document: each rate-limit and
rate-limit-by-key (calls per renewal-period) as an azure-rate-limit row, a
sliding window as in the classic tiers, increment-condition counting late;
a counter-key is a constant, the caller's address or a header, any other
policy expression an error. --scope picks a row by its label (kind-line).
Several policy files are one operation's scopes, outermost first, each FILE
or SCOPE=FILE (global, product, api, operation; a FILE alone takes the scope
after the one before it, global first): joined where each writes <base />,
their limits in <inbound> are one in-order all-of row whose members name
their scope, element and file:line.

aws: the JSON of aws apigateway get-usage-plans (or get-usage-plan) or
get-stage: one all-of row per usage plan, plan method and stage method, its
levels in API Gateway's order with commit in-order: the plan's throttle
(token-bucket, rateLimit per 1s, burstLimit) and quota (aws-usage-plan) by
the api-key attribute, the stage's or method's throttle and the account's by
global. --scope picks a row by its label.

cloudflare: a zone's rate limiting rules as the API returns them (the
http_ratelimit phase's ruleset, or {"result": ruleset}): one
cloudflare-rate-limit row per enabled rule, requests_per_period per period,
mitigation_timeout, keyed by its characteristics (ip.src, a header, the
path...). --scope picks a rule by its description or id.

Anything the reader cannot map (include, unknown parameters, rates such as
10r/x, zones not defined) is an error naming file:line:col and the directive,
with exit status 2. See docs/gateways.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := gateway.ParseEnvoyVersion(envoyVersion); err != nil {
				return usageError{err}
			}
			if gateway.AzureScoped(args) {
				if from != "" && from != "azure" {
					return usagef("%s: several policy files (or SCOPE=FILE) are Azure API Management's scopes: only --from azure reads them, not --from %s", strings.Join(args, " "), from)
				}
				if envoyVersion != "" {
					return usagef("--envoy-version: only the envoy-local reader models versions (this is --from azure)")
				}
				g, err := readAzureScopes(args, from == "")
				if err != nil {
					return err
				}
				return printImport(c, g, gateway.Options{Scope: scope, SplitLimits: split})
			}
			data, err := readConfig(args[0])
			if err != nil {
				return err
			}
			if from == "" {
				from = gateway.Guess(args[0], data)
				if from == "" {
					return usagef("%s: cannot tell which gateway's config this is: name it with --from (one of %s)", args[0], strings.Join(gateway.Supported(), ", "))
				}
				fmt.Fprintf(c.ErrOrStderr(), "ratesim: reading %s with the %s reader (--from %s)\n", args[0], from, from)
			}
			if envoyVersion != "" && from != "envoy-local" {
				return usagef("--envoy-version: only the envoy-local reader models versions (this is --from %s)", from)
			}
			g, err := gateway.Read(from, args[0], data)
			if err != nil {
				return usageError{err}
			}
			return printImport(c, g, gateway.Options{Scope: scope, SplitLimits: split, EnvoyVersion: envoyVersion})
		},
	}
	c.Flags().StringVar(&from, "from", "", "the config's gateway: "+strings.Join(gateway.Supported(), ", ")+" (default: a guess from the file, stated on stderr)")
	c.Flags().BoolVar(&split, "split-limits", false, "beside each all-of row, a row per limit, to compare with it")
	c.Flags().StringVar(&scope, "scope", "", "keep one scope: an nginx location (\"SERVER LOCATION\" or the location), Kong's route or service, an envoy descriptor path (several joined by \" + \"), Traefik's router or middleware, an HAProxy section, or a row label")
	c.Flags().StringVar(&envoyVersion, "envoy-version", "", "envoy-local: the envoy whose buckets to model, X.Y (default: the newest; before 1.31 buckets refill tokens_per_fill at once every fill_interval)")
	return c
}

// printImport prints the scenario of g's import.
func printImport(c *cobra.Command, g gateway.Config, o gateway.Options) error {
	im, err := g.Scenario(o)
	if err != nil {
		return usageError{err}
	}
	out, err := im.Text()
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(c.OutOrStdout(), out)
	return err
}

// readAzureScopes reads the APIM policy files of one operation's scopes,
// each FILE or SCOPE=FILE, outermost first (gateway.AzureScopeArgs); with
// guess (no --from), each must look like one.
func readAzureScopes(args []string, guess bool) (*gateway.Azure, error) {
	files, err := gateway.AzureScopeArgs(args)
	if err != nil {
		return nil, usageError{err}
	}
	for i, f := range files {
		if files[i].Data, err = readConfig(f.File); err != nil {
			return nil, err
		}
		if guess && !gateway.LooksLikeAzure(files[i].Data) {
			return nil, usagef("%s: several config files are read as the policy scopes of Azure API Management only, and this is not an APIM policy document (<policies>)%s", f.File, guessed(gateway.Guess(f.File, files[i].Data)))
		}
	}
	g, err := gateway.ReadAzureScopes(files)
	if err != nil {
		return nil, usageError{err}
	}
	return g, nil
}

// guessed says which gateway's config a file seems to be, if any.
func guessed(from string) string {
	if from == "" {
		return ""
	}
	return ": it reads as --from " + from
}

// readConfig reads import's CONFIG, saying in ratesim's words what is wrong
// with a path that is no file (docs/gateways.md).
func readConfig(path string) ([]byte, error) {
	const want = "want a gateway's config file: an nginx.conf, a Kong declarative config, an envoy config, a Traefik dynamic config or an haproxy.cfg"
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, usagef("%s: is a directory, %s", path, want)
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s: no such file, %s", path, want)
	case errors.Is(err, fs.ErrPermission):
		return nil, usagef("%s: permission denied: ratesim cannot read it", path)
	}
	return nil, usagef("%s: cannot read it (%v)", path, errors.Unwrap(err))
}
