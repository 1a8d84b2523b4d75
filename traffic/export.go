package traffic

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ExportFormats are the formats WriteArrivals writes.
var ExportFormats = []string{"csv", "jsonl", "combined"}

// WriteArrivals writes the arrivals of s, one a line, in format:
//
//   - csv: a header time_ns,key,cost, then one row per arrival (the key
//     quoted as CSV wants when it holds a comma or a quote);
//   - jsonl: {"time_ns":...,"key":"...","cost":...} per arrival;
//   - combined: a combined log line per arrival, the key as the client host,
//     the time in whole seconds (rounded down) in UTC, the cost as the
//     response size: KEY - - [02/Jan/2006:15:04:05 +0000] "GET / HTTP/1.1"
//     200 COST "-" "ratesim".
//
// Each reads back through a Replay to the same arrivals: csv and jsonl
// exactly (a Replay with key-field key and cost-field cost; the time_ns
// field is found and read as ns by its name), combined to the second
// (key-field ip, the default, and cost-field size). A key that such a line
// cannot carry is an error: a key with a line break (csv, combined), or,
// for combined, an empty key or one with a space, a control character or
// a quote. Arrivals before the Unix epoch are an error too.
func WriteArrivals(w io.Writer, format string, keys *Keys, s Stream) error {
	var row func(b []byte, a *Arrival, key string) ([]byte, error)
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "csv":
		bw.WriteString("time_ns,key,cost\n")
		row = csvRow
	case "jsonl":
		row = jsonRow
	case "combined":
		row = combinedRow
	default:
		return fmt.Errorf("export format %q: want %s", format, strings.Join(ExportFormats, ", "))
	}
	names := map[uint32]string{}
	var buf []byte
	var a Arrival
	for s.Next(&a) {
		name, ok := names[a.Key]
		if !ok {
			name = keys.Name(a.Key)
			names[a.Key] = name
		}
		if a.At < 0 {
			return fmt.Errorf("export: an arrival at %v, before the Unix epoch", a.At)
		}
		var err error
		buf, err = row(buf[:0], &a, name)
		if err != nil {
			return err
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

func csvRow(b []byte, a *Arrival, key string) ([]byte, error) {
	if strings.ContainsAny(key, "\r\n") {
		return nil, fmt.Errorf("export csv: key %q has a line break", key)
	}
	b = strconv.AppendInt(b, int64(a.At), 10)
	b = append(b, ',')
	if key == "" || strings.ContainsAny(key, `,"`) || key[0] == ' ' || key[len(key)-1] == ' ' {
		b = append(b, '"')
		b = append(b, strings.ReplaceAll(key, `"`, `""`)...)
		b = append(b, '"')
	} else {
		b = append(b, key...)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, a.Cost, 10)
	return append(b, '\n'), nil
}

func jsonRow(b []byte, a *Arrival, key string) ([]byte, error) {
	k, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"time_ns":`...)
	b = strconv.AppendInt(b, int64(a.At), 10)
	b = append(b, `,"key":`...)
	b = append(b, k...)
	b = append(b, `,"cost":`...)
	b = strconv.AppendInt(b, a.Cost, 10)
	return append(b, "}\n"...), nil
}

func combinedRow(b []byte, a *Arrival, key string) ([]byte, error) {
	if key == "" || strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r == '"' || r == 0x7f }) >= 0 {
		return nil, fmt.Errorf("export combined: key %q cannot be a log's client host (it is empty or has a space, a quote or a control character)", key)
	}
	b = append(b, key...)
	b = append(b, " - - ["...)
	b = time.Unix(int64(a.At/time.Second), 0).UTC().AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, `] "GET / HTTP/1.1" 200 `...)
	b = strconv.AppendInt(b, a.Cost, 10)
	return append(b, " \"-\" \"ratesim\"\n"...), nil
}
