package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The Dockerfile builds ratesim with .ci/build-static, the script .ci/run
// runs (the static build and the cross builds): one definition of the
// build, so CI checks what the image holds. Its final stage is an empty
// (scratch) image that runs ratesim as a user that is not root, and
// compare (the default scenario) when given no command.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	stages := regexp.MustCompile(`(?m)^FROM `).Split(df, -1)
	if len(stages) != 3 {
		t.Fatalf("want a build stage and a final stage, got %d FROM lines", len(stages)-1)
	}
	build, final := stages[1], stages[2]
	if !regexp.MustCompile(`(?m)^RUN .*\.ci/build-static /out/ratesim$`).MatchString(build) {
		t.Error("the build stage does not build with .ci/build-static")
	}
	if strings.Contains(build, "go build") {
		t.Error("the build stage runs go build itself: build with .ci/build-static, which CI runs")
	}
	if !strings.HasPrefix(final, "scratch\n") {
		t.Errorf("the final stage is FROM %s, want scratch", strings.SplitN(final, "\n", 2)[0])
	}
	user := regexp.MustCompile(`(?m)^USER (\S+)$`).FindStringSubmatch(final)
	if user == nil || user[1] == "0" || strings.HasPrefix(user[1], "0:") || user[1] == "root" {
		t.Errorf("the final stage runs as %v, want a user that is not root", user)
	}
	for _, line := range []string{`ENTRYPOINT ["/ratesim"]`, `CMD ["compare"]`} {
		if !strings.Contains(final, "\n"+line+"\n") {
			t.Errorf("the final stage has no %s", line)
		}
	}
	run, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(run), ".ci/build-static") {
		t.Error(".ci/run does not run .ci/build-static")
	}
	script, err := os.ReadFile(".ci/build-static")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "CGO_ENABLED=0 exec go build") {
		t.Error(".ci/build-static does not build with CGO_ENABLED=0")
	}
}
