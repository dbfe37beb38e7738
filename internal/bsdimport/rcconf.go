package bsdimport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/swctl/swctl/internal/config"
)

// rcVar is the last assignment of one rc.conf variable.
type rcVar struct {
	// value is its value, quotes removed and variables expanded.
	value string
	// at is where it was assigned.
	at place
	// text is the assignment as written.
	text string
	// broken says why the value could not be read ("" when it was).
	broken string
}

// rcVars are the variables of the rc.conf files read so far.
type rcVars struct {
	// vars maps a name to its last assignment.
	vars map[string]rcVar
	// order lists the names in the order they were first assigned.
	order []string
}

func (v *rcVars) set(name string, rv rcVar) {
	if _, ok := v.vars[name]; !ok {
		v.order = append(v.order, name)
	}
	v.vars[name] = rv
}

// errIncomplete is splitAssignment's error for text that ends inside
// quotes or after a backslash: the end of the file cut the statement.
var errIncomplete = errors.New("unterminated quote or line continuation at the end of the file")

// RCConf reads a FreeBSD rc.conf(5) file (or rc.conf.local) as sh would
// read its assignments: quotes, \ continuations and $NAME or ${NAME}
// expansions of earlier assignments are followed; other sh code is not
// run. The bridges and laggs are imported by Result, once every rc.conf
// file has been read, so that a later file can change an earlier one's
// settings, as on FreeBSD. The error is for a file that cannot be read or
// a line longer than MaxLineLen.
func (im *Importer) RCConf(r io.Reader, path string) error {
	im.read(path)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxLineLen)
	line, start := 0, 0
	var text strings.Builder
	var q shQuote
	for sc.Scan() {
		line++
		if text.Len() == 0 {
			start = line
		} else {
			text.WriteByte('\n')
			q.feed("\n")
		}
		text.WriteString(sc.Text())
		q.feed(sc.Text())
		if text.Len() > MaxLineLen {
			return fmt.Errorf("%s:%d: statement longer than %d bytes", path, start, MaxLineLen)
		}
		if !q.open() {
			im.rcStatement(place{path, start}, text.String())
			text.Reset()
			q = shQuote{}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes", path, line+1, MaxLineLen)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if text.Len() > 0 {
		im.rcStatement(place{path, start}, text.String())
	}
	return nil
}

// shQuote follows sh's quoting through a statement, line by line, to
// tell whether it ends inside quotes or after a backslash, where the next
// line continues it.
type shQuote struct {
	// quote is the open quote, or 0.
	quote byte
	// escaped is set after a backslash outside single quotes.
	escaped bool
	// inWord is set inside a word, where # does not start a comment.
	inWord bool
}

// feed follows s, the next piece of the statement.
func (q *shQuote) feed(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q.escaped:
			q.escaped = false
		case q.quote == '\'':
			if c == '\'' {
				q.quote = 0
			}
		case c == '\\':
			q.escaped = true
		case c == '"':
			q.quote ^= '"'
		case q.quote != 0:
		case c == '\'':
			q.quote = '\''
		case c == '#' && !q.inWord:
			return // a comment, to the end of the line
		}
		q.inWord = q.quote != 0 || !strings.ContainsRune(" \t\n;&|", rune(c))
	}
}

// open reports whether the statement continues on the next line.
func (q *shQuote) open() bool { return q.quote != 0 || q.escaped }

// rcName matches a variable assignment's name and its "=".
var rcName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// rcStatement records the assignment in text, a statement starting at
// at; text may end inside quotes at the end of a file, which is noted.
func (im *Importer) rcStatement(at place, text string) {
	trimmed := strings.TrimLeft(text, " \t")
	if trimmed == "" || trimmed[0] == '#' {
		return
	}
	loc := rcName.FindStringIndex(trimmed)
	if loc == nil {
		// Not an assignment: sh code, which is not run. Only code that
		// mentions what the import reads is worth a note.
		for _, w := range []string{"cloned_interfaces", "ifconfig_", "create_args_", "autobridge_"} {
			if strings.Contains(trimmed, w) {
				im.note(at, strings.TrimSpace(trimmed), "not translated: sh code, which swctl config import does not run")
				break
			}
		}
		return
	}
	name := trimmed[:loc[1]-1]
	value, rest, err := splitAssignment(trimmed[loc[1]:], im.rc.vars)
	rv := rcVar{value: value, at: at, text: strings.TrimSpace(trimmed)}
	switch rest = strings.TrimLeft(rest, " \t"); {
	case err != nil:
		rv.broken = "not translated: " + err.Error()
	case rest != "" && rest[0] != '#':
		rv.broken = "not translated: more sh code after the assignment, which swctl config import does not run"
	}
	im.rc.set(name, rv)
}

// splitAssignment reads the value of an assignment up to the first blank
// outside quotes, as sh does: 'single' quotes keep everything, "double"
// quotes and bare text expand $NAME and ${NAME} from vars and take \ as
// an escape; a backslash before a newline joins the lines. It returns the
// value and the text after it.
func splitAssignment(s string, vars map[string]rcVar) (value, rest string, err error) {
	var out strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if out.Len() > MaxLineLen {
			return "", "", fmt.Errorf("value longer than %d bytes after expansion", MaxLineLen)
		}
		switch {
		case quote == '\'' && c == '\'':
			quote = 0
		case quote == '\'':
			out.WriteByte(c)
		case c == '\\':
			if i+1 == len(s) {
				return "", "", errIncomplete
			}
			i++
			if s[i] == '\n' {
				continue
			}
			if quote == '"' && !strings.ContainsRune("$`\"\\", rune(s[i])) {
				out.WriteByte('\\')
			}
			out.WriteByte(s[i])
		case c == '"':
			quote ^= '"'
		case c == '\'' && quote == 0:
			quote = '\''
		case c == '$':
			n, v, err := expand(s[i:], vars)
			if err != nil {
				return "", "", err
			}
			out.WriteString(v)
			i += n - 1
		case c == '`':
			return "", "", errors.New("command substitution, which swctl config import does not run")
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|'):
			return out.String(), s[i:], nil
		default:
			out.WriteByte(c)
		}
	}
	if quote != 0 {
		return "", "", errIncomplete
	}
	return out.String(), "", nil
}

// rcVarRef matches $NAME and ${NAME}.
var rcVarRef = regexp.MustCompile(`^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})`)

// expand reads the expansion at the start of s ("$NAME" or "${NAME}";
// a lone "$" is itself) and returns its length and value.
func expand(s string, vars map[string]rcVar) (int, string, error) {
	m := rcVarRef.FindStringSubmatch(s)
	switch {
	case m != nil:
		return len(m[0]), vars[m[1]+m[2]].value, nil
	case len(s) == 1 || strings.ContainsRune(" \t\n\"", rune(s[1])):
		return 1, "$", nil
	}
	return 0, "", fmt.Errorf("the sh expansion %q, which swctl config import does not follow", s[:min(len(s), 8)])
}

// rcObject matches the variables that name a bridge or lagg by its
// original name: its ifconfig words and its create_args.
var rcObject = regexp.MustCompile(`^(?:ifconfig|create_args)_((?:bridge|lagg)[0-9]+)$`)

// rcKind returns what a FreeBSD interface becomes, by its driver.
func rcKind(ifname string) (objectKind, map[string]keyword, bool) {
	switch driver := strings.TrimRight(ifname, "0123456789"); {
	case driver == ifname:
		return 0, nil, false
	case driver == "bridge":
		return kindBridge, freebsdBridgeWords, true
	case driver == "lagg":
		return kindTrunk, freebsdLaggWords, true
	}
	return 0, nil, false
}

// applyRC imports the bridges and laggs of the rc.conf files read: those
// in cloned_interfaces, then any other with ifconfig_ or create_args_
// words, each under its ifconfig_IF_name if renamed, applying its
// create_args_IF and then its ifconfig_IF words, and noting its other
// ifconfig_IF_* variables.
func (im *Importer) applyRC() {
	vars := im.rc.vars
	var origs []string
	cloned, ok := vars["cloned_interfaces"]
	if ok && im.rcUsable("cloned_interfaces", cloned) {
		for _, ifname := range strings.Fields(cloned.value) {
			if _, _, ok := rcKind(ifname); !ok {
				im.note(cloned.at, ifname, "not translated: not a bridge or lagg; swctl does not create other interfaces")
				continue
			}
			if !slices.Contains(origs, ifname) {
				origs = append(origs, ifname)
			}
		}
	}
	for _, name := range im.rc.order {
		if m := rcObject.FindStringSubmatch(name); m != nil && !slices.Contains(origs, m[1]) {
			origs = append(origs, m[1])
		}
	}
	// The ifconfig_IF_* variables of each interface, in order.
	more := map[string][]string{}
	for _, name := range im.rc.order {
		if rest, ok := strings.CutPrefix(name, "ifconfig_"); ok {
			if ifname, suffix, ok := strings.Cut(rest, "_"); ok && suffix != "name" {
				more[ifname] = append(more[ifname], name)
			}
		}
	}
	renamed := map[string]bool{}
	for _, orig := range origs {
		final := orig
		if v, ok := vars["ifconfig_"+orig+"_name"]; ok && im.rcUsable("ifconfig_"+orig+"_name", v) {
			if err := config.CheckName("interface", v.value); err != nil {
				im.note(v.at, v.text, "not translated: "+err.Error())
			} else {
				final = v.value
				renamed[orig] = final != orig
			}
		}
		im.applyRCObject(orig, final, more[final])
	}
	for _, name := range im.rc.order {
		v := vars[name]
		if strings.HasPrefix(name, "autobridge_") {
			im.note(v.at, v.text, "not supported: swctl adds members by name, not by pattern; list them in the bridge")
			continue
		}
		ifname, ok := strings.CutPrefix(name, "ifconfig_")
		ifname, _, _ = strings.Cut(ifname, "_")
		if ok && renamed[ifname] && name != "ifconfig_"+ifname+"_name" {
			im.note(v.at, v.text, "not read: FreeBSD reads the settings of a renamed interface under its new name")
		}
	}
}

// rcUsable reports whether v, the variable name, could be read, and notes
// why not when it could not.
func (im *Importer) rcUsable(name string, v rcVar) bool {
	if v.broken != "" {
		im.note(v.at, v.text, v.broken)
		return false
	}
	return true
}

// applyRCObject imports the bridge or lagg orig, named final, whose
// ifconfig_FINAL_* variables are more.
func (im *Importer) applyRCObject(orig, final string, more []string) {
	vars := im.rc.vars
	kind, words, _ := rcKind(orig)
	first := place{}
	for _, name := range []string{"create_args_" + orig, "ifconfig_" + final, "cloned_interfaces"} {
		if v, ok := vars[name]; ok && first.file == "" {
			first = v.at
		}
	}
	if why := im.declare(kind, final); why != "" {
		im.note(first, final, why)
		return
	}
	for _, name := range []string{"create_args_" + orig, "ifconfig_" + final} {
		if v, ok := vars[name]; ok && im.rcUsable(name, v) {
			im.apply(object{kind: kind, name: final, at: v.at}, strings.Fields(v.value), words)
		}
	}
	for _, name := range more {
		suffix := strings.TrimPrefix(name, "ifconfig_"+final+"_")
		v := vars[name]
		o := object{kind: kind, name: final, at: v.at}
		switch {
		case v.broken != "":
			im.note(v.at, v.text, v.broken)
		case suffix == "ipv6" || suffix == "aliases" || strings.HasPrefix(suffix, "alias"):
			im.hostAddress(o, v.text)
		case suffix == "descr":
			im.note(v.at, v.text, reasonDescr)
		default:
			im.note(v.at, v.text, reasonUnknown)
		}
	}
}
