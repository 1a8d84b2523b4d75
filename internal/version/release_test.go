package version

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The release's configuration, which these tests hold to the build
// that stamps this package's Version, lives at the repository's root.
const root = "../.."

// The Dockerfile builds ratesim with .ci/build-static, the script .ci/run
// runs (the static build and the cross builds): one definition of the
// build, so CI checks what the image holds. Its final stage is an empty
// (scratch) image that runs ratesim as a user that is not root, and
// compare (the default scenario) when given no command.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
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
	run, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(run), ".ci/build-static") {
		t.Error(".ci/run does not run .ci/build-static")
	}
	script, err := os.ReadFile(filepath.Join(root, ".ci/build-static"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "CGO_ENABLED=0 exec go build") {
		t.Error(".ci/build-static does not build with CGO_ENABLED=0")
	}
}

// The release configuration (.goreleaser.yaml) builds each OS and each
// arch .ci/run cross-builds, and no other, each as .ci/build-static builds:
// no cgo, -trimpath, the time zone database built in, stripped, the
// version stamped where build-static stamps it.
func TestGoreleaserConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int
		Builds  []struct {
			Env, Flags, Tags, Ldflags, Goos, Goarch []string
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 || len(cfg.Builds) != 1 {
		t.Fatalf("want version 2 and one build, got version %d and %d builds", cfg.Version, len(cfg.Builds))
	}
	b := cfg.Builds[0]
	script, err := os.ReadFile(filepath.Join(root, ".ci/build-static"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CGO_ENABLED=0 exec go build -trimpath -tags timetzdata", `ldflags="-s -w"`,
		"-X github.com/ratesim/ratesim/internal/version.Version="} {
		if !strings.Contains(string(script), s) {
			t.Errorf(".ci/build-static has no %q: hold .goreleaser.yaml to what it does now", s)
		}
	}
	want := struct{ Env, Flags, Tags []string }{[]string{"CGO_ENABLED=0"}, []string{"-trimpath"}, []string{"timetzdata"}}
	if !slices.Equal(b.Env, want.Env) || !slices.Equal(b.Flags, want.Flags) || !slices.Equal(b.Tags, want.Tags) {
		t.Errorf("env %v, flags %v, tags %v: want %v, %v, %v (.ci/build-static's)", b.Env, b.Flags, b.Tags, want.Env, want.Flags, want.Tags)
	}
	if len(b.Ldflags) != 1 || !strings.HasPrefix(b.Ldflags[0], "-s -w -X github.com/ratesim/ratesim/internal/version.Version=") {
		t.Errorf("ldflags %q: want .ci/build-static's -s -w and its version stamp", b.Ldflags)
	}
	run, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	// CI builds linux/amd64 statically, then "for target in os/arch ...; do"
	oses, arches := []string{"linux"}, []string{"amd64"}
	_, loop, ok := strings.Cut(string(run), "\nfor target in ")
	loop, _, _ = strings.Cut(loop, "; do\n")
	if !ok || loop == "" {
		t.Fatal(`.ci/run has no "for target in ...; do" loop of cross builds`)
	}
	for _, target := range strings.Fields(loop) {
		os, arch, _ := strings.Cut(target, "/")
		if !slices.Contains(b.Goos, os) || !slices.Contains(b.Goarch, arch) {
			t.Errorf(".ci/run cross-builds %s, which the release does not build (%v on %v)", target, b.Goos, b.Goarch)
		}
		oses, arches = append(oses, os), append(arches, arch)
	}
	for _, os := range b.Goos {
		if !slices.Contains(oses, os) {
			t.Errorf("the release builds for %s, which .ci/run does not build (%s)", os, loop)
		}
	}
	for _, arch := range b.Goarch {
		if !slices.Contains(arches, arch) {
			t.Errorf("the release builds for %s, which .ci/run does not build (%s)", arch, loop)
		}
	}
	if !strings.Contains(string(run), "goreleaser check") {
		t.Error(".ci/run does not check the release configuration where goreleaser is installed")
	}
}
