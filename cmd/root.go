// Package cmd is ratesim's command line: the only package that knows cobra,
// flags, files, standard output and exit codes. Each subcommand parses its
// flags, opens its files, runs the scenario through the runner package and
// renders what it returns.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ratesim/ratesim/internal/version"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit statuses (docs/commands.md).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Execute runs ratesim with the process's arguments and exits with its
// status.
func Execute() {
	os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// usageError is bad usage or bad input: the command line, a scenario, a
// trace. It exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// inputError marks the errors of a run that come from its input (a trace
// file that is missing or, in strict mode, malformed) as usage errors: they
// exit 2.
func inputError(err error) error {
	var le *traffic.LineError
	var re *traffic.ReplayError
	if errors.As(err, &le) || errors.As(err, &re) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return usageError{err}
	}
	return err
}

// Run runs ratesim with args and returns the exit status; everything it
// prints goes to stdout and stderr. No input makes it panic: a panic is
// caught, reported as an internal error and exits 1.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "ratesim: internal error: %v (please report it with the command that caused it)\n", p)
			status = exitFailure
		}
	}()
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(withCommandLine(context.Background(), args))
	if err == nil {
		return exitOK
	}
	// Errors that say where they are (file:line:col: field: ...) print as
	// compilers print them, one a line; others say they come from ratesim.
	var positioned *scenarios.Error
	if errors.As(err, &positioned) {
		fmt.Fprintln(stderr, err)
	} else {
		fmt.Fprintf(stderr, "ratesim: %v\n", err)
	}
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "required flag") {
		return exitUsage
	}
	return exitFailure
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "ratesim",
		Short: "Simulate and compare rate-limiting algorithms on a virtual clock",
		Long: `ratesim replays traffic through every rate-limiting algorithm on a virtual
clock and reports, per algorithm, what was accepted, delayed and rejected, the
peak rate that reached the backend, and the memory each needs per key.

Start with:  ratesim compare        (the built-in double-burst scenario)
             ratesim scenarios      (the built-in scenarios)`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetVersionTemplate("ratesim {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", flagValueError(err), c.CommandPath())}
	})
	root.AddCommand(
		newCompareCmd(),
		newSweepCmd(),
		newReplayCmd(),
		newTrafficCmd(),
		newScenariosCmd(),
		newAlgorithmsCmd(),
		newValidateCmd(),
		newCheckCmd(),
		newDemoCmd(),
		newLuaCmd(),
		newImportCmd(),
		newServeCmd(),
		newVersionCmd(),
	)
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	addCompletions(root)
	return root
}

// flagValueError rewrites pflag's error for a value its type cannot parse
// ("invalid argument "-3" for "--seed" flag: strconv.ParseUint: parsing
// "-3": invalid syntax") in the words of the other errors: the flag, the
// value and what the flag wants (docs/commands.md, Errors). Other errors
// pass unchanged.
func flagValueError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	var want string
	switch ive.GetFlag().Value.Type() {
	case "uint64":
		want = "a whole number from 0 to 18446744073709551615"
	case "int", "int64":
		want = "a whole number"
	case "duration":
		want = "a duration such as 2s, 500ms or 1m30s"
	case "bool":
		want = "true or false"
	case "float64":
		want = "a number"
	default:
		return err
	}
	return fmt.Errorf("--%s: %q: want %s", ive.GetFlag().Name, ive.GetValue(), want)
}

// wrapArgs makes argument-count errors usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{fmt.Errorf("%s: %w", c.CommandPath(), err)}
		}
		return nil
	}
}
