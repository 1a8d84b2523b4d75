package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeExample is one command of the README with the output shown for it.
type readmeExample struct {
	line int
	args []string
	want string
}

// readmeExamples finds the ```console blocks of the README and, in them,
// each "$ ratesim ..." or "$ go run . ..." command with the lines that
// follow it up to the next command or the end of the block. Other commands
// (go test, go install) are shown without output and skipped.
func readmeExamples(t *testing.T, text string) []readmeExample {
	var out []readmeExample
	var cur *readmeExample
	in := false
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```console"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			flush()
			in = false
		case in && strings.HasPrefix(l, "$ "):
			flush()
			fields := strings.Fields(strings.TrimPrefix(l, "$ "))
			var args []string
			switch {
			case len(fields) >= 1 && fields[0] == "ratesim":
				args = fields[1:]
			case len(fields) >= 3 && fields[0] == "go" && fields[1] == "run" && fields[2] == ".":
				args = fields[3:]
			default:
				continue
			}
			cur = &readmeExample{line: i + 1, args: args}
		case cur != nil:
			cur.want += l + "\n"
		}
	}
	require.False(t, in, "README has an unclosed console block")
	return out
}

// TestReadmeExamples runs every command the README shows and requires the
// output printed under it, so the README never shows stale figures.
func TestReadmeExamples(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	examples := readmeExamples(t, string(data))
	require.NotEmpty(t, examples, "the README shows commands with their output")
	dir := t.TempDir()
	t.Chdir("..") // the README's paths are relative to the repository root
	for _, ex := range examples {
		args := make([]string, len(ex.args))
		for i, a := range ex.args {
			// examples that write files write them into a scratch dir
			if strings.HasPrefix(a, "--decisions=") {
				a = "--decisions=" + dir + "/" + strings.TrimPrefix(a, "--decisions=")
			}
			args[i] = a
		}
		status, out, errOut := run(t, args...)
		got := out + errOut // a failing command is shown with its message
		_ = status
		require.Equal(t, ex.want, got, "README.md:%d: $ ratesim %s", ex.line, strings.Join(ex.args, " "))
	}
}
