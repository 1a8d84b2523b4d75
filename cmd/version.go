package cmd

import (
	"fmt"

	"github.com/ratesim/ratesim/internal/version"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ratesim's version, and the Go that built it",
		Long: `Prints ratesim's version, from the module's build info: a release
(v1.2.0) or pseudo-version when installed with go install, "dev" and the
commit for a build from a source checkout. The JSON outputs carry the same
version as "ratesim_version"; --version prints it alone.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(c.OutOrStdout(), "ratesim %s (%s)\n", version.String(), version.Go())
			return err
		},
	}
}
