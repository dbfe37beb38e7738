package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/bsdimport"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:   "config",
		Usage:  "work with configuration files",
		Action: unknownCommand,
		Subcommands: []*cli.Command{{
			Name:      "import",
			Usage:     "translate OpenBSD hostname.if files or FreeBSD rc.conf into swctl.conf",
			ArgsUsage: "[FILE...]",
			Description: `Reads OpenBSD hostname.if(5) files of bridge, veb, trunk and aggr
interfaces (hostname.bridge0 ...) and FreeBSD rc.conf(5) files (--rc-conf)
and prints the swctl.conf they translate to. Every line, or part of a
line, that swctl cannot translate (the spanning tree, host addresses,
descriptions, unknown words) is listed on stderr with its file and line.
Nothing is written: redirect the output to /etc/swctl/swctl.conf.`,
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "rc-conf", Usage: "FreeBSD rc.conf `FILE` (repeat for rc.conf.local: later files override earlier ones)"},
			},
			Action: runConfigImport,
		}},
	}
}

func runConfigImport(c *cli.Context) error {
	files, rcs := c.Args().Slice(), c.StringSlice("rc-conf")
	if len(files)+len(rcs) == 0 {
		return usagef("config import: give hostname.if files, or --rc-conf FILE (usage: swctl config import [--rc-conf FILE]... [FILE...])")
	}
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "hostname.") || filepath.Base(f) == "hostname." {
			return usagef("config import: %s: want an OpenBSD hostname.IF file (such as hostname.bridge0), or --rc-conf %s for a FreeBSD rc.conf", f, f)
		}
	}
	im := bsdimport.New()
	read := func(path string, imp func(io.Reader, string) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return imp(f, path)
	}
	for _, f := range files {
		if err := read(f, im.HostnameIf); err != nil {
			return err
		}
	}
	for _, f := range rcs {
		if err := read(f, im.RCConf); err != nil {
			return err
		}
	}
	cfg, notes, err := im.Result()
	for _, n := range notes {
		fmt.Fprintln(c.App.ErrWriter, n)
	}
	if err != nil {
		return err
	}
	_, err = c.App.Writer.Write(cfg.Format())
	return err
}
