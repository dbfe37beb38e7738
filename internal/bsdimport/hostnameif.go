package bsdimport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/swctl/swctl/internal/config"
)

// openbsdKinds maps an OpenBSD interface driver to what it becomes, and
// the words its hostname.if file may hold.
var openbsdKinds = map[string]struct {
	kind  objectKind
	words map[string]keyword
}{
	"bridge": {kindBridge, openbsdBridgeWords},
	"veb":    {kindBridge, openbsdBridgeWords},
	"trunk":  {kindTrunk, openbsdTrunkWords},
	"aggr":   {kindTrunk, openbsdTrunkWords},
}

// HostnameIf imports an OpenBSD hostname.if(5) file. The base name of
// path, "hostname." and an interface name, names the bridge (bridgeN,
// vebN) or trunk (trunkN, aggrN, which is always lacp) it configures;
// lines of any other interface are noted, not imported. The error is for
// a file that cannot be read, a line longer than MaxLineLen, or a name
// that is not hostname.IF.
func (im *Importer) HostnameIf(r io.Reader, path string) error {
	ifname, ok := strings.CutPrefix(filepath.Base(path), "hostname.")
	if !ok || ifname == "" {
		return fmt.Errorf("%s: not a hostname.if(5) file (want hostname.IFNAME, such as hostname.bridge0)", path)
	}
	im.read(path)
	driver := strings.TrimRight(ifname, "0123456789")
	k, known := openbsdKinds[driver]
	skip := ""
	switch {
	case !known || driver == ifname:
		skip = fmt.Sprintf("not translated: %s is not a bridge(4), veb(4), trunk(4) or aggr(4) interface", ifname)
	default:
		skip = im.declare(k.kind, ifname)
		if skip == "" && driver == "aggr" {
			im.trunk(ifname).Proto = config.ProtoLACP
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxLineLen)
	line := 0
	for sc.Scan() {
		line++
		at := place{path, line}
		words, err := splitWords(sc.Text())
		text := strings.TrimSpace(sc.Text())
		switch {
		case len(words) == 0 && err == nil:
		case skip != "":
			im.note(at, text, skip)
		case strings.HasPrefix(text, "!"):
			im.note(at, text, "not translated: a shell command, run by netstart(8)")
		case err != nil:
			im.note(at, text, "not translated: "+err.Error())
		default:
			im.apply(object{kind: k.kind, name: ifname, at: at}, words, k.words)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes", path, line+1, MaxLineLen)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// splitWords splits a hostname.if line into words as the shell that runs
// ifconfig would: on blanks, with "double" and 'single' quotes keeping
// blanks in a word, and a # at the start of a word starting a comment.
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
