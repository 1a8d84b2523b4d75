package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a scenario file: where it is (file, 1-based line
// and column, and the field path such as traffic[1].rate) and what is wrong
// (what was found and what is expected).
type Error struct {
	File      string
	Line, Col int
	Path      string // empty for a problem with the file as a whole
	Msg       string
}

// Error formats e as file:line:col: path: msg, leaving out the parts that
// are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a scenario file, in order of position.
// Parse returns at most maxErrors of them; when there were more, the last
// one says how many were left out.
type Errors []*Error

// maxErrors is the most errors Parse reports.
const maxErrors = 20

// Error writes one error a line.
func (l Errors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors, for errors.As.
func (l Errors) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sorted orders the errors by position (errors at one position keep the
// order they were found in), drops repeats and keeps the first maxErrors.
func (l Errors) sorted() Errors {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	l = slices.CompactFunc(l, func(a, b *Error) bool { return *a == *b })
	if len(l) > maxErrors {
		more := len(l) - maxErrors
		next := l[maxErrors]
		l = append(l[:maxErrors:maxErrors], &Error{File: next.File, Line: next.Line, Col: next.Col,
			Msg: fmt.Sprintf("too many errors (%d more not shown)", more)})
	}
	return l
}
