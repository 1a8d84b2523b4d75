// Package web holds the playground's static site (docs/playground.md):
// web/static, built by .ci/build-web, which `ratesim serve` serves from
// the binary. The engine in it is web/wasm's build, gzipped; the page's
// worker unzips it, so any static host serves the folder as it is.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Static is the site: index.html and what it loads.
func Static() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the folder is embedded above
	}
	return sub
}
