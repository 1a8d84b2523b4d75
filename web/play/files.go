package play

import (
	"bytes"
	"io/fs"
	"time"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// AddFile gives the session a file that a scenario's replay may read by
// name: a page has no files of its own, so the page fetches the traces
// the lessons replay from beside it (web/static/traces, written by
// web/gen from the traces bundled with ratesim) and hands them over
// (docs/playground.md, "Lessons on real traffic").
func (s *Session) AddFile(name string, data []byte) {
	if s.files == nil {
		s.files = files{}
	}
	s.files[name] = data
}

// replaysFrom makes every replay of sc read its trace from the session's
// files, and returns the names of those it has not been given.
func (s *Session) replaysFrom(sc *scenarios.Scenario) []string {
	var missing []string
	for _, src := range sc.Traffic.Sources {
		r, ok := src.(*traffic.Replay)
		if !ok {
			continue
		}
		r.FS = s.files
		if _, ok := s.files[r.Path]; !ok {
			missing = append(missing, r.Path)
		}
	}
	return missing
}

// files are a session's files by name, read through io/fs.
type files map[string][]byte

func (f files) Open(name string) (fs.File, error) {
	data, ok := f[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &file{Reader: bytes.NewReader(data), name: name, size: int64(len(data))}, nil
}

// file is an open file of files.
type file struct {
	*bytes.Reader
	name string
	size int64
}

func (f *file) Stat() (fs.FileInfo, error) { return f, nil }
func (f *file) Close() error               { return nil }

// file is its own fs.FileInfo.
func (f *file) Name() string       { return f.name }
func (f *file) Size() int64        { return f.size }
func (f *file) Mode() fs.FileMode  { return 0o444 }
func (f *file) ModTime() time.Time { return time.Time{} }
func (f *file) IsDir() bool        { return false }
func (f *file) Sys() any           { return nil }
