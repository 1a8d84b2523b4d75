// Package version says which ratesim made an output: the `ratesim
// version` command, `--version`, the JSON outputs' "ratesim_version" and
// the Lua scripts' headers. The version comes from the module's build info
// (`go install github.com/ratesim/ratesim@v1.2.0` makes v1.2.0), unless set
// at link time:
//
//	go build -ldflags "-X github.com/ratesim/ratesim/internal/version.Version=v1.2.0"
package version

import (
	"runtime/debug"
	"strings"
)

// Version, when set at link time, is ratesim's version, whatever the build
// info says.
var Version = ""

// String is ratesim's version: Version when set; else the main module's
// version in the build info (a release or a pseudo-version); else, for a
// build from a source checkout, "dev", followed by "+" and the first 12
// digits of the commit when the build stamped one (`go build` in a git
// checkout does; `go test` and `go run` of a test binary do not), and
// "-dirty" when the checkout had changes. Tests therefore see "dev".
func String() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	s := "dev"
	var rev string
	var dirty bool
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if rev != "" {
		s += "+" + rev[:min(12, len(rev))]
		if dirty {
			s += "-dirty"
		}
	}
	return s
}

// Go is the Go toolchain and platform the binary was built with, as
// `ratesim version` prints them: "go1.26.8 linux/amd64".
func Go() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var goos, goarch string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "GOOS":
			goos = kv.Value
		case "GOARCH":
			goarch = kv.Value
		}
	}
	return strings.TrimSpace(bi.GoVersion + " " + strings.Trim(goos+"/"+goarch, "/"))
}
