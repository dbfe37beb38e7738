package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/selftest"
)

// selftestFunc is selftest.Run; tests replace it.
var selftestFunc = selftest.Run

func selftestCommand() *cli.Command {
	return &cli.Command{
		Name:  "selftest",
		Usage: "check every part of swctl that talks to the kernel, on this host: one PASS, FAIL or SKIP line each",
		Description: `Opens a packet port on each of two interfaces, takes promiscuous mode
and gives it back (read from the OS), sends frames both ways and tagged
frames, makes and destroys a TAP, changes a MAC and puts it back through
the lladdr journal, takes a link down and up and waits for the kernel's
events, checks the stack guard (Linux) and the control socket. Without
--ifaces it makes a pair of interfaces of its own (a veth pair in a
temporary network namespace on Linux, an epair on FreeBSD, two pair
interfaces on OpenBSD) and removes it at the end. Needs root. Exits 1
when any check fails. Run it first on an OpenBSD or FreeBSD host.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ifaces", Usage: "test the two interfaces `A,B`, cabled to each other, and leave them as they were (default: a pair of its own)"},
			&cli.StringFlag{Name: "state-dir", Value: defaultStateDir, Usage: "the daemon's state directory `PATH`: with --ifaces the lladdr check journals its change there, for swctl recover"},
			outputFlag(),
		},
		Action: runSelftest,
	}
}

func runSelftest(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 0, 0); err != nil {
		return err
	}
	opts := selftest.Options{StateDir: c.String("state-dir")}
	if opts.StateDir == "" {
		return usagef("--state-dir: empty path")
	}
	if c.IsSet("ifaces") {
		opts.Ifaces = strings.Split(c.String("ifaces"), ",")
		if len(opts.Ifaces) != 2 || opts.Ifaces[0] == "" || opts.Ifaces[1] == "" || opts.Ifaces[0] == opts.Ifaces[1] {
			return usagef("--ifaces %q: want two different interfaces A,B, cabled to each other", c.String("ifaces"))
		}
	}
	// An interrupted selftest still undoes what it changed.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := selftestFunc(ctx, opts)
	if err != nil {
		return err
	}
	if asJSON {
		err = writeJSON(c.App.Writer, rep)
	} else {
		err = formatSelftest(c.App.Writer, rep)
	}
	if err != nil {
		return err
	}
	if failed := rep.Failed(); len(failed) > 0 {
		return fmt.Errorf("selftest: %d of %d checks failed: %s", len(failed), len(rep.Checks), strings.Join(failed, ", "))
	}
	return nil
}

// formatSelftest writes what the selftest ran on, one aligned line per
// check (result, check, what it used, why), and the totals.
func formatSelftest(w io.Writer, rep selftest.Report) error {
	on := "no interfaces to test"
	if len(rep.Ifaces) > 0 {
		on = fmt.Sprintf("%s (%s)", strings.Join(rep.Ifaces, ", "), rep.Bed)
	}
	fmt.Fprintf(w, "swctl selftest on %s/%s: %s\n", rep.OS, rep.Arch, on)
	tw := newTable(w)
	for _, o := range rep.Checks {
		subject := strings.Join(o.Subject, ", ")
		if subject == "" {
			subject = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Result, o.Check, subject, o.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d checks: %d PASS, %d FAIL, %d SKIP\n", len(rep.Checks),
		rep.Count(selftest.Pass), rep.Count(selftest.Fail), rep.Count(selftest.Skip))
	return err
}
