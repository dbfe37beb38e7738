package main

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/stp"
)

// The manual pages, relative to this package.
const (
	swctlPage = "../../docs/man/swctl.8"
	confPage  = "../../docs/man/swctl.conf.5"
)

// manPage is an mdoc source split into lines.
type manPage struct {
	// path is the file it was read from.
	path string
	// lines are its lines.
	lines []string
}

func readManPage(t *testing.T, path string) manPage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return manPage{path: path, lines: strings.Split(string(b), "\n")}
}

// macroWord matches an mdoc macro name used inside a line (Op, Ar, Fl, Cm).
var macroWord = regexp.MustCompile(`^[A-Z][a-z][a-z]?$`)

// manItem is one top-level item of a section's tag lists.
type manItem struct {
	// words are the words the item's head gives to Cm: the command path.
	words []string
	// line is the line of its .It, 1-based.
	line int
	// body holds the item's lines, its head included.
	body []string
}

// items returns the items of the first-level lists of section sh, in
// order. An item's head is ".It Xo" followed by ".Cm words ..." or
// ".It Cm words ...".
func (m manPage) items(sh string) []manItem {
	var out []manItem
	in, depth := false, 0
	for i, l := range m.lines {
		if rest, ok := strings.CutPrefix(l, ".Sh "); ok {
			in = rest == sh
			continue
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(l, ".Bl "):
			depth++
		case l == ".El":
			depth--
		case strings.HasPrefix(l, ".It") && depth == 1:
			head := l
			if l == ".It Xo" && i+1 < len(m.lines) {
				head = m.lines[i+1]
			}
			out = append(out, manItem{words: macroArgs(head, "Cm"), line: i + 1})
			continue
		}
		if len(out) > 0 && depth >= 1 {
			out[len(out)-1].body = append(out[len(out)-1].body, l)
		}
	}
	return out
}

// macroArgs returns the words that follow the macro name in a macro line
// until the next macro (".Cm bridge add Op Fl o" gives bridge, add for
// Cm), for every occurrence of the macro.
func macroArgs(line, name string) []string {
	if !strings.HasPrefix(line, ".") {
		return nil
	}
	var out []string
	words := strings.Fields(strings.TrimPrefix(line, "."))
	for i := 0; i < len(words); i++ {
		if words[i] != name {
			continue
		}
		for i+1 < len(words) && !macroWord.MatchString(words[i+1]) {
			i++
			if w := strings.Trim(words[i], ",;:.()|"); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// flagNames returns every flag name the lines mention with Fl: "-workers"
// gives "workers", "o" gives "o".
func flagNames(lines []string) map[string]bool {
	out := map[string]bool{}
	for _, l := range lines {
		for _, w := range macroArgs(l, "Fl") {
			out[strings.TrimPrefix(w, "-")] = true
		}
	}
	return out
}

// leafCommand is a command of the CLI that does something, not a group.
type leafCommand struct {
	// path is its name and its parents' names: "bridge add".
	path string
	// flags are its visible flags.
	flags []cli.Flag
}

// leafCommands walks the command tree and returns every visible command
// without subcommands.
func leafCommands(cmds []*cli.Command, parent string) []leafCommand {
	var out []leafCommand
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		path := strings.TrimSpace(parent + " " + c.Name)
		if len(c.Subcommands) > 0 {
			out = append(out, leafCommands(c.Subcommands, path)...)
			continue
		}
		out = append(out, leafCommand{path: path, flags: visibleFlags(c.Flags)})
	}
	return out
}

// TestManPageCoversCLI checks swctl(8) against the command tree: each
// command that does something has an item in COMMANDS whose head names
// it, the item names each of its flags, every name of every flag appears
// in the page, and the page documents no command the program lacks.
func TestManPageCoversCLI(t *testing.T) {
	page := readManPage(t, swctlPage)
	app := newApp(io.Discard, io.Discard)
	items := map[string]manItem{}
	for _, it := range page.items("COMMANDS") {
		path := strings.Join(it.words, " ")
		if path == "" {
			t.Errorf("%s:%d: a COMMANDS item whose head names no command (want \".It Xo\" then \".Cm command ...\")", page.path, it.line)
			continue
		}
		items[path] = it
	}
	everywhere := flagNames(page.lines)
	leaves := leafCommands(app.Commands, "")
	if len(leaves) < 20 {
		t.Fatalf("the command tree has %d commands; expected the whole CLI (at least 20)", len(leaves))
	}
	for _, c := range leaves {
		it, ok := items[c.path]
		if !ok {
			t.Errorf("%s: command %q has no item in COMMANDS", page.path, c.path)
			continue
		}
		named := flagNames(it.body)
		for _, f := range c.flags {
			if !slices.ContainsFunc(f.Names(), func(n string) bool { return named[n] }) {
				t.Errorf("%s:%d: command %q: flag --%s is not named in its item", page.path, it.line, c.path, f.Names()[0])
			}
			for _, n := range f.Names() {
				if !everywhere[n] {
					t.Errorf("%s: command %q: flag name %q never appears with Fl", page.path, c.path, n)
				}
			}
		}
		delete(items, c.path)
	}
	for path, it := range items {
		t.Errorf("%s:%d: COMMANDS documents %q, which the program does not have", page.path, it.line, path)
	}
	for _, f := range append(visibleFlags(app.Flags), cli.HelpFlag) {
		for _, n := range f.Names() {
			if !everywhere[n] {
				t.Errorf("%s: global flag name %q never appears with Fl", page.path, n)
			}
		}
	}
}

// fullConfig is a configuration in which every field of every object
// differs from its default, so that Format writes every keyword and
// flag. TestManPageCoversConfig checks that it does (by reflection), so
// that a new setting cannot be missed.
func fullConfig(t *testing.T) *config.Config {
	mac := func(s string) frame.MAC {
		m, err := frame.ParseMAC(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	port := config.Port{Name: "P1", Learning: false, Discover: false, BlockNonIP: true, Stack: true, NoPromisc: true,
		STP: &config.PortSTP{Edge: true, PTP: stp.PTPOff, Priority: 16, Cost: 1}, StormLimit: 10, BPDUGuard: true}
	c := &config.Config{
		Bridges: []config.Bridge{{
			Name: "BR", Local: true, LocalMAC: mac("02:00:00:00:00:01"), Timeout: 1, MaxAddr: 2,
			Ports:   []config.Port{port},
			Spans:   []string{"S1"},
			Statics: []config.Static{{MAC: mac("02:00:00:00:00:02"), VLAN: 3, Port: "P1"}},
			STP:     &config.STP{On: true, Proto: stp.STP, Priority: 0, HelloTime: 1, FwdDelay: 4, MaxAge: 6, HoldCount: 1},
			FwdMask: 0x4000,
		}},
		Trunks: []config.Trunk{{
			Name: "TR", Proto: config.ProtoLACP, LLAddr: mac("02:00:00:00:00:03"), Promisc: true,
			Hash: "l2,l3", LACPMode: config.LACPPassive, LACPTimeout: config.LACPFast,
			LACPSystemPriority: 4, LACPKey: 5,
			UpDelay: 8, DownDelay: 9, MinLinks: 2, NoPreempt: true,
			Queue: config.TrunkQueue{TxQueueBytes: 65536, TxQueueDelay: 5, TxQueueTarget: config.QueueOff, SuperFrames: true, SendBuffer: 1 << 20},
			Ports: []config.TrunkPort{{Name: "T1", Priority: 6, LACPPortPriority: 7}},
		}},
		LBs: []config.LB{{
			Name: "LB", Iface: "L1", VIPs: []netip.Addr{netip.MustParseAddr("192.0.2.100")}, Method: "hash",
			Health: "http:80/x", Interval: 3 * time.Second, Timeout: time.Second, Rise: 1, Fall: 5,
			Sources:  []netip.Addr{netip.MustParseAddr("192.0.2.1")},
			Backends: []config.LBBackend{{Addr: netip.MustParseAddr("192.0.2.11"), Weight: 2, Drain: true}},
		}, {Name: "LB2", Bridge: "BR", VIPs: []netip.Addr{netip.MustParseAddr("2001:db8::1")}, Method: "roundrobin", Health: "arp"}},
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("the full configuration is not valid: %v", err)
	}
	defaults := []struct {
		got, def any
	}{
		{c.Bridges[0], config.NewBridge("BR")},
		{c.Bridges[0].Ports[0], config.NewPort("P1")},
		{c.Bridges[0].Statics[0], config.Static{Port: "P1"}},
		{c.Trunks[0], config.NewTrunk("TR")},
		{c.Trunks[0].Ports[0], config.NewTrunkPort("T1")},
	}
	for _, d := range defaults {
		got, def := reflect.ValueOf(d.got), reflect.ValueOf(d.def)
		for i := range got.NumField() {
			name := got.Type().Field(i).Name
			if name == "Name" || name == "Port" {
				continue
			}
			if reflect.DeepEqual(got.Field(i).Interface(), def.Field(i).Interface()) {
				t.Errorf("fullConfig: %s.%s has its default value; give it another so that its keyword is checked", got.Type().Name(), name)
			}
		}
	}
	return c
}

// TestManPageCoversConfig checks swctl.conf(5) against the configuration
// package: every keyword, flag and value word that Format writes for a
// configuration using every setting, and every protocol, is named in the
// page with Ic or Cm.
func TestManPageCoversConfig(t *testing.T) {
	page := readManPage(t, confPage)
	named := map[string]bool{}
	for _, l := range page.lines {
		for _, m := range []string{"Ic", "Cm"} {
			for _, w := range macroArgs(l, m) {
				named[strings.TrimPrefix(w, "-")] = true
			}
		}
	}
	keyword := regexp.MustCompile(`^-?[a-z][a-z0-9-]*$`)
	var words []string
	for _, l := range strings.Split(string(fullConfig(t).Format()), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		for _, f := range strings.Fields(l) {
			for w := range strings.SplitSeq(f, ",") {
				if keyword.MatchString(w) {
					words = append(words, strings.TrimPrefix(w, "-"))
				}
			}
		}
	}
	words = append(words, config.Protos...)
	if len(words) < 20 {
		t.Fatalf("Format wrote %d keywords (%v); expected every setting", len(words), words)
	}
	for _, w := range words {
		if !named[w] {
			t.Errorf("%s: configuration word %q is not named with Ic or Cm", page.path, w)
		}
	}
}

// TestManPageConfigExamples parses every literal block of swctl.conf(5)'s
// EXAMPLES section with the daemon's parser.
func TestManPageConfigExamples(t *testing.T) {
	page := readManPage(t, confPage)
	var blocks []string
	in, lit := false, false
	var cur []string
	for _, l := range page.lines {
		switch {
		case strings.HasPrefix(l, ".Sh "):
			in = l == ".Sh EXAMPLES"
		case in && strings.HasPrefix(l, ".Bd -literal"):
			lit, cur = true, nil
		case in && lit && l == ".Ed":
			lit = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in && lit:
			cur = append(cur, strings.ReplaceAll(l, `\e`, `\`))
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("%s: no literal blocks in EXAMPLES", page.path)
	}
	for i, b := range blocks {
		if _, err := config.Parse(strings.NewReader(b), "example"); err != nil {
			t.Errorf("%s: EXAMPLES block %d does not parse: %v\n%s", page.path, i+1, err, b)
		}
	}
}

// TestManPagesLint runs mandoc's linter over every manual page: it must
// report nothing at the warning level.
func TestManPagesLint(t *testing.T) {
	netnstest.RequireTool(t, "mandoc", "mandoc")
	for _, p := range []string{swctlPage, confPage} {
		var out bytes.Buffer
		cmd := exec.Command("mandoc", "-T", "lint", "-W", "warning", p)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err != nil || out.Len() > 0 {
			t.Errorf("mandoc -T lint -W warning %s: expected no report, got %v:\n%s", p, err, out.String())
		}
	}
}
