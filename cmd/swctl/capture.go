package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/capture"
)

func captureCommand() *cli.Command {
	return &cli.Command{
		Name:      "capture",
		Usage:     "write the frames a bridge or one of its ports sees as pcapng (or pcap), for tshark",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "write", Aliases: []string{"w"}, Usage: "write to `FILE`; without it, or with -, to the standard output (tshark -r -)"},
			&cli.IntFlag{Name: "count", Aliases: []string{"c"}, Usage: "stop after `N` frames"},
			&cli.StringFlag{Name: "direction", Usage: "`in|out|both`: frames the ports received, frames sent by them, or both (default: in for a bridge, both for a port)"},
			&cli.IntFlag{Name: "snaplen", Aliases: []string{"s"}, Usage: fmt.Sprintf("keep at most `N` bytes of each frame (%d-%d, default %d)", api.MinSnaplen, api.MaxSnaplen, api.DefaultSnaplen)},
			&cli.BoolFlag{Name: "pcap", Usage: "write pcap instead of pcapng (no port names, no directions)"},
		},
		Action: runCapture,
	}
}

func runCapture(c *cli.Context) error {
	if err := wantArgs(c, 1, 1); err != nil {
		return err
	}
	if n := c.Int("count"); n < 0 || (c.IsSet("count") && n == 0) {
		return usagef("-c: want a number of frames, 1 or more; got %d", n)
	}
	name := c.Args().First()
	req := api.CaptureRequest{StreamVersion: api.StreamVersion, Name: name, Direction: c.String("direction"),
		Count: c.Int("count"), Snaplen: c.Int("snaplen")}
	if err := validate(req); err != nil {
		return err
	}
	d, err := requestTimeout(c)
	if err != nil {
		return err
	}
	cl, err := dial(c)
	if err != nil {
		return err
	}
	// The daemon must begin the capture within --request-timeout; the
	// capture then runs as long as it runs.
	start, cancel := context.WithTimeout(c.Context, d)
	s, err := cl.Capture(start, req)
	cancel()
	if err != nil {
		cl.Close()
		return err
	}
	defer s.Close()
	out := c.App.Writer
	if path := c.String("write"); path != "" && path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("capture %s: %w", name, err)
		}
		defer f.Close()
		out = f
	}
	// A signal stops the capture; the daemon then sends its end, and the
	// output is finished.
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		s.Stop()
	}()
	end, err := writeCapture(s, out, c.Bool("pcap"), req.Count)
	if err != nil {
		return fmt.Errorf("capture %s: %w", name, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "capture %s: %d frames, %d dropped (the capture's queue was full)\n", name, end.Sent, end.Dropped)
	if end.Error != "" {
		return fmt.Errorf("capture %s: %s", name, end.Error)
	}
	return nil
}

// writeCapture writes the frames of s to out, at most count (0: no
// limit), until its end, which it returns. It flushes the output before
// it waits for the daemon, so that a reader of a pipe sees every frame
// written so far.
func writeCapture(s *api.CaptureStream, out io.Writer, pcap bool, count int) (*api.CaptureEnd, error) {
	target := s.Start.Bridge
	if s.Start.Port != "" {
		target = s.Start.Port
	}
	w, err := capture.NewWriter(out, target, s.Start.Snaplen, pcap)
	if err != nil {
		return nil, err
	}
	written := 0
	for {
		if !s.Buffered() {
			if err := w.Flush(); err != nil {
				return nil, err
			}
		}
		f, end, err := s.Next()
		if err != nil {
			w.Close()
			return nil, err
		}
		if end != nil {
			return end, w.Close()
		}
		if count > 0 && written == count {
			continue // the daemon counts too: this does not happen
		}
		dir := bridge.In
		if f.Dir == api.FrameOut {
			dir = bridge.Out
		}
		if err := w.Write(&capture.Frame{Port: f.Port, Dir: dir, Time: f.Time, Len: f.Len, Data: f.Data}); err != nil {
			return nil, err
		}
		written++
	}
}
