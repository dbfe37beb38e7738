// Command swctl-regress runs swctl's regress suite (make regress): the
// promisc A/B tables for veth, trunk0 and bridge0, comparing a "patch"
// and a "no patch" build of swctl on a self-built netns testbed. The work
// is done by package regress; this file only parses flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/swctl/swctl/regress"
)

func main() {
	var (
		quick   = flag.Bool("quick", false, "the shortest form: 1 run of 3 s per cell and role (overrides -runs and -seconds unless they are given)")
		full    = flag.Bool("full", false, "the long form (RFC 2544/2889): not implemented yet")
		runs    = flag.Int("runs", 6, "runs per cell and role")
		seconds = flag.Int("seconds", 10, "length of one iperf3 test in seconds")
		alpha   = flag.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
		patch   = flag.String("patch", "", "diff file: \"patch\" = the tree with it applied in a temporary worktree, \"no patch\" = the tree")
		base    = flag.String("base", "", "git revision: \"no patch\" = it, built in a temporary worktree, \"patch\" = the tree")
		setups  = flag.String("setups", "", "comma-separated setups to run (veth,trunk0,bridge0; default all)")
		out     = flag.String("out", "regress-out", "directory that receives the <timestamp>/ report directory")
		repo    = flag.String("repo", ".", "a directory in the swctl git repository")
	)
	flag.Parse()
	if *full {
		fmt.Fprintln(os.Stderr, "swctl-regress: not implemented yet: RFC 2544/2889 long forms (FULL=1)")
		os.Exit(2)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["runs"] {
			*runs = 1
		}
		if !set["seconds"] {
			*seconds = 3
		}
	}
	var names []string
	if *setups != "" {
		names = strings.Split(*setups, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills at once.
		<-ctx.Done()
		stop()
	}()
	_, _, err := regress.Run(ctx, regress.Config{
		AB:   regress.ABSpec{Repo: *repo, Patch: *patch, Base: *base},
		Runs: *runs, Seconds: *seconds, Alpha: *alpha, Setups: names, Quick: *quick,
		OutRoot: *out, Stdout: os.Stdout, Stderr: os.Stderr, TTY: regress.IsTerminal(os.Stderr),
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "swctl-regress: interrupted; the testbed and temporary worktrees were removed")
		}
		fmt.Fprintf(os.Stderr, "swctl-regress: %v\n", err)
		os.Exit(1)
	}
}
