package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/bridge"
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
// configuration, not an error. path must be a regular file itself: a
// symbolic link is refused (the daemon saves by renaming a new file over
// path, which would replace the link, and a parse error would show the
// linked file's lines), and so are a FIFO and a device, without blocking
// on them.
func Load(path string) (*Config, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		// O_NOFOLLOW fails with ELOOP on Linux and OpenBSD, EMLINK on
		// FreeBSD.
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, &Error{File: path, Err: errors.New("is a symbolic link (give the file's own path: the daemon replaces the file when it saves)")}
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{File: path, Err: fmt.Errorf("not a regular file but %s", fileKind(st.Mode()))}
	}
	return Parse(f, path)
}

// fileKind names the kind of file m describes, for an error.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
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
		case "trunk":
			t, err := buildTrunk(k, s)
			if err != nil {
				return nil, err
			}
			c.Trunks = append(c.Trunks, t)
		case "lb":
			l, err := buildLB(s)
			if err != nil {
				return nil, err
			}
			c.LBs = append(c.LBs, l)
		default:
			return nil, errAt(s.line, "unknown statement %q (want bridge, trunk or lb)", s.words[0])
		}
	}
	if line, err := k.end(c); err != nil {
		return nil, wrapAt(line, err)
	}
	if err := c.checkLBs(); err != nil {
		return nil, err
	}
	return c, nil
}

func buildBridge(k *checker, s stmt) (Bridge, error) {
	if len(s.words) != 2 || !s.hasBlock {
		return Bridge{}, errAt(s.line, "want \"bridge NAME {\", got %q", strings.Join(s.words, " "))
	}
	b := NewBridge(s.words[1])
	if err := k.object("bridge", b.Name, s.line); err != nil {
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
				if err := CheckUnicast("local", m); err != nil {
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
		case "stp":
			if err := once(st); err != nil {
				return Bridge{}, err
			}
			s, err := parseSTP(args)
			if err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			b.setSTP(s)
		case "fwd-mask":
			if err := once(st); err != nil {
				return Bridge{}, err
			}
			if len(args) != 1 {
				return Bridge{}, errAt(st.line, "want \"fwd-mask MASK\", got %q", strings.Join(st.words, " "))
			}
			m, err := ParseFwdMask(args[0])
			if err != nil {
				return Bridge{}, wrapAt(st.line, err)
			}
			b.FwdMask = m
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
			return Bridge{}, errAt(st.line, "unknown setting %q in bridge %s (want local, timeout, maxaddr, stp, fwd-mask, port, span or static)", kw, b.Name)
		}
	}
	if line, err := k.endBridge(&b); err != nil {
		return Bridge{}, wrapAt(line, err)
	}
	return b, nil
}

// onceChecker returns a function that refuses a setting given twice in one
// block, naming the line of the first.
func onceChecker() func(st stmt) error {
	seen := map[string]int{} // keyword → line
	return func(st stmt) error {
		if first, ok := seen[st.words[0]]; ok {
			return errAt(st.line, "%s given twice (first on line %d)", st.words[0], first)
		}
		seen[st.words[0]] = st.line
		return nil
	}
}

// trunkSettings are the keywords of a trunk block, in the order errors
// list them.
const trunkSettings = "proto, lladdr, promisc, hash, lacp-mode, lacp-timeout, lacp-system-priority, lacp-key, updelay, downdelay, min-links, preempt, tx-queue-bytes, tx-queue-delay, tx-queue-target, tx-queue-super-frames, send-buffer or port"

func buildTrunk(k *checker, s stmt) (Trunk, error) {
	if len(s.words) != 2 || !s.hasBlock {
		return Trunk{}, errAt(s.line, "want \"trunk NAME {\", got %q", strings.Join(s.words, " "))
	}
	t := NewTrunk(s.words[1])
	if err := k.object("trunk", t.Name, s.line); err != nil {
		return Trunk{}, wrapAt(s.line, err)
	}
	once := onceChecker()
	for _, st := range s.block {
		if st.hasBlock {
			return Trunk{}, errAt(st.line, "%s: unexpected block inside trunk %s", st.words[0], t.Name)
		}
		kw, args := st.words[0], st.words[1:]
		// one checks a setting given once with exactly one value.
		one := func() error {
			if err := once(st); err != nil {
				return err
			}
			if len(args) != 1 {
				return errAt(st.line, "want \"%s VALUE\", got %q", kw, strings.Join(st.words, " "))
			}
			return nil
		}
		var err error
		switch kw {
		case "proto":
			if err = one(); err == nil {
				t.Proto = args[0]
				err = CheckProto(t.Proto)
			}
		case "lladdr":
			if err = one(); err == nil {
				var m frame.MAC
				if m, err = frame.ParseMAC(args[0]); err != nil {
					err = fmt.Errorf("lladdr: %v", err)
				} else if err = CheckUnicast("lladdr", m); err == nil {
					t.LLAddr = m
				}
			}
		case "promisc":
			if err = once(st); err == nil {
				if len(args) != 0 {
					return Trunk{}, errAt(st.line, "want \"promisc\", got %q", strings.Join(st.words, " "))
				}
				t.Promisc = true
			}
		case "hash":
			if err = one(); err == nil {
				t.Hash, err = CanonicalHash(args[0])
			}
		case "lacp-mode":
			if err = one(); err == nil {
				t.LACPMode = args[0]
				err = CheckLACPMode(t.LACPMode)
			}
		case "lacp-timeout":
			if err = one(); err == nil {
				t.LACPTimeout = args[0]
				err = CheckLACPTimeout(t.LACPTimeout)
			}
		case "lacp-system-priority", "lacp-key":
			if err = one(); err == nil {
				var n int
				if n, err = parseNumber(kw, args[0]); err == nil {
					if kw == "lacp-key" {
						t.LACPKey = n
					} else {
						t.LACPSystemPriority = n
					}
				}
			}
		case "updelay", "downdelay", "min-links":
			if err = one(); err == nil {
				var n int
				if n, err = strconv.Atoi(args[0]); err != nil {
					err = fmt.Errorf("%s: %q is not a number", kw, args[0])
				} else {
					switch kw {
					case "updelay":
						t.UpDelay, err = n, CheckDelay(kw, n)
					case "downdelay":
						t.DownDelay, err = n, CheckDelay(kw, n)
					default:
						t.MinLinks, err = n, CheckMinLinks(n)
					}
				}
			}
		case "preempt":
			if err = one(); err == nil {
				var on bool
				on, err = ParseOnOff(kw, args[0])
				t.NoPreempt = !on
			}
		case "tx-queue-bytes", "tx-queue-delay", "tx-queue-target", "tx-queue-super-frames", "send-buffer":
			if err = one(); err == nil {
				err = t.Queue.Set(kw, args[0])
			}
		case "port":
			if len(args) == 0 {
				return Trunk{}, errAt(st.line, "want \"port IFACE [priority N] [lacp-port-priority N]\"")
			}
			var p TrunkPort
			if p, err = parseTrunkPort(args); err == nil {
				if err = k.trunkPort(t.Name, p.Name, st.line); err == nil {
					t.Ports = append(t.Ports, p)
				}
			}
		default:
			return Trunk{}, errAt(st.line, "unknown setting %q in trunk %s (want %s)", kw, t.Name, trunkSettings)
		}
		if err != nil {
			var le *lineErr
			if errors.As(err, &le) {
				return Trunk{}, err
			}
			return Trunk{}, wrapAt(st.line, err)
		}
	}
	// The one check across statements: CoDel's target below the delay.
	if err := t.Queue.Check(); err != nil {
		return Trunk{}, wrapAt(s.line, fmt.Errorf("trunk %s: %w", t.Name, err))
	}
	return t, nil
}

// parseNumber parses the decimal value of a 16-bit setting (a priority or
// key) and checks its range; what names the setting.
func parseNumber(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", what, s)
	}
	return n, CheckPriority(what, n)
}

// parseTrunkPort parses "IFACE [priority N] [lacp-port-priority N]".
func parseTrunkPort(args []string) (TrunkPort, error) {
	p := NewTrunkPort(args[0])
	if err := CheckName("interface", p.Name); err != nil {
		return TrunkPort{}, fmt.Errorf("port: %w", err)
	}
	given := map[string]bool{}
	for rest := args[1:]; len(rest) > 0; rest = rest[2:] {
		opt := rest[0]
		var field *int
		switch opt {
		case "priority":
			field = &p.Priority
		case "lacp-port-priority":
			field = &p.LACPPortPriority
		default:
			return TrunkPort{}, fmt.Errorf("port %s: unknown option %q (want priority N or lacp-port-priority N)", p.Name, opt)
		}
		if len(rest) < 2 {
			return TrunkPort{}, fmt.Errorf("port %s: %s: missing value", p.Name, opt)
		}
		if given[opt] {
			return TrunkPort{}, fmt.Errorf("port %s: %s given twice", p.Name, opt)
		}
		given[opt] = true
		n, err := parseNumber(opt, rest[1])
		if err != nil {
			return TrunkPort{}, fmt.Errorf("port %s: %w", p.Name, err)
		}
		*field = n
	}
	return p, nil
}

// portFlags are the flag words of a port statement; "-flag" turns a flag off.
var portFlags = []string{"learning", "discover", "blocknonip", "stack", "promisc", "stp", "edge", "autoedge"}

func parsePort(args []string) (Port, error) {
	p := NewPort(args[0])
	if err := CheckName("interface", p.Name); err != nil {
		return Port{}, fmt.Errorf("port: %w", err)
	}
	given := map[string]bool{}
	st := p.STPSettings()
	for rest := args[1:]; len(rest) > 0; rest = rest[1:] {
		w := rest[0]
		name, on := strings.CutPrefix(w, "-")
		if given[name] {
			return Port{}, fmt.Errorf("port %s: flag %s given twice", p.Name, name)
		}
		n, err := parsePortSTP(p.Name, rest, &st)
		if err != nil {
			return Port{}, err
		}
		if n > 0 {
			given[name] = true
			rest = rest[n-1:]
			continue
		}
		if n, err := parsePortProtect(&p, rest); err != nil || n > 0 {
			if err != nil {
				return Port{}, err
			}
			given[name] = true
			rest = rest[n-1:]
			continue
		}
		var field *bool
		var promisc bool
		switch name {
		case "promisc":
			field, promisc = &p.NoPromisc, true
		case "learning":
			field = &p.Learning
		case "discover":
			field = &p.Discover
		case "blocknonip":
			field = &p.BlockNonIP
		case "stack":
			field = &p.Stack
		default:
			return Port{}, fmt.Errorf("port %s: unknown flag %q (want %s, each optionally prefixed by \"-\", or ptp auto|on|off, ifpriority N, ifcost N, storm-limit N, bpdu-guard on|off)", p.Name, w, strings.Join(portFlags, ", "))
		}
		given[name] = true
		*field = !on
		if promisc {
			*field = on
		}
	}
	if err := st.Check(); err != nil {
		return Port{}, fmt.Errorf("port %s: %w", p.Name, err)
	}
	p.setSTP(st)
	return p, nil
}

// parsePortProtect parses the storm-limit and bpdu-guard words at the
// start of args into p, and returns how many words it took: 0 for
// neither.
func parsePortProtect(p *Port, args []string) (int, error) {
	name := args[0]
	if name != "storm-limit" && name != "bpdu-guard" {
		return 0, nil
	}
	if len(args) < 2 {
		return 0, fmt.Errorf("port %s: %s: missing value", p.Name, name)
	}
	if name == "bpdu-guard" {
		on, err := ParseOnOff("bpdu-guard", args[1])
		if err != nil {
			return 0, fmt.Errorf("port %s: %w", p.Name, err)
		}
		p.BPDUGuard = on
		return 2, nil
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return 0, fmt.Errorf("port %s: storm-limit: %q is not a number", p.Name, args[1])
	}
	if err := checkStormLimit(n); err != nil {
		return 0, fmt.Errorf("port %s: %w", p.Name, err)
	}
	p.StormLimit = n
	return 2, nil
}

// checkStormLimit checks a port's storm limit, as the bridge will.
func checkStormLimit(n int) error { return bridge.CheckStormLimit(n) }

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
