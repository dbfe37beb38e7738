package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/capture"
)

// Packet capture (swctl capture): an action, like the queries. A capture
// is a session on its bridge's hub (internal/capture), which is the
// bridge's tap while any session runs: the forwarding path copies what
// the session wants into the session's queue, or drops and counts when
// the queue is full, and never waits for the client. This goroutine (the
// control connection's) takes frames from the queue and sends them; only
// it waits for the client, within the stream's stall rule.

// captureQueue is how many frames a capture queues for its client.
const captureQueue = 1024

// maxCaptures bounds the captures running at once on one bridge: each
// queue holds up to captureQueue frames of up to the snap length.
const maxCaptures = 4

// Capture implements api.Handler.
func (e *engine) Capture(ctx context.Context, req api.CaptureRequest, sink api.CaptureSink) (end api.CaptureEnd, err error) {
	hub, sess, start, err := e.startCapture(req)
	if err != nil {
		return end, err
	}
	defer func() {
		hub.Remove(sess)
		_, end.Dropped = sess.Counts()
	}()
	if err := sink.Start(start); err != nil {
		return end, err
	}
	for req.Count == 0 || end.Sent < uint64(req.Count) {
		f, ok := sess.TryNext()
		if !ok {
			// Nothing queued: send what is buffered before waiting.
			if err := sink.Flush(); err != nil {
				return end, e.captureFailed(hub, err)
			}
			if f, err = sess.Next(ctx); err != nil {
				if errors.Is(err, capture.ErrHubClosed) {
					return end, fmt.Errorf("%s: %w", start.Bridge, err)
				}
				return end, nil // stopped by the client, or the daemon is stopping
			}
		}
		err := sink.Frame(api.CapturedFrame{Port: f.Port, Dir: wireDir(f.Dir), Time: f.Time, Len: f.Len, Data: f.Data})
		sess.Release(f)
		if err != nil {
			return end, e.captureFailed(hub, err)
		}
		end.Sent++
	}
	return end, nil
}

// startCapture finds the capture's bridge and port and starts its session.
func (e *engine) startCapture(req api.CaptureRequest) (*capture.Hub, *capture.Session, api.CaptureStart, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := api.CaptureStart{Snaplen: req.Snaplen, Direction: req.Direction}
	if start.Snaplen == 0 {
		start.Snaplen = api.DefaultSnaplen
	}
	b := e.graph.bridges[req.Name]
	if b != nil {
		start.Bridge = b.name
	} else {
		for _, c := range e.cfg.Bridges {
			if bo := e.graph.bridges[c.Name]; bo != nil && bo.hasPort(req.Name) {
				b, start.Bridge, start.Port = bo, c.Name, req.Name
				break
			}
		}
	}
	if b == nil {
		return nil, nil, start, fmt.Errorf("capture %s: not a bridge or a port of one", req.Name)
	}
	var dirs bridge.Direction
	switch start.Direction {
	case "":
		start.Direction, dirs = api.DirectionIn, bridge.In
		if start.Port != "" {
			start.Direction, dirs = api.DirectionBoth, bridge.In|bridge.Out
		}
	case api.DirectionIn:
		dirs = bridge.In
	case api.DirectionOut:
		dirs = bridge.Out
	case api.DirectionBoth:
		dirs = bridge.In | bridge.Out
	}
	if b.capture == nil {
		b.capture = capture.NewHub(b.br.SetTap)
	}
	if n := b.capture.Stats().Sessions; n >= maxCaptures {
		return nil, nil, start, fmt.Errorf("capture %s: %s has %d captures running already (at most %d)", req.Name, start.Bridge, n, maxCaptures)
	}
	sess := capture.NewSession(start.Port, dirs, start.Snaplen, captureQueue)
	if err := b.capture.Add(sess); err != nil {
		return nil, nil, start, fmt.Errorf("capture %s: %w", req.Name, err)
	}
	return b.capture, sess, start, nil
}

// hasPort reports whether name is a member, span port or the local TAP
// of the bridge.
func (b *bridgeObj) hasPort(name string) bool {
	return b.ports[name] != nil || (b.local != nil && b.local.Name() == name)
}

// captureFailed counts a capture whose client stalled, and returns err.
func (e *engine) captureFailed(hub *capture.Hub, err error) error {
	if errors.Is(err, api.ErrStreamStalled) {
		hub.CountCut()
	}
	return err
}

// wireDir is a direction as the stream carries it.
func wireDir(d bridge.Direction) uint8 {
	if d == bridge.Out {
		return api.FrameOut
	}
	return api.FrameIn
}
