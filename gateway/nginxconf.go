// Package gateway reads the rate limits of gateway configurations (nginx
// for now, docs/gateways.md) and writes them as ratesim scenario rows.
//
// Each reader parses the gateway's own syntax, not a simplified dialect,
// and refuses what it cannot map with an *Error naming the file, line,
// column and directive: an import is never partial without saying so.
package gateway

import (
	"fmt"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
)

// Error is a config that cannot be imported: file:line:col, the directive
// (as the scenario loader's Path) and what is wrong; the scenario loader's
// error, so that both print alike.
type Error = scenarios.Error

// directive is one nginx directive: its name and arguments as nginx's
// tokenizer gives them (quotes removed, escapes applied), where it starts,
// and its block when it has one.
type directive struct {
	name     string
	args     []string
	line     int
	col      int
	block    []*directive
	hasBlock bool
}

// text returns the directive as written, roughly: name and arguments.
func (d *directive) text() string {
	return strings.TrimSpace(d.name + " " + strings.Join(d.args, " "))
}

// token is one word of an nginx config, or one of ; { }.
type token struct {
	s         string
	line, col int
	special   bool // ; { } outside quotes
}

// tokenize splits an nginx config into tokens as ngx_conf_read_token does:
// words separated by blanks, ';', '{' and '}' on their own, '#' starting a
// comment to the end of the line where a word could start, and words
// quoted with " or ' (which may hold blanks and the specials) with
// backslash escapes \", \', \\ and the rest kept as written.
func tokenize(file string, data []byte) ([]token, error) {
	var toks []token
	line, col := 1, 1
	i := 0
	advance := func() {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i++
	}
	for i < len(data) {
		c := data[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			advance()
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				advance()
			}
		case c == ';' || c == '{' || c == '}':
			toks = append(toks, token{s: string(c), line: line, col: col, special: true})
			advance()
		case c == '"' || c == '\'':
			q := c
			tl, tc := line, col
			advance()
			var b strings.Builder
			closed := false
			for i < len(data) {
				if data[i] == '\\' && i+1 < len(data) && (data[i+1] == q || data[i+1] == '\\') {
					advance()
					b.WriteByte(data[i])
					advance()
					continue
				}
				if data[i] == q {
					advance()
					closed = true
					break
				}
				b.WriteByte(data[i])
				advance()
			}
			if !closed {
				return nil, &Error{File: file, Line: tl, Col: tc, Msg: fmt.Sprintf("unclosed %c quote", q)}
			}
			if i < len(data) && !strings.ContainsRune(" \t\r\n;{}", rune(data[i])) {
				return nil, &Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf("unexpected %q after a quoted word (nginx wants a blank, ; or {)", data[i])}
			}
			toks = append(toks, token{s: b.String(), line: tl, col: tc})
		default:
			tl, tc := line, col
			start := i
			for i < len(data) && !strings.ContainsRune(" \t\r\n;{}", rune(data[i])) {
				if data[i] == '\\' && i+1 < len(data) {
					advance()
				}
				advance()
			}
			toks = append(toks, token{s: string(data[start:i]), line: tl, col: tc})
		}
	}
	return toks, nil
}

// parseConf parses an nginx config into its directives.
func parseConf(file string, data []byte) ([]*directive, error) {
	toks, err := tokenize(file, data)
	if err != nil {
		return nil, err
	}
	p := &confParser{file: file, toks: toks}
	ds, err := p.block(false)
	if err != nil {
		return nil, err
	}
	return ds, nil
}

type confParser struct {
	file string
	toks []token
	i    int
}

// block reads directives up to the end of the input (top level) or to the
// '}' that closes the block (inner).
func (p *confParser) block(inner bool) ([]*directive, error) {
	var out []*directive
	for {
		if p.i >= len(p.toks) {
			if inner {
				return nil, &Error{File: p.file, Msg: "unexpected end of file, expecting \"}\""}
			}
			return out, nil
		}
		t := p.toks[p.i]
		if t.special {
			if t.s == "}" {
				if !inner {
					return nil, &Error{File: p.file, Line: t.line, Col: t.col, Msg: "unexpected \"}\""}
				}
				p.i++
				return out, nil
			}
			return nil, &Error{File: p.file, Line: t.line, Col: t.col, Msg: fmt.Sprintf("unexpected %q (a directive starts with its name)", t.s)}
		}
		d := &directive{name: t.s, line: t.line, col: t.col}
		p.i++
		for {
			if p.i >= len(p.toks) {
				return nil, &Error{File: p.file, Line: d.line, Col: d.col, Path: d.name, Msg: "unexpected end of file, expecting \";\" or \"{\""}
			}
			a := p.toks[p.i]
			p.i++
			if !a.special {
				d.args = append(d.args, a.s)
				continue
			}
			switch a.s {
			case ";":
			case "{":
				d.hasBlock = true
				inner, err := p.block(true)
				if err != nil {
					return nil, err
				}
				d.block = inner
			case "}":
				return nil, &Error{File: p.file, Line: a.line, Col: a.col, Path: d.name, Msg: "unexpected \"}\" (the directive has no \";\")"}
			}
			break
		}
		out = append(out, d)
	}
}
