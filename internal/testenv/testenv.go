// Package testenv holds what the tests share about the environment they
// run in. The long checks (runs of millions of requests, live gateways,
// the long fuzz seeds) run only when RATESIM_LONG is 1, as .ci/run sets
// it; without it `go test ./...` stays quick and each long check skips,
// saying what it skipped and how to run it (docs/development.md).
package testenv

import (
	"os"
	"testing"
)

// Variable is the environment variable that turns the long checks on.
const Variable = "RATESIM_LONG"

// LongEnabled reports whether the long checks run (RATESIM_LONG=1).
func LongEnabled() bool { return os.Getenv(Variable) == "1" }

// Long skips the test unless RATESIM_LONG=1. what names what the test
// runs, so that the skip message says what was left out:
// "set RATESIM_LONG=1 to run <what> (a long check; .ci/run runs it)".
func Long(t testing.TB, what string) {
	t.Helper()
	if !LongEnabled() {
		t.Skipf("set %s=1 to run %s (a long check; .ci/run runs it)", Variable, what)
	}
}

// Runs is how many random cases a test tries: quick in the normal suite,
// long with RATESIM_LONG=1, so that `go test ./...` stays quick and CI
// still tries many.
func Runs(quick, long int) int {
	if LongEnabled() {
		return long
	}
	return quick
}
