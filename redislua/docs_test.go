package redislua

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the outputs docs/redis.md shows")

const docPage = "../docs/redis.md"

// TestDocsRedisCLI runs the redis-cli commands of docs/redis.md's console
// blocks on a real redis-server and requires the output shown under each
// (redis-cli's human format, as on a terminal). gcra.lua is `ratesim lua
// gcra`, all-of.lua `ratesim lua all-of`; the SHA after EVALSHA is the
// script's that the page loaded last. With -update it writes the real
// output (and SHA) into the page instead.
func TestDocsRedisCLI(t *testing.T) {
	srv := startRedisServer(t)
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed (apt-get install redis-tools)")
	}
	files := map[string]string{}
	for _, name := range []string{"gcra", AllOf} {
		s, err := Script(name, ClockArg)
		if err != nil {
			t.Fatal(err)
		}
		files[name+".lua"] = s
	}
	src := files["gcra.lua"] // the script loaded last
	data, err := os.ReadFile(docPage)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	in := false
	ran := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```console"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			in = false
		case in && strings.HasPrefix(l, "$ redis-cli "):
			// the command's output: the lines up to the next command or
			// the end of the block
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(lines[j], "$ ") && !strings.HasPrefix(lines[j], "```") {
				j++
			}
			args := strings.Fields(strings.TrimPrefix(l, "$ redis-cli "))
			var stdin string
			if n := len(args); n >= 2 && args[n-2] == "<" {
				stdin = files[args[n-1]]
				if stdin == "" {
					t.Fatalf("%s:%d: no script %s", docPage, i+1, args[n-1])
				}
				src = stdin
				args = args[:n-2]
			}
			if len(args) >= 2 && args[0] == "EVALSHA" {
				args[1] = SHA1(src)
				l = "$ redis-cli " + strings.Join(args, " ")
			}
			cmd := exec.Command("redis-cli", append([]string{"-s", srv.Socket, "--no-raw"}, args...)...)
			cmd.Stdin = strings.NewReader(stdin)
			var got bytes.Buffer
			cmd.Stdout, cmd.Stderr = &got, &got
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s:%d: %s: %v: %s", docPage, i+1, l, err, got.String())
			}
			ran++
			want := strings.Join(lines[i+1:j], "\n") + "\n"
			if *update {
				out = append(out, l)
				out = append(out, strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n")...)
				i = j - 1
				continue
			}
			if lines[i] != l {
				t.Errorf("%s:%d: shows %q, want the script's SHA: %q (go test ./redislua/ -run TestDocs -update)", docPage, i+1, lines[i], l)
			}
			if got.String() != want {
				t.Errorf("%s:%d: %s printed\n%s\nthe page shows\n%s(go test ./redislua/ -run TestDocs -update)", docPage, i+1, l, got.String(), want)
			}
			i = j - 1
			continue
		}
		out = append(out, l)
	}
	if ran == 0 {
		t.Fatalf("%s shows no redis-cli command", docPage)
	}
	if *update {
		if err := os.WriteFile(docPage, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsGoExample: the Go example docs/redis.md shows is the code of
// example_test.go that TestGoRedisExample runs, and the CheckRange refusal
// it shows is the real message.
func TestDocsGoExample(t *testing.T) {
	page, err := os.ReadFile(docPage)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	code := strings.TrimSpace(s[strings.Index(s, "// doc:begin")+len("// doc:begin") : strings.Index(s, "// doc:end")])
	p := string(page)
	i := strings.Index(p, "```go\n")
	if i < 0 {
		t.Fatal("no go block")
	}
	shown := p[i+len("```go\n"):]
	shown = strings.TrimSpace(shown[:strings.Index(shown, "```")])
	if shown != code {
		t.Errorf("docs/redis.md's go block is not example_test.go's code between doc:begin and doc:end:\n%s", code)
	}
	err = CheckRange("sliding-window", ClockArg, policy(10000, time.Hour, 10), 1, time.Hour)
	if err == nil {
		t.Fatal("accepted")
	}
	if !strings.Contains(strings.Join(strings.Fields(p), " "), err.Error()) {
		t.Errorf("docs/redis.md does not show the refusal %q", err)
	}
}
