package traffic

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Recognise names the format auto reads a trace as, gzipped too, and the
// names of its first line's fields (a nested object's own keys are not
// fields); "" for a file it cannot open or whose lines say no format.
func TestRecognise(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err := w.Write([]byte(`{"ts": 1700000000, "consumer": "alice"}` + "\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for _, tc := range []struct {
		path, want string
		fields     []string
	}{
		{write("a.jsonl", []byte(`{"ts": 1700000000, "consumer": "alice", "req": {"uri": "/"}, "ip": "1.1.1.1"}`+"\n")), "jsonl", []string{"ts", "consumer", "req", "ip"}},
		{write("a.csv", []byte("ts,user_id\n1700000000,u1\n")), "csv", []string{"ts", "user_id"}},
		{write("a.tsv", []byte("ts\tuser_id\n1700000000\tu1\n")), "tsv", []string{"ts", "user_id"}},
		{write("a.log", []byte(`1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "curl"`+"\n")), "combined", nil},
		{write("a.gz", gz.Bytes()), "jsonl", []string{"ts", "consumer"}},
		{write("empty", nil), "", nil},
		{filepath.Join(dir, "none"), "", nil},
	} {
		format, fields := (&Replay{Path: tc.path}).Recognise()
		require.Equal(t, tc.want, format, tc.path)
		require.Equal(t, tc.fields, fields, tc.path)
	}
}
