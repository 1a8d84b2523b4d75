package cmd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// outPath is a path a command writes once its run is done: a file
// (--report, --decisions, --output) or a directory it creates (--charts).
type outPath struct {
	flag, path string
	dir        bool
}

// checkOutPaths checks, before a run starts, that every output path given
// can be written: a run of minutes must not end in "no such directory".
// A file's directory must exist and take a new file, and the file, if it
// is there, must be a file that can be written; a chart directory must be
// a directory or one that can be made (its nearest existing parent a
// directory that takes a new entry). It creates nothing that stays.
func checkOutPaths(paths ...outPath) error {
	for _, p := range paths {
		if p.path == "" {
			continue
		}
		var err error
		if p.dir {
			err = checkOutDir(p.path)
		} else {
			err = checkOutFile(p.path)
		}
		if err != nil {
			return usagef("%s: %v", p.flag, err)
		}
	}
	return nil
}

// checkOutFile checks that path can be written as a file.
func checkOutFile(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return errors.New(path + ": is a directory, want a file")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // no truncation: the run has not begun
		if err != nil {
			return err
		}
		return f.Close()
	case !absent(err):
		return err
	}
	dir := filepath.Dir(path)
	st, err = os.Stat(dir)
	if err != nil {
		if absent(err) {
			return errors.New(path + ": no such directory: " + dir)
		}
		return err
	}
	if !st.IsDir() {
		return errors.New(path + ": " + dir + " is not a directory")
	}
	return canCreateIn(dir)
}

// checkOutDir checks that path is a directory that takes files, or can be
// made into one.
func checkOutDir(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.IsDir():
		return errors.New(path + ": is a file, want a directory (the charts are written into it)")
	case err == nil:
		return canCreateIn(path)
	case !absent(err):
		return err
	}
	// the nearest parent that exists must be a directory that takes the
	// new one
	for parent := filepath.Dir(path); ; parent = filepath.Dir(parent) {
		st, err := os.Stat(parent)
		if err == nil {
			if !st.IsDir() {
				return errors.New(path + ": " + parent + " is not a directory")
			}
			return canCreateIn(parent)
		}
		if !absent(err) {
			return err
		}
		if next := filepath.Dir(parent); next == parent {
			return err
		}
	}
}

// absent reports whether err says a path is not there: it does not exist,
// or a part of it is a file (ENOTDIR).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// canCreateIn checks that a file can be created in dir, by creating one
// and removing it.
func canCreateIn(dir string) error {
	f, err := os.CreateTemp(dir, ".ratesim-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return errors.New(dir + ": " + pe.Err.Error())
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
