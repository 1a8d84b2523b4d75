// Command ratesim simulates and compares rate-limiting algorithms on a
// virtual clock. See README.md and docs/, or run `ratesim --help`.
package main

import "github.com/ratesim/ratesim/cmd"

func main() {
	cmd.Execute()
}
