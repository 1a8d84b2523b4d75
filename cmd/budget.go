package cmd

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/ratesim/ratesim/runner"
	"github.com/spf13/pflag"
)

// budgetValue is a flag of a budget figure (--max-requests,
// --max-memory): a count, written as 1000000, 1_000_000 or 2e9, or for
// bytes with a unit (4GiB, 512MiB, 8GB, 1.5GiB); "unlimited" is no bound
// (held as 0).
type budgetValue struct {
	n     *int64
	bytes bool
}

// byteUnits are the units --max-memory takes, by their suffix.
var byteUnits = []struct {
	suffix string
	n      int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

func (v budgetValue) String() string {
	if *v.n <= 0 {
		return "unlimited"
	}
	if v.bytes {
		for _, u := range byteUnits[:4] {
			if *v.n%u.n == 0 && *v.n/u.n < 1024 {
				return fmt.Sprintf("%d%s", *v.n/u.n, u.suffix)
			}
		}
	}
	return fmt.Sprint(*v.n)
}

func (v budgetValue) Type() string {
	if v.bytes {
		return "bytes"
	}
	return "count"
}

func (v budgetValue) Set(s string) error {
	n, err := parseBudget(s, v.bytes)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}

// parseBudget reads a budget figure exactly (a rational, 1.5GiB is
// 1610612736 bytes), rounded down to a whole one.
func parseBudget(s string, bytes bool) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "unlimited" {
		return 0, nil
	}
	unit := int64(1)
	if bytes {
		for _, u := range byteUnits {
			if strings.HasSuffix(t, u.suffix) {
				t, unit = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.n
				break
			}
		}
	}
	want := "a count (2000000, 2e6) or unlimited"
	if bytes {
		want = "bytes with a unit (4GiB, 512MiB, 8GB, 2e9) or unlimited"
	}
	r, ok := new(big.Rat).SetString(strings.ReplaceAll(t, "_", ""))
	if t == "" || !ok || strings.ContainsAny(t, "/") {
		return 0, fmt.Errorf("%q: want %s", s, want)
	}
	r.Mul(r, new(big.Rat).SetInt64(unit))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if q.Sign() <= 0 {
		return 0, fmt.Errorf("%q: want more than 0 (or unlimited)", s)
	}
	if !q.IsInt64() {
		return math.MaxInt64, nil
	}
	return q.Int64(), nil
}

// budgetFlags are --max-requests and --max-memory.
type budgetFlags struct {
	requests, memory int64
}

// addBudgetFlags adds --max-requests and --max-memory, with the default
// budget of a run (docs/commands.md, "Budgets").
func addBudgetFlags(fl *pflag.FlagSet, f *budgetFlags, what string) {
	f.requests, f.memory = runner.DefaultMaxRequests, runner.DefaultMaxMemory
	fl.Var(budgetValue{n: &f.requests}, "max-requests", "refuse "+what+" whose estimate decides more requests than this (retries, every row and store operations counted; 2e9, unlimited)")
	fl.Var(budgetValue{n: &f.memory, bytes: true}, "max-memory", "refuse "+what+" whose estimate needs more memory than this (8GiB, unlimited)")
}

func (f budgetFlags) budget() runner.Budget {
	return runner.Budget{MaxRequests: f.requests, MaxMemory: f.memory}
}
