package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeExample is one command of the README with the output shown for it:
// lines [from, to) of the README.
type readmeExample struct {
	line     int // the command's line, 1-based
	from, to int // the output's lines, 0-based, to exclusive
	args     []string
}

// readmeExamples finds the ```console blocks of the README and, in them,
// each "$ ratesim ..." or "$ go run . ..." command with the lines that
// follow it up to the next command or the end of the block. Other commands
// (go test, go install) are shown without output and skipped.
func readmeExamples(t *testing.T, lines []string) []readmeExample {
	var out []readmeExample
	var cur *readmeExample
	in := false
	flush := func(i int) {
		if cur != nil {
			cur.to = i
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "```console"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			flush(i)
			in = false
		case in && strings.HasPrefix(l, "$ "):
			flush(i)
			fields := shellFields(strings.TrimPrefix(l, "$ "))
			var args []string
			switch {
			case len(fields) >= 1 && fields[0] == "ratesim":
				args = fields[1:]
			case len(fields) >= 3 && fields[0] == "go" && fields[1] == "run" && fields[2] == ".":
				args = fields[3:]
			default:
				continue
			}
			cur = &readmeExample{line: i + 1, from: i + 1, args: args}
		}
	}
	require.False(t, in, "README has an unclosed console block")
	return out
}

// TestReadmeExamples runs every command the README and the pages of docs/
// show and requires the output printed under it, so that they never show
// stale figures. With -update it writes the real output into them instead.
func TestReadmeExamples(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	for _, page := range append([]string{"README.md"}, docs...) {
		page = strings.TrimPrefix(page, "../")
		t.Run(page, func(t *testing.T) { checkPageExamples(t, page) })
	}
}

// checkPageExamples checks the commands of one page (a path from the
// repository's root).
func checkPageExamples(t *testing.T, page string) {
	data, err := os.ReadFile(filepath.Join("..", page))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	examples := readmeExamples(t, lines)
	if page == "README.md" {
		require.NotEmpty(t, examples, "the README shows commands with their output")
	}
	dir := t.TempDir() // where the examples' own files go
	t.Chdir("..")      // the README's paths are relative to the repository root
	var rewritten []string
	done := 0
	written := map[string]string{} // files the examples write -> where they go
	for _, ex := range examples {
		args := make([]string, len(ex.args))
		for i, a := range ex.args {
			if p, ok := written[a]; ok {
				a = p // a file an earlier example wrote
			}
			if i > 0 && (ex.args[i-1] == "--output" || ex.args[i-1] == "--decisions" || ex.args[i-1] == "--charts") {
				p := filepath.Join(dir, a) // shown as a: dir is cut from the output
				written[a] = p
				a = p
			}
			args[i] = a
		}
		_, out, errOut := run(t, args...)
		got := out + errOut // a failing command is shown with its message
		// the files the examples write are shown by the names the README
		// gives them
		got = strings.ReplaceAll(got, dir+string(filepath.Separator), "")
		want := strings.Join(lines[ex.from:ex.to], "\n")
		if ex.to > ex.from {
			want += "\n"
		}
		if *update {
			rewritten = append(rewritten, lines[done:ex.from]...)
			if got != "" {
				rewritten = append(rewritten, strings.Split(strings.TrimSuffix(got, "\n"), "\n")...)
			}
			done = ex.to
			continue
		}
		require.Equal(t, want, got, "%s:%d: $ ratesim %s (go test ./cmd/ -update rewrites it)", page, ex.line, strings.Join(ex.args, " "))
	}
	if *update {
		rewritten = append(rewritten, lines[done:]...)
		require.NoError(t, os.WriteFile(page, []byte(strings.Join(rewritten, "\n")), 0o644))
	}
}

// shellFields splits a command line as a shell does for the commands the
// pages show: at spaces, except inside double or single quotes, which are
// removed ("minimize burst subject to ..." is one argument).
func shellFields(line string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, c := range line {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote, in = c, true
		case quote == 0 && (c == ' ' || c == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
