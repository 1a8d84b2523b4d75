package traffic

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

// readBuffer is the size of the reading buffers; the format is recognised
// from the lines within the first readBuffer bytes.
const readBuffer = 64 << 10

// traceInput is an open trace: the file, gunzipped when it is gzip, read
// line by line.
type traceInput struct {
	closer io.Closer // the file
	gz     *gzip.Reader
	ahead  *readAhead // reads (and gunzips) the file beside the parsing
	br     *bufio.Reader
	lines  lineReader
	closed bool
}

// openTrace opens r.Path.
func openTrace(r *Replay) (*traceInput, error) {
	f, err := r.open()
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &ReplayError{Path: r.Path, Msg: err.Error(), Err: err}
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, &ReplayError{Path: r.Path, Msg: "is a directory, want a trace file"}
	}
	return newTraceInput(r, f, f)
}

// open opens r.Path, in r.FS when it has one.
func (r *Replay) open() (fs.File, error) {
	if r.FS != nil {
		return r.FS.Open(r.Path)
	}
	return os.Open(r.Path)
}

// newTraceInput reads a trace from rd, recognising gzip by its magic bytes;
// closer is closed with it (and on failure).
func newTraceInput(r *Replay, rd io.Reader, closer io.Closer) (*traceInput, error) {
	in := &traceInput{closer: closer, br: bufio.NewReaderSize(rd, readBuffer)}
	if magic, _ := in.br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(in.br)
		if err != nil {
			in.close()
			return nil, &ReplayError{Path: r.Path, Msg: "not a valid gzip file: " + err.Error(), Err: err}
		}
		in.gz = gz
	}
	var src io.Reader = in.br
	if in.gz != nil {
		src = in.gz
	}
	in.ahead = newReadAhead(src)
	in.br = bufio.NewReaderSize(in.ahead, readBuffer)
	in.lines.r = in.br
	return in, nil
}

func (in *traceInput) close() {
	if in == nil || in.closed {
		return
	}
	in.closed = true
	if in.ahead != nil {
		// stop reading ahead; closing the file ends a read in progress
		in.ahead.close()
	}
	if in.closer != nil {
		in.closer.Close()
	}
	if in.ahead != nil {
		in.ahead.wait()
	}
	if in.gz != nil {
		in.gz.Close()
	}
}

// sample returns the first lines of the input (up to n non-empty ones
// within the first readBuffer bytes) without consuming them; the last one
// may be cut short by the buffer. whole says whether that is the whole
// input.
func (in *traceInput) sample(n int) (lines [][]byte, whole bool) {
	buf, err := in.br.Peek(readBuffer)
	whole = err != nil // the whole input is in buf
	buf = bytes.TrimPrefix(buf, bom)
	var out [][]byte
	for len(buf) > 0 && len(out) < n {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !isBlank(line) {
			lines = append(lines, line)
		}
	}
	return lines, whole
}

var bom = []byte("\ufeff")

// lineReader reads lines of at most maxLine bytes from a bufio.Reader,
// skipping longer ones without holding them.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than the reader's buffer
	n    int64  // lines read: the number of the last one
}

// next returns the next line without its \n or \r\n (valid until the next
// call), tooLong for a line longer than maxLine (whose bytes are skipped),
// and nil at the end of the input. A read error is returned as is.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	b, err := lr.r.ReadSlice('\n')
	switch {
	case err == nil:
		line = b
	case errors.Is(err, bufio.ErrBufferFull):
		line, tooLong, err = lr.longLine(b)
		if err != nil {
			return nil, false, err
		}
	case err == io.EOF && len(b) > 0:
		line = b // the last line, without \n
	case err == io.EOF:
		return nil, false, nil
	default:
		return nil, false, err
	}
	lr.n++
	if lr.n == 1 {
		line = bytes.TrimPrefix(line, bom)
	}
	if tooLong {
		return nil, true, nil
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > maxLine {
		return nil, true, nil
	}
	if line == nil {
		line = []byte{}
	}
	return line, false, nil
}

// longLine reads the rest of a line that did not fit the buffer, keeping
// at most maxLine+2 bytes of it (the line and its \r\n).
func (lr *lineReader) longLine(b []byte) ([]byte, bool, error) {
	lr.long = append(lr.long[:0], b...)
	tooLong := false
	for {
		b, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.long)+len(b) > maxLine+2 {
				tooLong = true
				lr.long = lr.long[:0]
				if cap(lr.long) > 2*readBuffer {
					lr.long = nil // do not keep a megabyte for the rest of the trace
				}
			} else {
				lr.long = append(lr.long, b...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil || err == io.EOF:
			return lr.long, tooLong, nil
		default:
			return nil, false, err
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// validUTF8 is utf8.Valid with a fast path for ASCII, which log lines are.
func validUTF8(b []byte) bool {
	const high = 0x8080808080808080 // the top bit of each byte
	for len(b) >= 32 {
		v := binary.LittleEndian.Uint64(b[0:8]) | binary.LittleEndian.Uint64(b[8:16]) |
			binary.LittleEndian.Uint64(b[16:24]) | binary.LittleEndian.Uint64(b[24:32])
		if v&high != 0 {
			return utf8.Valid(b)
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&high != 0 {
			return utf8.Valid(b)
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return utf8.Valid(b)
		}
	}
	return true
}

// detect recognises the format from sample lines: each line votes for
// the format it looks like, and the most votes win (ties in the order
// log, jsonl, tsv, csv); a log is combined when any of its lines has
// referer and agent. A file of one column whose header names a time
// (time, timestamp, ...) is CSV. It returns "" when no line looks like any
// format.
func detect(lines [][]byte) string {
	var log, combined, jsonl, tsv, csv int
	var f logFields
	for _, line := range lines {
		trimmed := bytes.TrimLeft(line, " \t")
		switch {
		case len(trimmed) > 0 && trimmed[0] == '{':
			jsonl++
		case splitLog(line, &f, true).reason == "":
			log++
			if f.hasRefAgent || f.truncated != "" {
				combined++
			}
		case bytes.IndexByte(line, '\t') >= 0:
			tsv++
		case bytes.IndexByte(line, ',') >= 0:
			csv++
		}
	}
	best, format := 0, ""
	for _, c := range []struct {
		n      int
		format string
	}{{log, "common"}, {jsonl, "jsonl"}, {tsv, "tsv"}, {csv, "csv"}} {
		if c.n > best {
			best, format = c.n, c.format
		}
	}
	if format == "common" && combined > 0 {
		format = "combined"
	}
	if format == "" && len(lines) > 0 && defaultColumn([]string{string(bytes.TrimSpace(lines[0]))}) == 0 {
		format = "csv" // a single column, headed like a time
	}
	return format
}

// Recognise returns the format that auto reads r's trace as (combined,
// common, csv, tsv or jsonl) by its first lines, as Open recognises it,
// and the names its first line gives its fields: a JSON object's keys (in
// the order written), a CSV or TSV header's columns; nil for a log.
// format is "" when the lines say none or the trace cannot be opened
// (Open then says why).
func (r *Replay) Recognise() (format string, fields []string) {
	in, err := openTrace(r)
	if err != nil {
		return "", nil
	}
	defer in.close()
	sample, _ := in.sample(5)
	format = detect(sample)
	if len(sample) == 0 {
		return format, nil
	}
	switch format {
	case "jsonl":
		d := json.NewDecoder(bytes.NewReader(sample[0]))
		if t, err := d.Token(); err != nil || t != json.Delim('{') {
			return format, nil
		}
		for d.More() {
			t, err := d.Token()
			if err != nil {
				break
			}
			if k, ok := t.(string); ok {
				fields = append(fields, k)
			}
			var v json.RawMessage
			if d.Decode(&v) != nil {
				break
			}
		}
	case "csv":
		fields, _ = csv.NewReader(bytes.NewReader(sample[0])).Read()
	case "tsv":
		fields = strings.Split(string(sample[0]), "\t")
	}
	return format, fields
}

// chooseParser settles the format (recognising it when auto) and builds
// its parser, reading the header of a CSV/TSV file.
func (s *replayStream) chooseParser() error {
	r := s.r
	s.format = r.Format
	if r.LogFormat != "" {
		s.format = "nginx"
	}
	if s.format == "" || s.format == "auto" {
		sample, whole := s.in.sample(5)
		switch {
		case len(sample) == 0 && whole:
			// an empty file (or only empty lines): nothing to recognise
			s.format = "auto"
			s.parser = emptyParser{}
			return nil
		case len(sample) == 0:
			return &ReplayError{Path: r.Path, Msg: fmt.Sprintf("cannot recognise the format: the first %d KiB are empty lines (set --trace-format, or format in a scenario file)", readBuffer>>10)}
		}
		s.format = detect(sample)
		if s.format == "" {
			return &ReplayError{Path: r.Path, Msg: fmt.Sprintf("cannot recognise the format from the first lines (want %s; set --trace-format, or format in a scenario file)", orWords(ReplayFormats[1:]))}
		}
		if isLog(s.format) {
			msg := checkLogFields(s.format, r.TimeField, r.KeyField, r.CostField, r.CheckField)
			if msg == "" {
				msg = checkAttrFields(s.format, r.AttrFields)
			}
			if msg != "" {
				return &ReplayError{Path: r.Path, Msg: msg + " (format " + s.format + ", recognised)"}
			}
			if len(r.Columns) > 0 {
				return &ReplayError{Path: r.Path, Msg: "columns: applies to csv and tsv only, and the file looks like a " + s.format + " log"}
			}
		}
		if s.format == "jsonl" && len(r.Columns) > 0 {
			return &ReplayError{Path: r.Path, Msg: "columns: applies to csv and tsv only, and the file looks like JSON lines"}
		}
	}
	tp, err := newTimeParser(r)
	if err != nil {
		return &ReplayError{Path: r.Path, Msg: err.Error()}
	}
	switch s.format {
	case "combined", "common":
		lp := newLogParser(r, tp)
		sample, _ := s.in.sample(5)
		if err := lp.chooseLogTime(sample); err != nil {
			return &ReplayError{Path: r.Path, Msg: err.Error()}
		}
		s.parser = lp
	case "nginx":
		p, err := newTemplateParser(r, tp)
		if err != nil {
			return &ReplayError{Path: r.Path, Msg: err.Error()}
		}
		s.parser = p
	case "jsonl":
		s.parser = newJSONParser(r, tp)
	case "csv", "tsv":
		p, err := s.newSepParser(tp)
		if err != nil {
			return err
		}
		s.parser = p
	}
	return nil
}

// emptyParser stands for the parser of an empty file: it is never called.
type emptyParser struct{}

func (emptyParser) parse([]byte, *parsedLine) badLine { return badLine{reason: "empty line"} }
