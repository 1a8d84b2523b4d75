package scenarios

import (
	"embed"
	"io/fs"
)

// traceFiles are the recorded traces bundled with ratesim, for lessons
// that replay real traffic. traces/README.md says where each comes from
// and under which licence.
//
//go:embed traces/*.gz
var traceFiles embed.FS

// Trace returns the bytes of a bundled trace file by name (as under
// scenarios/traces, e.g. "nasa-19950801.tsv.gz").
func Trace(name string) ([]byte, error) {
	return fs.ReadFile(traceFiles, "traces/"+name)
}
