package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the daemon refused, or could not be reached
	exitUsage = 2 // the command line is wrong; the daemon was not contacted
)

// usageError is a mistake on the command line, caught before dialling.
type usageError struct {
	// err describes the mistake.
	err error
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// run runs the command line args (args[0] is the program name) and
// returns the exit code. Output goes to stdout, errors to stderr: as
// {"error": "..."} when the command was given -o json, as "swctl: ..."
// otherwise.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	args = reorderArgs(app, args)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	if wantsJSON(args) {
		out, _ := json.Marshal(map[string]string{"error": err.Error()})
		fmt.Fprintf(stderr, "%s\n", out)
	} else {
		fmt.Fprintf(stderr, "swctl: %v\n", err)
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

// wantsJSON reports whether the command line asks for JSON output.
func wantsJSON(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		switch a {
		case "-o", "--o", "-output", "--output":
			if i+1 < len(args) && args[i+1] == "json" {
				return true
			}
		case "-o=json", "--o=json", "-output=json", "--output=json":
			return true
		}
	}
	return false
}

// reorderArgs moves flags given after positional arguments in front of
// them, since the flag package stops at the first positional argument and
// the documented syntax is "swctl bridge show NAME -o json". A global
// flag (--socket) given after the command moves to the front.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// Global flags before the command.
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "--" {
		n := flagLen(app.Flags, rest)
		out = append(out, rest[:n]...)
		rest = rest[n:]
	}
	// The command path.
	cmds := app.Commands
	var cmd *cli.Command
	var path []string
	for len(rest) > 0 {
		next := findCommand(cmds, rest[0])
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		path = append(path, rest[0])
		rest = rest[1:]
	}
	if cmd == nil {
		return args
	}
	var globals, flags, positional []string
	for len(rest) > 0 {
		a := rest[0]
		switch {
		case a == "--":
			positional = append(positional, rest[1:]...)
			rest = nil
		case strings.HasPrefix(a, "-") && a != "-":
			name := flagName(a)
			if lookupFlag(cmd.Flags, name) == nil && lookupFlag(app.Flags, name) != nil {
				n := flagLen(app.Flags, rest)
				globals = append(globals, rest[:n]...)
				rest = rest[n:]
				continue
			}
			n := flagLen(cmd.Flags, rest)
			flags = append(flags, rest[:n]...)
			rest = rest[n:]
		default:
			positional = append(positional, a)
			rest = rest[1:]
		}
	}
	out = append(out, globals...)
	out = append(out, path...)
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagName returns the name in "-n", "--name" or "--name=value".
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func lookupFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// flagLen returns how many arguments the flag at args[0] takes: 2 for a
// flag with a separate value, 1 otherwise.
func flagLen(flags []cli.Flag, args []string) int {
	if strings.Contains(args[0], "=") || len(args) < 2 {
		return 1
	}
	f := lookupFlag(flags, flagName(args[0]))
	if f == nil {
		return 1 // help or unknown: the flag package reports unknown ones
	}
	if _, ok := f.(*cli.BoolFlag); ok {
		return 1
	}
	return 2
}

// onUsageError turns urfave/cli's flag errors into usage errors without
// printing help.
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return usageError{err}
}

// optionalInt is an int flag whose absence means something other than a
// number ("unchanged", "every VLAN"): help shows no "(default: 0)" for it.
type optionalInt struct{ *cli.IntFlag }

// GetDefaultText hides the zero value, which is not what omitting the flag
// means.
func (optionalInt) GetDefaultText() string { return "" }

// String formats the flag for help through the wrapper, so that its
// GetDefaultText counts.
func (f optionalInt) String() string { return cli.FlagStringer(f) }

// intFlag is an int flag that help shows with its real default, def:
// the value that omitting it gives, which the daemon chooses.
func intFlag(name, usage string, def int) cli.Flag {
	return &cli.IntFlag{Name: name, Usage: usage, DefaultText: fmt.Sprint(def)}
}

// optIntFlag is an int flag that help shows without a default, for
// settings that omitting leaves alone.
func optIntFlag(name, usage string) cli.Flag {
	return optionalInt{&cli.IntFlag{Name: name, Usage: usage}}
}

// outputFlag is the -o flag of every command that prints.
func outputFlag() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "output format: text or json"}
}

// forceFlag is the --force of the commands that take interfaces from the
// host.
func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "take an interface even if it holds the host's default route (which cuts the host off that network)"}
}

// jsonOutput reports whether -o json was given, and refuses other values
// than json and text.
func jsonOutput(c *cli.Context) (bool, error) {
	switch o := c.String("output"); o {
	case "json":
		return true, nil
	case "text", "":
		return false, nil
	default:
		return false, usagef("-o: want json or text, got %q", o)
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(c *cli.Context, min, max int) error {
	n := c.NArg()
	if n >= min && (max < 0 || n <= max) {
		return nil
	}
	problem := "too many arguments"
	if n < min {
		problem = "missing arguments"
	}
	path := commandPath(c)
	return usagef("%s: %s (usage: swctl %s %s)", path, problem, path, c.Command.ArgsUsage)
}

// commandPath returns the names of the running command and its parents,
// as typed: "bridge add".
func commandPath(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// validate runs a request's own checks as a usage error.
func validate(v interface{ Validate() error }) error {
	if err := v.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// dial connects to the daemon at the --socket path.
func dial(c *cli.Context) (*api.Client, error) {
	return api.Dial(c.String("socket"))
}

// defaultRequestTimeout is how long a command waits for the daemon
// unless --request-timeout says otherwise.
const defaultRequestTimeout = 30 * time.Second

// requestTimeout returns --request-timeout, which must be positive.
func requestTimeout(c *cli.Context) (time.Duration, error) {
	d := c.Duration("request-timeout")
	if d <= 0 {
		return 0, usagef("--request-timeout: want a positive duration, got %v", d)
	}
	return d, nil
}

// do dials the daemon and runs f with the client, within the
// --request-timeout.
func do(c *cli.Context, f func(ctx context.Context, cl *api.Client) error) error {
	d, err := requestTimeout(c)
	if err != nil {
		return err
	}
	cl, err := dial(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(c.Context, d)
	defer cancel()
	err = f(ctx, cl)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (no reply within %v, --request-timeout; the daemon refuses a request it reaches later)", err, d)
	}
	return err
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:            "swctl",
		Usage:           "userspace L2 switch",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideVersion:     true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError:    onUsageError,
		HideHelpCommand: true,
		// --port eth1,eth2 is one interface name, not two: repeat --port.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "socket", Value: api.DefaultSocket, EnvVars: []string{"SWCTL_SOCKET"}, Usage: "control socket `PATH`"},
			&cli.DurationFlag{Name: "request-timeout", Value: defaultRequestTimeout, EnvVars: []string{"SWCTL_REQUEST_TIMEOUT"}, Usage: "wait at most `DURATION` for the daemon; it refuses a request it reaches later"},
			// Our own flag rather than urfave/cli's, which would also take -v.
			&cli.BoolFlag{Name: "version", Usage: "show the version of this program and exit (\"swctl version\" asks the daemon too)"},
		},
		Commands: []*cli.Command{
			daemonCommand(),
			bridgeCommand(),
			trunkCommand(),
			lbCommand(),
			portCommand(),
			statsCommand(),
			captureCommand(),
			recoverCommand(),
			selftestCommand(),
			versionCommand(),
			benchCommand(),
			configCommand(),
			completionCommand(),
			completeCommand(),
		},
		Action: appAction,
	}
	setUsageHandlers(app.Commands)
	return app
}

// setUsageHandlers makes every command report flag errors as usage
// errors, and gives each group of subcommands a usage line that names the
// group and a COMMAND, which urfave/cli leaves out ("swctl bridge
// [command options]").
func setUsageHandlers(cmds []*cli.Command, path ...string) {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		p := append(slices.Clone(path), c.Name)
		if len(c.Subcommands) > 0 && c.UsageText == "" {
			c.UsageText = "swctl " + strings.Join(p, " ") + " COMMAND [command options] [arguments...]"
		}
		setUsageHandlers(c.Subcommands, p...)
	}
}

// appAction answers --version without a command, and otherwise refuses
// or shows help as unknownCommand does.
func appAction(c *cli.Context) error {
	if c.Bool("version") {
		if c.NArg() > 0 {
			return usagef("--version takes no command (see \"swctl version\")")
		}
		_, err := fmt.Fprintln(c.App.Writer, versionLine("swctl", api.Build()))
		return err
	}
	return unknownCommand(c)
}

// unknownCommand is the action of the app and of commands that only group
// subcommands: without arguments it shows help, otherwise it refuses.
func unknownCommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	prefix := strings.TrimSpace("swctl " + commandPath(c))
	return usagef("unknown command %q (see \"%s --help\")", prefix+" "+c.Args().First(), prefix)
}
