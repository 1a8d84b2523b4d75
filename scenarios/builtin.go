package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ratesim/ratesim/internal/didyoumean"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// builtinNames is the order `ratesim scenarios` lists the built-ins in;
// each is builtin/NAME.yaml.
var builtinNames = []string{"double-burst", "token-vs-leaky", "nginx-burst", "sliding-window-accuracy",
	"retry-storm", "retry-storm-jitter", "api-gateway", "cron-aligned", "ip-rotation",
	"kong-local-pods", "kong-local-pods-backend", "redis-race", "sync-interval", "redis-outage", "flexible-consistency",
	"protect-the-backend", "gc-pause-collapse", "netflix-gradient2", "metastable-retry", "metastable-retry-jitter", "metastable-retry-budget", "choose-burst",
	// reproductions of published figures, each held by its expect section
	// (ratesim check --builtins, docs/reproductions.md)
	"sdi-token-bucket", "sdi-fixed-window", "sdi-sliding-window", "cloudflare-window",
	"figma-fixed-window", "kong-6723", "kong-6723-sync", "kong-6724", "apisix-12592", "openfoodfacts-nginx",
	"traefik-average", "resilience4j-cycles", "bucket4j-greedy", "istio-local-pods",
	"aws-backoff-jitter", "brooker-retries-5", "brooker-retries-50", "brooker-retries-100", "sre-client-throttling", "nc-rate-latency", "traefik-router-buckets",
	"aws-burst-400", "apigee-spike-100pm", "azure-increment-late", "guava-next-pays", "cloudflare-mitigation",
	"uber-take", "redis-rate-partial", "priority-shedding", "gubernator-global",
	"cloudflare-data-centers"}

// Default is the built-in scenario `ratesim compare` runs when given none.
const Default = "double-burst"

// Info describes a built-in scenario.
type Info struct {
	Name        string
	Description string
}

// Builtins lists the built-in scenarios in a fixed order.
func Builtins() []Info {
	infos := make([]Info, 0, len(builtinNames))
	for _, name := range builtinNames {
		info := Info{Name: name}
		if sc, err := Builtin(name); err == nil {
			info.Description = sc.Description
		} else {
			info.Description = "invalid: " + err.Error()
		}
		infos = append(infos, info)
	}
	return infos
}

// Builtin returns the built-in scenario called name, freshly parsed (the
// caller may change it), with File "builtin:NAME".
func Builtin(name string) (*Scenario, error) {
	if !isBuiltin(name) {
		return nil, fmt.Errorf("no built-in scenario %q (built-ins: %s)", name, strings.Join(builtinNames, ", "))
	}
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil {
		return nil, err
	}
	return Parse("builtin:"+name, data)
}

func isBuiltin(name string) bool {
	for _, n := range builtinNames {
		if n == name {
			return true
		}
	}
	return false
}

// Load reads and parses the scenario file at path.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	return Parse(path, data)
}

// Resolve returns the scenario arg names: the file at that path if there is
// one, else the built-in scenario of that name.
func Resolve(arg string) (*Scenario, error) {
	if st, err := os.Stat(arg); err == nil || !errors.Is(err, fs.ErrNotExist) {
		if err == nil && st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory, want a scenario file", arg)
		}
		return Load(arg)
	}
	if isBuiltin(arg) {
		return Builtin(arg)
	}
	return nil, noScenario(arg)
}

// ResolveText returns the text of the scenario arg names, as Resolve finds
// it, and the name its errors use (the path, or "builtin:NAME"): for a
// caller that edits the file before parsing it (ratesim sweep).
func ResolveText(arg string) (file string, data []byte, err error) {
	if st, err := os.Stat(arg); err == nil || !errors.Is(err, fs.ErrNotExist) {
		if err == nil && st.IsDir() {
			return "", nil, fmt.Errorf("%s: is a directory, want a scenario file", arg)
		}
		data, err := os.ReadFile(arg)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return "", nil, fmt.Errorf("%s: %w", arg, pe.Err)
			}
			return "", nil, err
		}
		return arg, data, nil
	}
	if isBuiltin(arg) {
		data, err := builtinFS.ReadFile("builtin/" + arg + ".yaml")
		return "builtin:" + arg, data, err
	}
	return "", nil, noScenario(arg)
}

// noScenario is the error for an arg that names neither a file nor a
// built-in, with the built-in it was likely meant to be.
func noScenario(arg string) error {
	hint := ""
	if s := didyoumean.Closest(arg, builtinNames); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	return fmt.Errorf("%s: no such file, and no built-in scenario of that name (built-ins: %s)%s",
		arg, strings.Join(builtinNames, ", "), hint)
}
