// Package version holds ratesim's version, which the Lua scripts' headers
// state. It is "dev" unless set at link time:
//
//	go build -ldflags "-X github.com/ratesim/ratesim/internal/version.Version=v1.2.0"
package version

// Version is ratesim's version: "dev" for a build from source.
var Version = "dev"
