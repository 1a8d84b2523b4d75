// Package gateway reads the rate limits of real gateways' configs (nginx,
// Kong, envoy, envoy's local_ratelimit, Traefik, HAProxy) and writes them
// as ratesim scenarios (docs/gateways.md). Each reader is one file; each
// parses the gateway's own syntax, and anything it cannot map is an Error
// naming file:line:col and the directive, never a partial import.
package gateway

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Config is a gateway config, read: its limits, ready to be written as a
// scenario.
type Config interface {
	// Scenario makes the config's limits a ratesim scenario: algorithm
	// rows with comments naming the config file and line of each limit,
	// and a cluster section where the config implies one.
	Scenario(o Options) (*Import, error)
	// Keys says what each limit of the scopes o picks counts by, for
	// replay --gateway, which takes each request's key from a log; one
	// entry per distinct key, in the order of the config.
	Keys(o Options) ([]Key, error)
}

// Options are import's choices.
type Options struct {
	// Scope keeps one scope (a location, route, service, descriptor...)
	// by its name; "" keeps every scope, each a group of rows labelled by
	// its name.
	Scope string
	// EnvoyVersion is the envoy whose local_ratelimit buckets the rows
	// model (import --envoy-version X.Y): before 1.31 they refill
	// tokens_per_fill at once every fill_interval; from 1.31 (and for "",
	// the newest) continuously. See ParseEnvoyVersion.
	EnvoyVersion string
	// SplitLimits adds, beside each all-of row, one row per member limit,
	// for comparison (import --split-limits).
	SplitLimits bool
	// LimitLabels labels each limit of an all-of row by the config's
	// name for it and its file:line ("zone=perclient (nginx.conf:8)"),
	// so that outputs say which limit fired (replay --gateway sets it;
	// nginx only so far).
	LimitLabels bool
}

// Key is what a limit counts by, as replay --gateway finds it in a log.
type Key struct {
	// Kind is KeyAddr, KeyHeader, KeyGlobal or KeyOther.
	Kind string
	// Name is the header (lower case) for KeyHeader, the variable or
	// field as the config writes it for KeyOther.
	Name string
	// Where is the config text that names the key.
	Where Pos
	// Attr, when set, names the attribute a limit by this key counts by
	// when it is not the request's key, and the field of a CSV, TSV or
	// JSON log that holds it (Kong's consumer); "" names it after the key.
	Attr string
	// mapped is the nginx map whose variable the key is: a request whose
	// value is empty is not limited by it, so the key is never the
	// request's, always an attribute, and replay evaluates the map on
	// the variables of each line (nginxmap.go).
	mapped *NginxMap
	// Default is the value that a request without the key counts by (APIM's
	// GetValueOrDefault("X-Client", "anonymous")): such a key is never the
	// request's, always an attribute, and replay gives a line without its
	// field that value.
	Default string
	// cond is the condition of the HAProxy track whose key this is, and
	// sc its counter: the counter counts only the requests cond holds
	// for, so the key is an attribute that a request carries only then
	// (haproxyDeriver), never the request's
	cond *haCond
	sc   int
	// kongPath is the path of a Kong plugin with limit_by path: Kong
	// counts a request to that path under the path, and any other by its
	// client address (get_identifier in
	// kong/plugins/rate-limiting/handler.lua), which replay derives from
	// each line (kongPathDeriver); never the request's key
	kongPath string
}

// The kinds of Key.
const (
	// KeyAddr is the client's address: nginx's $binary_remote_addr and
	// $remote_addr, Kong's ip, envoy's remote_address, Traefik's default
	// sourceCriterion, HAProxy's src.
	KeyAddr = "addr"
	// KeyHeader is a request header (nginx $http_x_client, Kong header,
	// envoy request_headers, Traefik requestHeaderName, HAProxy
	// req.hdr(X)).
	KeyHeader = "header"
	// KeyGlobal is one counter for every request (Kong service or
	// route, an envoy local bucket, an nginx $server_name zone with one
	// server).
	KeyGlobal = "global"
	// KeyOther is anything else (Kong consumer or credential, an nginx
	// variable of no header): replay --gateway cannot take it from a log.
	KeyOther = "other"
)

func (k Key) String() string {
	switch k.Kind {
	case KeyAddr:
		return "the client address"
	case KeyHeader:
		return "the header " + k.Name
	case KeyGlobal:
		return "one key for every request"
	}
	return k.Name
}

// LogFormat is how a gateway writes its access log's lines: for nginx a
// log_format (Text its strings concatenated, Escape its escape=), which
// traffic.ParseLogTemplate compiles.
type LogFormat struct {
	Name   string
	Text   string
	Escape string
	// TimeField and TimeUnit, when set, are the replay's time-field (a
	// variable of Text) and time-unit (s, ms, us): the time is a number
	// since the epoch (HAProxy's %[date(0,us)]), not one of nginx's.
	TimeField, TimeUnit string
	// Label names the format in errors; "" is "log_format NAME".
	Label string
	// Where is the log_format directive; zero for a predefined format
	// (nginx's combined).
	Where Pos
}

// AccessLog is one log a gateway writes its requests to.
type AccessLog struct {
	Path   string
	Format *LogFormat
	// Where is the access_log directive; zero for the gateway's default
	// log.
	Where Pos
}

// Logger is a Config that says how its gateway logs the requests of the
// scopes o picks, so that replay --gateway reads a log written by that
// config without other flags (nginx: log_format and access_log).
type Logger interface {
	AccessLogs(o Options) ([]AccessLog, error)
}

// Rejecter is a Config that says with which HTTP statuses its limits
// reject the requests of the scopes o picks (nginx: limit_req_status),
// for replay --check-field on a status field.
type Rejecter interface {
	RejectStatuses(o Options) ([]int, error)
}

// Reader reads one gateway's config; file names it in errors.
type Reader func(file string, data []byte) (Config, error)

// readers are the gateways import reads, by their --from names.
var readers = map[string]Reader{
	"nginx":       func(file string, data []byte) (Config, error) { return ReadNginx(file, data) },
	"kong":        func(file string, data []byte) (Config, error) { return ReadKong(file, data) },
	"envoy":       func(file string, data []byte) (Config, error) { return ReadEnvoy(file, data) },
	"envoy-local": func(file string, data []byte) (Config, error) { return ReadEnvoyLocal(file, data) },
	"traefik":     func(file string, data []byte) (Config, error) { return ReadTraefik(file, data) },
	"haproxy":     func(file string, data []byte) (Config, error) { return ReadHAProxy(file, data) },
	"apigee":      func(file string, data []byte) (Config, error) { return ReadApigee(file, data) },
	"azure":       func(file string, data []byte) (Config, error) { return ReadAzure(file, data) },
	"aws":         func(file string, data []byte) (Config, error) { return ReadAWS(file, data) },
	"cloudflare":  func(file string, data []byte) (Config, error) { return ReadCloudflare(file, data) },
}

// Formats are the --from names of docs/gateways.md, in its order.
var Formats = []string{"nginx", "kong", "envoy", "envoy-local", "traefik", "haproxy", "apigee", "azure", "aws", "cloudflare"}

// Supported are the --from names that have a reader, in Formats' order.
func Supported() []string {
	var s []string
	for _, f := range Formats {
		if readers[f] != nil {
			s = append(s, f)
		}
	}
	return s
}

// Read reads data as from's config.
func Read(from, file string, data []byte) (Config, error) {
	r := readers[from]
	if r == nil {
		return nil, fmt.Errorf("--from %q: not a gateway ratesim reads (want one of %s)", from, strings.Join(Supported(), ", "))
	}
	return r(file, data)
}

// guessers tell a config's gateway from its content, tried in order; each
// returns true when the content is surely its gateway's.
var guessers = []struct {
	from  string
	guess func(file string, data []byte) bool
}{
	// an Apigee policy's XML root is surest; the YAML markers of Kong,
	// envoy and Traefik are surer than nginx's words, so they go first
	{"apigee", guessApigee},
	{"azure", guessAzure},
	{"aws", guessAWS},
	{"cloudflare", guessCloudflare},
	{"kong", guessKong},
	{"envoy", guessEnvoy},
	{"envoy-local", guessEnvoyLocal},
	{"traefik", guessTraefik},
	{"haproxy", guessHAProxy},
	{"nginx", guessNginx},
}

// Guess names the gateway whose config data is, or "" when it cannot tell.
func Guess(file string, data []byte) string {
	for _, g := range guessers {
		if readers[g.from] != nil && g.guess(file, data) {
			return g.from
		}
	}
	return ""
}

func guessNginx(_ string, data []byte) bool {
	s := string(data)
	return slices.ContainsFunc([]string{"limit_req", "http {", "server {", "location "}, func(w string) bool {
		return strings.Contains(s, w)
	})
}

// guessEnvoy: the ratelimit service's config has domain and descriptors
// at its top level.
func guessEnvoy(_ string, data []byte) bool {
	return envoyTopKey.Match(data) && envoyDescriptorsKey.Match(data)
}

var (
	envoyTopKey         = regexp.MustCompile(`(?m)^["']?domain["']?\s*:`)
	envoyDescriptorsKey = regexp.MustCompile(`(?m)^["']?descriptors["']?\s*:`)
)

// guessEnvoyLocal: a local_ratelimit filter's config names its type, or
// has a token_bucket with a fill_interval.
func guessEnvoyLocal(_ string, data []byte) bool {
	s := string(data)
	return strings.Contains(s, "local_ratelimit") || strings.Contains(s, "token_bucket") && strings.Contains(s, "fill_interval")
}

// guessKong: a decK file declares its _format_version.
func guessKong(_ string, data []byte) bool {
	return strings.Contains(string(data), "_format_version")
}

// guessTraefik: a dynamic configuration with http middlewares, one of
// them a rateLimit (YAML or TOML alike).
func guessTraefik(_ string, data []byte) bool {
	s := string(data)
	return strings.Contains(s, "http") && strings.Contains(s, "middlewares") && strings.Contains(s, "rateLimit")
}
