// Command swctl is the userspace L2 switch: "swctl daemon" runs the
// engine, every other command talks to it over the control socket. This
// package only parses flags and formats output; the behaviour lives in
// internal/daemon, internal/api and internal/config.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}
