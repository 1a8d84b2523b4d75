package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/scenarios"
)

// lessonReplay builds the scenario of a lesson's run that replays a
// bundled trace, as `ratesim replay` does with the run's flags, and
// returns it with its file's text.
func lessonReplay(r *lessons.Replay) (*scenarios.Scenario, []byte, error) {
	path, err := bundledTrace(r.Trace)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.File(path)
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Build(f)
	if err == nil {
		err = scenarios.CheckFiles(sc)
	}
	if err != nil {
		return nil, nil, err
	}
	text, err := scenarios.Marshal(f)
	return sc, text, err
}

// bundledTrace writes a bundled trace into the temporary directory, once
// (the file is named by its digest, so a copy there is the same bytes),
// and returns its path: replay streams traces from files.
func bundledTrace(name string) (string, error) {
	data, err := scenarios.Trace(name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	path := filepath.Join(os.TempDir(), "ratesim-"+hex.EncodeToString(sum[:8])+"-"+name)
	if old, err := os.ReadFile(path); err == nil && sha256.Sum256(old) == sum {
		return path, nil
	}
	tmp, err := os.CreateTemp(os.TempDir(), ".ratesim-trace-*")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}
