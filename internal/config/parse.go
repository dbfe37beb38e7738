package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/swctl/swctl/frame"
)

// maxLineLen bounds one line of the file, so a binary file given by mistake
// is refused rather than read whole into one token.
const maxLineLen = 64 * 1024

// Error is a parse error: the file, the line and the cause.
type Error struct {
	// File is the file name given to Parse.
	File string
	// Line is the 1-based line number, 0 when the error is not on a line.
	Line int
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// token is one word of the file, or one of the punctuation tokens "{", "}"
// and ";" (";" also stands for the end of a line).
type token struct {
	// text is the word or the punctuation.
	text string
	// line is where it was found.
	line int
}

// stmt is a statement: its words, and its block when it has one.
type stmt struct {
	// words are the statement's words; words[0] is the keyword.
	words []string
	// line is the line of the first word.
	line int
	// block holds the statements between braces; nil without braces.
	block []stmt
	// hasBlock tells an empty block ("{ }") from no block.
	hasBlock bool
}

// Load reads the configuration at path. A missing file is an empty
// configuration, not an error.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a configuration. filename is used in error messages only.
// The first error is returned as an *Error naming the line and the cause.
func Parse(r io.Reader, filename string) (*Config, error) {
	toks, err := tokenize(r)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.File = filename
			return nil, pe
		}
		return nil, &Error{File: filename, Err: err}
	}
	p := parser{toks: toks}
	stmts, err := p.block(0, 0)
	if err != nil {
		return nil, fileErr(filename, err)
	}
	c, err := build(stmts)
	if err != nil {
		return nil, fileErr(filename, err)
	}
	return c, nil
}

// lineErr is an error on a given line, before the file name is known.
type lineErr struct {
	// line is the 1-based line number.
	line int
	// err is the cause.
	err error
}

func (e *lineErr) Error() string { return fmt.Sprintf("%d: %v", e.line, e.err) }

func errAt(line int, format string, args ...any) error {
	return &lineErr{line: line, err: fmt.Errorf(format, args...)}
}

func wrapAt(line int, err error) error { return &lineErr{line: line, err: err} }

func fileErr(filename string, err error) error {
	var le *lineErr
	if errors.As(err, &le) {
		return &Error{File: filename, Line: le.line, Err: le.err}
	}
	return &Error{File: filename, Err: err}
}

func tokenize(r io.Reader) ([]token, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLineLen)
	var toks []token
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		for _, field := range strings.Fields(text) {
			for field != "" {
				i := strings.IndexAny(field, "{};")
				switch {
				case i < 0:
					toks = append(toks, token{field, line})
					field = ""
				case i > 0:
					toks = append(toks, token{field[:i], line})
					field = field[i:]
				default:
					toks = append(toks, token{field[:1], line})
					field = field[1:]
				}
			}
		}
		toks = append(toks, token{";", line})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &Error{Line: line + 1, Err: fmt.Errorf("line longer than %d bytes", maxLineLen)}
		}
		return nil, err
	}
	return toks, nil
}

// parser turns tokens into statements.
type parser struct {
	// toks are the file's tokens.
	toks []token
	// pos is the next token to read.
	pos int
}

// block reads statements until the "}" closing a block opened on line
// open (depth > 0), or the end of the file (depth 0).
func (p *parser) block(depth, open int) ([]stmt, error) {
	var out []stmt
	for {
		if p.pos == len(p.toks) {
			if depth > 0 {
				return nil, errAt(open, "block opened here is not closed by \"}\"")
			}
			return out, nil
		}
		t := p.toks[p.pos]
		switch t.text {
		case ";":
			p.pos++
			continue
		case "}":
			if depth == 0 {
				return nil, errAt(t.line, "\"}\" without a block to close")
			}
			p.pos++
			return out, nil
		case "{":
			return nil, errAt(t.line, "\"{\" without a statement before it")
		}
		s := stmt{line: t.line}
		for p.pos < len(p.toks) {
			t := p.toks[p.pos]
			if t.text == ";" || t.text == "}" || t.text == "{" {
				break
			}
			s.words = append(s.words, t.text)
			p.pos++
		}
		if p.pos < len(p.toks) && p.toks[p.pos].text == "{" {
			p.pos++
			block, err := p.block(depth+1, s.line)
			if err != nil {
				return nil, err
			}
			s.block, s.hasBlock = block, true
		}
		out = append(out, s)
	}
}

// build interprets the top-level statements.
func build(stmts []stmt) (*Config, error) {
	c := &Config{}
	k := newChecker()
	for _, s := range stmts {
		switch s.words[0] {
		case "bridge":
			b, err := buildBridge(k, s)
			if err != nil {
				return nil, err
			}
			c.Bridges = append(c.Bridges, b)
		default:
			return nil, errAt(s.line, "unknown statement %q (want bridge)", s.words[0])
		}
	}
	if line, err := k.end(c); err != nil {
		return nil, wrapAt(line, err)
	}
	return c, nil
}

func buildBridge(k *checker, s stmt) (Bridge, error) {
	if len(s.words) != 2 || !s.hasBlock {
		return Bridge{}, errAt(s.line, "want \"bridge NAME {\", got %q", strings.Join(s.words, " "))
	}
	b := NewBridge(s.words[1])
	if err := k.bridge(b.Name, s.line); err != nil {
		return Bridge{}, wrapAt(s.line, err)
	}
	seen := map[string]int{} // settings given once: keyword → line
	once := func(st stmt) error {
		if first, ok := seen[st.words[0]]; ok {
			return errAt(st.line, "%s given twice (first on line %d)", st.words[0], first)
		}
		seen[st.words[0]] = st.line
		return nil
	}
	for _, st := range s.block {
		if st.hasBlock {
			return Bridge{}, errAt(st.line, "%s: unexpected block inside bridge %s", st.words[0], b.Name)
		}
		args := st.words[1:]
		switch kw := st.words[0]; kw {
		case "local":
			if err := once(st); err != nil {
				return Bridge{}, err
			}
			if len(args) > 1 {
				return Bridge{}, errAt(st.line, "want \"local [MAC]\", got %q", strings.Join(st.words, " "))
			}
			b.Local = true
			if len(args) == 1 {
				m, err := frame.ParseMAC(args[0])
				if err != nil {
					return Bridge{}, errAt(st.line, "local: %v", err)
				}
				if err := checkUnicast("local", m); err != nil {
					return Bridge{}, wrapAt(st.line, err)
				}
				b.LocalMAC = m
			}
		case "timeout", "maxaddr":
			if err := once(st); err != nil {
				return Bridge{}, err
			}
			if len(args) != 1 {
				return Bridge{}, errAt(st.line, "want \"%s NUMBER\", got %q", kw, strings.Join(st.words, " "))
			}
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return Bridge{}, errAt(st.line, "%s: %q is not a number", kw, args[0])
			}
			if kw == "timeout" {
				err, b.Timeout = CheckTimeout(n), n
			} else {
				err, b.MaxAddr = CheckMaxAddr(n), n
			}
			if err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
		case "port":
			if len(args) == 0 {
				return Bridge{}, errAt(st.line, "want \"port IFACE [FLAG...]\"")
			}
			p, err := parsePort(args)
			if err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			if err := k.member(b.Name, "port", p.Name, st.line); err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			b.Ports = append(b.Ports, p)
		case "span":
			if len(args) != 1 {
				return Bridge{}, errAt(st.line, "want \"span IFACE\", got %q", strings.Join(st.words, " "))
			}
			if err := k.member(b.Name, "span", args[0], st.line); err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			b.Spans = append(b.Spans, args[0])
		case "static":
			sa, err := parseStatic(args)
			if err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			if err := k.static(&b, sa, st.line); err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			b.Statics = append(b.Statics, sa)
		default:
			return Bridge{}, errAt(st.line, "unknown setting %q in bridge %s (want local, timeout, maxaddr, port, span or static)", kw, b.Name)
		}
	}
	if line, err := k.endBridge(&b); err != nil {
		return Bridge{}, wrapAt(line, err)
	}
	return b, nil
}

// portFlags are the flag words of a port statement; "-flag" turns a flag off.
var portFlags = []string{"learning", "discover", "blocknonip", "stack"}

func parsePort(args []string) (Port, error) {
	p := NewPort(args[0])
	if err := CheckName("interface", p.Name); err != nil {
		return Port{}, fmt.Errorf("port: %w", err)
	}
	given := map[string]bool{}
	for _, w := range args[1:] {
		name, on := strings.CutPrefix(w, "-")
		var field *bool
		switch name {
		case "learning":
			field = &p.Learning
		case "discover":
			field = &p.Discover
		case "blocknonip":
			field = &p.BlockNonIP
		case "stack":
			field = &p.Stack
		default:
			return Port{}, fmt.Errorf("port %s: unknown flag %q (want %s, each optionally prefixed by \"-\")", p.Name, w, strings.Join(portFlags, ", "))
		}
		if given[name] {
			return Port{}, fmt.Errorf("port %s: flag %s given twice", p.Name, name)
		}
		given[name] = true
		*field = !on
	}
	return p, nil
}

func parseStatic(args []string) (Static, error) {
	if len(args) != 2 && !(len(args) == 4 && args[2] == "vlan") {
		return Static{}, fmt.Errorf("want \"static MAC IFACE [vlan N]\", got %q", strings.Join(append([]string{"static"}, args...), " "))
	}
	m, err := frame.ParseMAC(args[0])
	if err != nil {
		return Static{}, fmt.Errorf("static: %v", err)
	}
	s := Static{MAC: m, Port: args[1]}
	if len(args) == 4 {
		v, err := strconv.Atoi(args[3])
		if err != nil {
			return Static{}, fmt.Errorf("static %s: vlan %q is not a number", m, args[3])
		}
		if err := CheckVLAN(v); err != nil {
			return Static{}, fmt.Errorf("static %s: %w", m, err)
		}
		s.VLAN = uint16(v)
	}
	return s, nil
}
