package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		// go install module@v1.2.0 stamps the release
		{"release", debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		// a build of a module without a tag: its pseudo-version
		{"pseudo", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201201000-0123456789ab"}}, "v0.0.0-20261201201000-0123456789ab"},
		// go build in a git checkout: (devel) with the commit
		{"checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3dedaf1c0ffee0123456789abcdef0123456789a"}, {Key: "vcs.modified", Value: "false"}}}, "dev+3dedaf1c0ffe"},
		{"dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3dedaf1c0ffee0123456789abcdef0123456789a"}, {Key: "vcs.modified", Value: "true"}}}, "dev+3dedaf1c0ffe-dirty"},
		// go test: no version, no commit
		{"test", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"empty", debug.BuildInfo{}, "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, fromBuildInfo(&tc.bi))
		})
	}
}

// Under go test the build info has no version and no commit, so the
// outputs the tests hold (goldens, docs) say "dev".
func TestStringUnderTest(t *testing.T) {
	require.Equal(t, "dev", String())
	Version = "v9.9.9"
	defer func() { Version = "" }()
	require.Equal(t, "v9.9.9", String())
}
