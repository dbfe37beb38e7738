package main

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
)

// The shell completion scripts. Each one runs "swctl __complete -- WORD..."
// with the words of the command line up to the one being completed, and
// offers the lines it prints.
var (
	//go:embed completion/swctl.bash
	bashCompletion string
	//go:embed completion/swctl.zsh
	zshCompletion string
	//go:embed completion/swctl.fish
	fishCompletion string
)

// completeCommandName is the hidden command the completion scripts call.
const completeCommandName = "__complete"

// completeFiles is the line __complete prints alone when the word is a
// file name, for the shell to complete. No candidate starts with ':'
// (interface names cannot contain it).
const completeFiles = ":files"

// completeTimeout bounds the questions completion asks the daemon, so that
// a stuck daemon cannot hang the shell.
const completeTimeout = time.Second

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: `Prints a script that completes swctl's commands and flags, and the names
of the bridges, trunks and interfaces the running daemon knows. Load it
with, for example:

   source <(swctl completion bash)       # in ~/.bashrc
   swctl completion zsh > "${fpath[1]}/_swctl"
   swctl completion fish > ~/.config/fish/completions/swctl.fish`,
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 1, 1); err != nil {
				return err
			}
			script, ok := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[c.Args().First()]
			if !ok {
				return usagef("completion: unknown shell %q (want bash, zsh or fish)", c.Args().First())
			}
			_, err := fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// completeCommand is the hidden command behind the scripts. Its arguments
// are the words after "swctl", the last one the word being completed
// (empty at the start of a new word); it prints one candidate per line,
// or completeFiles. It never fails: without a daemon it offers commands,
// flags and fixed values only.
func completeCommand() *cli.Command {
	return &cli.Command{
		Name:            completeCommandName,
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			if len(words) > 0 && words[0] == "--" {
				words = words[1:]
			}
			if len(words) == 0 {
				words = []string{""}
			}
			ctx, cancel := context.WithTimeout(c.Context, completeTimeout)
			defer cancel()
			names := &daemonNames{socket: c.String("socket"), ctx: ctx}
			for _, s := range complete(c.App, words, names) {
				fmt.Fprintln(c.App.Writer, s)
			}
			return nil
		},
	}
}

// complete returns the candidates for the last of words, the words after
// "swctl" on the command line.
func complete(app *cli.App, words []string, names *daemonNames) []string {
	cur, done := words[len(words)-1], words[:len(words)-1]
	var cmd *cli.Command
	cmds, flags := app.Commands, app.Flags
	var path, args []string
	dashdash := false
	for i := 0; i < len(done); i++ {
		w := done[i]
		next := findCommand(cmds, w)
		switch {
		case dashdash:
			args = append(args, w)
		case w == "--":
			dashdash = true
		case strings.HasPrefix(w, "-") && w != "-":
			f := lookupFlag(flags, flagName(w))
			if f == nil {
				f = lookupFlag(app.Flags, flagName(w))
			}
			if f == nil || !takesValue(f) || strings.Contains(w, "=") {
				continue
			}
			if i+1 == len(done) {
				return filterPrefix(flagValues(f, path, args, names), cur)
			}
			i++
			if cmd == nil && flagName(w) == "socket" {
				names.socket = done[i]
			}
		case len(args) == 0 && next != nil && !next.Hidden:
			cmd, cmds, flags = next, next.Subcommands, next.Flags
			path = append(path, cmd.Name)
		default:
			args = append(args, w)
		}
	}
	if strings.HasPrefix(cur, "-") && !dashdash {
		return filterPrefix(flagWords(flags), cur)
	}
	if len(cmds) > 0 {
		if len(args) > 0 {
			return nil // an unknown command: nothing fits after it
		}
		var out []string
		for _, c := range visibleCommands(cmds) {
			out = append(out, c.Name)
		}
		return filterPrefix(out, cur)
	}
	if cmd == nil {
		return nil
	}
	return filterPrefix(argValues(cmd, path, args, names), cur)
}

// visibleCommands drops hidden commands.
func visibleCommands(cmds []*cli.Command) []*cli.Command {
	return slices.DeleteFunc(slices.Clone(cmds), func(c *cli.Command) bool { return c.Hidden })
}

// takesValue reports whether a flag is followed by a value.
func takesValue(f cli.Flag) bool {
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}

// flagWords returns how a flag list is typed: --name, or -n for one
// letter; then --help (which urfave/cli adds to a command's flags only
// once it runs).
func flagWords(flags []cli.Flag) []string {
	var out []string
	for _, f := range visibleFlags(flags) {
		if f == cli.HelpFlag {
			continue
		}
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	return append(out, "--help")
}

// visibleFlags drops hidden flags.
func visibleFlags(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		out = append(out, f)
	}
	return out
}

// fixedFlagValues are the values of flags that take one of a few words,
// by flag name.
var fixedFlagValues = map[string][]string{
	"output":       {"text", "json"},
	"proto":        config.Protos,
	"lacp-mode":    {config.LACPActive, config.LACPPassive},
	"lacp-timeout": {config.LACPSlow, config.LACPFast},
	"hash":         {"l2,l3,l4", "l2,l3", "l3,l4", "l2", "l3", "l4"},
	"learning":     {"on", "off"},
	"discover":     {"on", "off"},
	"blocknonip":   {"on", "off"},
	"stack":        {"on", "off"},
	"promisc":      {"on", "off"},
	"preempt":      {"on", "off"},
	"stp":          {"on", "off"},
	"edge":         {"on", "off"},
	"autoedge":     {"on", "off"},
	"bpdu-guard":   {"on", "off"},
	"ptp":          {"auto", "on", "off"},
	"tx":           {"ring", "mmsg"},
	"log-level":    {"debug", "info", "warn", "error"},
	"log-format":   {"text", "json"},
	"direction":    {"in", "out", "both"},
}

// fileFlags are the flags whose value is a file or directory name.
var fileFlags = []string{"config", "socket", "state-dir", "rc-conf", "write"}

// flagValues returns the candidates for the value of flag f of the command
// at path.
func flagValues(f cli.Flag, path, args []string, names *daemonNames) []string {
	name := f.Names()[0]
	if slices.Contains(fileFlags, name) {
		return []string{completeFiles}
	}
	if name == "port" && strings.Join(path, " ") == "trunk create" {
		return names.freeInterfaces(false)
	}
	if name == "proto" && strings.Join(path, " ") == "bridge stp" {
		return []string{"rstp", "stp"}
	}
	return fixedFlagValues[name]
}

// memberArgs says which interfaces an IFACE argument of a command names,
// when not any free interface of the host.
var memberArgs = map[string]func(n *daemonNames, owner string) []string{
	"bridge del":     (*daemonNames).bridgePorts,
	"bridge port":    (*daemonNames).bridgePorts,
	"bridge static":  (*daemonNames).bridgePorts,
	"bridge delspan": (*daemonNames).bridgeSpans,
	"trunk del":      (*daemonNames).trunkPorts,
	"trunk port":     (*daemonNames).trunkPorts,
	"port show":      func(n *daemonNames, _ string) []string { return n.ports() },
}

// argValues returns the candidates for the next positional argument of
// cmd, after args, from its usage line: NAME is a bridge under "bridge"
// and a trunk under "trunk", IFACE (or IFA, IFB) an interface, FILE a
// file, "a|b" one of the words; "X..." repeats.
func argValues(cmd *cli.Command, path, args []string, names *daemonNames) []string {
	usage := strings.Fields(cmd.ArgsUsage)
	if len(usage) == 0 {
		return nil
	}
	i := min(len(args), len(usage)-1)
	word := strings.Trim(usage[i], "[]")
	if len(args) >= len(usage) && !strings.HasSuffix(word, "...") {
		return nil
	}
	word = strings.TrimSuffix(word, "...")
	p := strings.Join(path, " ")
	switch {
	case strings.Contains(word, "|"):
		return strings.Split(word, "|")
	case word == "NAME" && path[0] == "bridge":
		return names.bridges()
	case word == "NAME" && path[0] == "trunk":
		return names.trunks()
	case word == "NAME" && path[0] == "capture":
		// A bridge's local TAP has its name: that name is the bridge.
		out := names.bridges()
		for _, p := range names.ports() {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return out
	case word == "FILE":
		return []string{completeFiles}
	case word == "IFACE" || word == "IFA" || word == "IFB":
		if members, ok := memberArgs[p]; ok {
			owner := ""
			if len(args) > 0 {
				owner = args[0]
			}
			return members(names, owner)
		}
		return names.freeInterfaces(p == "bridge add")
	}
	return nil
}

// filterPrefix keeps the words that start with prefix, and completeFiles
// (the shell matches file names).
func filterPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) || w == completeFiles {
			out = append(out, w)
		}
	}
	return out
}

// daemonNames asks the daemon, once and only when needed, for what it
// has. Without a daemon every list is empty.
type daemonNames struct {
	// socket is the daemon's control socket.
	socket string
	// ctx bounds the questions.
	ctx context.Context
	// asked is set once the daemon was asked (or could not be).
	asked bool
	// bridgeInfo, trunkInfo and portInfo are its answers.
	bridgeInfo []api.BridgeInfo
	trunkInfo  []api.TrunkInfo
	portInfo   []api.PortInfo
	// ok is set when the daemon answered all three.
	ok bool
}

func (n *daemonNames) ask() {
	if n.asked {
		return
	}
	n.asked = true
	cl, err := api.Dial(n.socket)
	if err != nil {
		return
	}
	defer cl.Close()
	var errs [3]error
	errs[0] = cl.Do(n.ctx, api.BridgeShowRequest{}, &n.bridgeInfo)
	errs[1] = cl.Do(n.ctx, api.TrunkShowRequest{}, &n.trunkInfo)
	errs[2] = cl.Do(n.ctx, api.PortShowRequest{}, &n.portInfo)
	n.ok = errs == [3]error{}
}

// nameList returns the names of items.
func nameList[T any](items []T, name func(T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func bridgeName(b api.BridgeInfo) string         { return b.Name }
func bridgePortName(p api.BridgePortInfo) string { return p.Name }
func trunkName(t api.TrunkInfo) string           { return t.Name }
func trunkPortName(p api.TrunkPortInfo) string   { return p.Name }
func portName(p api.PortInfo) string             { return p.Name }

func (n *daemonNames) bridges() []string {
	n.ask()
	return nameList(n.bridgeInfo, bridgeName)
}

func (n *daemonNames) trunks() []string {
	n.ask()
	return nameList(n.trunkInfo, trunkName)
}

func (n *daemonNames) ports() []string {
	n.ask()
	return nameList(n.portInfo, portName)
}

// bridge returns the bridge called name, or nil.
func (n *daemonNames) bridge(name string) *api.BridgeInfo {
	n.ask()
	i := slices.IndexFunc(n.bridgeInfo, func(b api.BridgeInfo) bool { return b.Name == name })
	if i < 0 {
		return nil
	}
	return &n.bridgeInfo[i]
}

func (n *daemonNames) bridgePorts(bridge string) []string {
	if b := n.bridge(bridge); b != nil {
		return nameList(b.Ports, bridgePortName)
	}
	return nil
}

func (n *daemonNames) bridgeSpans(bridge string) []string {
	if b := n.bridge(bridge); b != nil {
		return b.Spans
	}
	return nil
}

func (n *daemonNames) trunkPorts(trunk string) []string {
	n.ask()
	if i := slices.IndexFunc(n.trunkInfo, func(t api.TrunkInfo) bool { return t.Name == trunk }); i >= 0 {
		return nameList(n.trunkInfo[i].Ports, trunkPortName)
	}
	return nil
}

// freeInterfaces returns the host's interfaces that swctl does not use
// (not a member, span, trunk port or TAP of swctl's, not loopback) and,
// with trunks, the trunks that are not a bridge's member: what a new
// member may be. Empty without a daemon, which alone knows what is used.
func (n *daemonNames) freeInterfaces(trunks bool) []string {
	n.ask()
	if !n.ok {
		return nil
	}
	used := map[string]bool{}
	names := slices.Concat(n.ports(), n.bridges(), n.trunks())
	for _, b := range n.bridgeInfo {
		names = slices.Concat(names, nameList(b.Ports, bridgePortName), b.Spans)
	}
	for _, t := range n.trunkInfo {
		names = append(names, nameList(t.Ports, trunkPortName)...)
	}
	for _, name := range names {
		used[name] = true
	}
	var out []string
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 && !used[i.Name] {
			out = append(out, i.Name)
		}
	}
	slices.Sort(out)
	if trunks {
		for _, t := range n.trunkInfo {
			if !slices.ContainsFunc(n.portInfo, func(p api.PortInfo) bool { return p.Name == t.Name && p.Role == api.RoleMember }) {
				out = append(out, t.Name)
			}
		}
	}
	return out
}
