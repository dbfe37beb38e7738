package regress

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// iperfPort is the TCP port of the iperf3 servers (testbed and hosts).
const iperfPort = "5201"

// CPU pinning of the iperf3 ends, the same in every row of the netns testbed.
const (
	// peerCPU runs the receiving peer's iperf3 server.
	peerCPU = "0"
	// clientCPU runs the iperf3 client (the device under test's own, or
	// the sending peer's for Forward).
	clientCPU = "1"
)

// iperfArgs is the command line of an iperf3 client of seconds against
// the server at ip, JSON output, with extra options.
func iperfArgs(ip string, seconds int, extra ...string) []string {
	return append([]string{"iperf3", "-c", ip, "-p", iperfPort, "-t", strconv.Itoa(seconds), "-J", "--connect-timeout", "3000"}, extra...)
}

// iperfTwice runs try, one iperf3 measurement of seconds, under a
// context that allows it 20 s more, and after a pause once more when it
// fails; what names the measurement in the error.
func iperfTwice(ctx context.Context, what string, seconds int, try func(ctx context.Context) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		tctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+20)*time.Second)
		err = try(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("%s: iperf3 failed twice: %v", what, err)
}
