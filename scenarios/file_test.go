package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFileBuiltInCode: a File built in code is checked as the same file
// written in YAML is, its problems named by path, without a position.
func TestFileBuiltInCode(t *testing.T) {
	f := &File{From: "flags", Name: StringOf("x"), Duration: DurationOf("1s"),
		Limit:   &Limit{Rate: IntOf(10), Burst: IntOf(0)},
		Traffic: []Source{{Type: StringOf("steady"), Rate: RateOf("10/x")}}}
	err := Validate(f)
	require.EqualError(t, err, "flags: limit.burst: 0: want an integer >= 1\n"+
		`flags: traffic[0].rate: "10/x": unknown unit "x" (want 10/s, 600/m, 5/100ms)`)

	_, err = Parse("x.yaml", []byte("name: x\nduration: 1s\nlimit: {rate: 10, burst: 0}\ntraffic: [{type: steady, rate: 10/x}]\n"))
	require.EqualError(t, err, "x.yaml:3:26: limit.burst: 0: want an integer >= 1\n"+
		`x.yaml:4:32: traffic[0].rate: "10/x": unknown unit "x" (want 10/s, 600/m, 5/100ms)`)
}

// TestSetByPath: a field set by path on a clone changes the clone's
// scenario only; a limit written as a rate is written out to set its
// burst; a field the format does not know is refused where it stands.
func TestSetByPath(t *testing.T) {
	f, err := Decode("s.yaml", []byte("name: x\nduration: 1s\nlimit: 10/s\nalgorithms: [gcra]\ntraffic: [{type: steady, rate: 10/s}]\n"))
	require.NoError(t, err)
	c := f.Clone()
	require.NoError(t, c.Set("limit.burst", ValueOf("5")))
	require.NoError(t, c.Set("algorithms[0].max-delay", ValueOf("10ms")))
	sc, err := Build(c)
	require.NoError(t, err)
	require.Equal(t, int64(5), sc.Limit.Burst)
	require.Equal(t, int64(10), sc.Limit.Rate)
	require.Equal(t, 10*time.Millisecond, sc.Algorithms[0].Params.MaxDelay)
	sc, err = Build(f)
	require.NoError(t, err)
	require.Equal(t, int64(10), sc.Limit.Burst, "the original is unchanged")

	c = f.Clone()
	require.NoError(t, c.Set("limit.brust", ValueOf("5")))
	require.EqualError(t, Validate(c), `s.yaml: limit.brust: unknown field (want rate, per or burst); did you mean "burst"?`)
	require.EqualError(t, c.Set("traffic[3].rate", ValueOf("1/s")), "[3]: the scenario's traffic has 1 entries, want an index 0..0")
	require.EqualError(t, c.Set("name.x", ValueOf("1")), "name is not a mapping, cannot set x in it")
}

// TestMarshalText: a value written back reads as the same value; text
// that YAML would read otherwise unquoted is quoted.
func TestMarshalText(t *testing.T) {
	f := &File{Name: String{ValueOf("a: b")}, Description: String{ValueOf("-x")},
		Duration: DurationOf("1s"), Limit: &Limit{Short: RateOf("10/s")},
		Traffic: []Source{{Type: StringOf("steady"), Key: String{ValueOf("#k")}, Rate: RateOf("5/s")}}}
	out, err := Marshal(f)
	require.NoError(t, err)
	require.Equal(t, "name: \"a: b\"\ndescription: \"-x\"\nduration: 1s\nlimit: 10/s\ntraffic:\n- type: \"steady\"\n  key: \"#k\"\n  rate: 5/s\n", string(out))
	back, err := Read("m.yaml", out)
	require.NoError(t, err)
	require.Equal(t, "a: b", back.Name.Text)
	require.Equal(t, "#k", back.Traffic[0].Key.Text)
}
