package main

import (
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/platform/lladdr"
)

// recoverFunc is lladdr.Recover; tests replace it.
var recoverFunc = lladdr.Recover

func recoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "recover",
		Usage: "put back interface MACs a crashed daemon left changed (with no daemon running)",
		Description: `Restores every hardware address the daemon journalled in its state
directory before changing it (trunk members under the lladdr policy), on
interfaces that still carry the address swctl set, found by their ifindex
(a member renamed since gets its address back). Refuses while a daemon
holds the state directory; a starting daemon does the same by itself.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state-dir", Value: defaultStateDir, Usage: "the daemon's state directory `PATH`"},
			outputFlag(),
		},
		Action: runRecover,
	}
}

func runRecover(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 0, 0); err != nil {
		return err
	}
	dir := c.String("state-dir")
	if dir == "" {
		return usagef("--state-dir: empty path")
	}
	// The report says what was done; the log adds only what went wrong.
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if asJSON {
		log = slog.New(slog.DiscardHandler)
	}
	rep, err := recoverFunc(dir, log)
	if asJSON {
		if werr := writeJSON(c.App.Writer, rep); werr != nil && err == nil {
			err = werr
		}
	} else if !rep.Empty() || err == nil {
		fmt.Fprint(c.App.Writer, rep.String())
	}
	return err
}
