package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// TestRunNginxZone: the engine gives an nginx row with a zone
// its keys' names, whose lengths decide the nodes' sizes, and reports the
// zone's evictions and refusals; a row without a zone reports neither.
// 191 keys of 4 bytes fill a 32k zone; a key of 100 bytes then needs a
// 256-byte node that no freed 128-byte chunk can give: refused, after
// evicting the least recently used node.
func TestRunNginxZone(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	plan := traffic.Plan{Sources: []traffic.Source{
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 191, Prefix: "k"}, Cost: 1, End: 191 * ms},
			Rate: traffic.Rate{Count: 1000, Per: time.Second}},
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: long}, Cost: 1}, At: []time.Duration{500 * ms}},
	}}
	p := algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, Nodelay: true}
	zoned := p
	zoned.NginxZone = 32 << 10
	cfg := baseConfig(plan,
		Algorithm{Name: "nginx", Label: "plain", Params: p},
		Algorithm{Name: "nginx", Label: "zone", Params: zoned})
	rep, err := Run(cfg)
	require.NoError(t, err)
	plain, zone := rep.Results[0], rep.Results[1]
	require.Nil(t, plain.ZoneEvictions)
	require.Nil(t, plain.ZoneRefusals)
	require.Equal(t, int64(192), plain.Accepted)
	require.NotNil(t, zone.ZoneEvictions)
	require.Equal(t, int64(1), *zone.ZoneEvictions)
	require.Equal(t, int64(1), *zone.ZoneRefusals)
	require.Equal(t, int64(191), zone.Accepted)
	require.Equal(t, int64(1), zone.Rejected)
	require.Equal(t, int64(191), zone.Memory.KeysPeak)
}
