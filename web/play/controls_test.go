package play_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/web/play"
	"github.com/stretchr/testify/require"
)

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// TestControlsOfDoubleBurst: the controls show double-burst's values, and
// moving the bursts off the boundary makes fixed-window hold the limit.
func TestControlsOfDoubleBurst(t *testing.T) {
	p := preset(t, "double-burst")
	c, err := play.Describe("builtin:double-burst", p.Text)
	require.NoError(t, err)
	require.EqualValues(t, 10, c.Rate)
	require.Equal(t, "1s", c.Per)
	require.EqualValues(t, 10, c.Burst)
	require.NotNil(t, c.Bursts)
	require.EqualValues(t, 10, c.Bursts.Count)
	require.EqualValues(t, 0, c.Bursts.OffsetNs, "the two bursts straddle the boundary at 1s")
	require.Nil(t, c.Flow)
	require.Zero(t, c.Nodes)

	text, err := play.Edit("builtin:double-burst", p.Text, "burst-offset", "400ms")
	require.NoError(t, err)
	c, err = play.Describe("scenario.yaml", text)
	require.NoError(t, err)
	require.EqualValues(t, 400_000_000, c.Bursts.OffsetNs)
	var s play.Session
	res := s.Run("scenario.yaml", text, play.Options{Algorithms: "fixed-window"})
	require.Nil(t, res.Error)
	require.EqualValues(t, 10, res.Report.Results[0].Accepted, "both bursts in one window: the limit holds")

	text, err = play.Edit("builtin:double-burst", p.Text, "rate", "20")
	require.NoError(t, err)
	require.Contains(t, text, "rate: 20")
	text, err = play.Edit("scenario.yaml", text, "burst", "20")
	require.NoError(t, err)
	res = s.Run("scenario.yaml", text, play.Options{Algorithms: "sliding-log"})
	require.EqualValues(t, 20, res.Report.Results[0].Accepted)
}

// TestControlsKeepComments: a control's edit keeps the scenario's comments,
// each above the field or source it was at, and its keys in their order.
func TestControlsKeepComments(t *testing.T) {
	p := preset(t, "double-burst")
	text, err := play.Edit("builtin:double-burst", p.Text, "burst", "3")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(text, "# docs/algorithms.md, worked example 1: the fixed-window double burst.\nname: double-burst\n"), text)
	require.Contains(t, text, "# no algorithms list: every algorithm, with the policy above\ntraffic:\n")
	require.Contains(t, text, "  # 900, 910, ..., 990 ms\n  - type: burst\n")
	require.Contains(t, text, "  # 1000, 1010, ..., 1090 ms\n  - type: burst\n")
	require.Contains(t, text, "  burst: 3\n")
	// and once more: the comments stay where they are
	again, err := play.Edit("scenario.yaml", text, "burst", "4")
	require.NoError(t, err)
	require.Equal(t, strings.Replace(text, "burst: 3", "burst: 4", 1), again)

	// every built-in, its comments kept, reads back as the same scenario
	ps, err := play.Presets()
	require.NoError(t, err)
	for _, p := range ps {
		want, err := play.Describe("builtin:"+p.Name, p.Text)
		require.NoError(t, err)
		text, err := play.Edit("builtin:"+p.Name, p.Text, "rate", play.Int(want.Rate))
		require.NoError(t, err, p.Name)
		got, err := play.Describe("scenario.yaml", text)
		require.NoError(t, err, p.Name+":\n"+text)
		require.Equal(t, want, got, p.Name)
	}
}

// TestControlsOfTraffic: the traffic control writes a steady or Poisson
// source, whose rate and clients the next controls set.
func TestControlsOfTraffic(t *testing.T) {
	p := preset(t, "double-burst")
	text, err := play.Edit("builtin:double-burst", p.Text, "flow", "poisson")
	require.NoError(t, err)
	text, err = play.Edit("scenario.yaml", text, "clients", "4")
	require.NoError(t, err)
	text, err = play.Edit("scenario.yaml", text, "flow-rate", "30/s")
	require.NoError(t, err)
	c, err := play.Describe("scenario.yaml", text)
	require.NoError(t, err)
	require.Equal(t, &play.FlowControls{Type: "poisson", Rate: "30/s", Clients: 4}, c.Flow)
	require.Nil(t, c.Bursts)
	var s play.Session
	res := s.Run("scenario.yaml", text, play.Options{})
	require.Nil(t, res.Error)
	require.Len(t, res.Keys, 4)
}

// TestControlsOfACluster: nodes and the coordination mode of every row.
func TestControlsOfACluster(t *testing.T) {
	p := preset(t, "kong-local-pods")
	c, err := play.Describe("builtin:kong-local-pods", p.Text)
	require.NoError(t, err)
	require.Equal(t, 3, c.Nodes)
	require.Equal(t, "local", c.Mode)
	text, err := play.Edit("builtin:kong-local-pods", p.Text, "nodes", "5")
	require.NoError(t, err)
	text, err = play.Edit("scenario.yaml", text, "mode", "central")
	require.NoError(t, err)
	c, err = play.Describe("scenario.yaml", text)
	require.NoError(t, err)
	require.Equal(t, 5, c.Nodes)
	require.Equal(t, "central", c.Mode)
	require.Equal(t, 3, strings.Count(text, "coordination: central"))

	p = preset(t, "protect-the-backend")
	c, err = play.Describe("builtin:protect-the-backend", p.Text)
	require.NoError(t, err)
	require.Positive(t, c.Workers)
	text, err = play.Edit("builtin:protect-the-backend", p.Text, "workers", "9")
	require.NoError(t, err)
	c, err = play.Describe("scenario.yaml", text)
	require.NoError(t, err)
	require.Equal(t, 9, c.Workers)

	_, err = play.Edit("builtin:protect-the-backend", p.Text, "no-such", "1")
	require.Error(t, err)
}
