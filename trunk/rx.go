package trunk

import (
	"errors"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// readRetry is how long a reader waits after a failed ReadBatch (other
// than ErrClosed) before it tries again.
const readRetry = 10 * time.Millisecond

// ReadBatch implements platform.Port. It blocks until a member has
// received frames the protocol accepts, then fills b.Frames[:n] with views
// of them, all from one member: views into that member port's own
// buffers, not copies, and b.Offs[:n] with their offloads as the member
// received them (zero from a member without offloads). They stay valid
// until the next ReadBatch or Close: the member's reader does not read the
// member again until then. A member batch larger than b is returned over
// several calls. Slow-protocol frames never come out of ReadBatch: they
// go to the protocol. It returns ErrClosed after Close.
//
// With b.Offs nil the caller takes plain frames only: a frame a member
// received with an offload that is not plain (a partial checksum, a
// super-frame) is finished in software first, into an arena the trunk
// owns and reuses (platform.SoftwareFinisher): a super-frame comes out as
// its segments. A frame whose offload the software cannot do is dropped
// and counted (Stats.OffloadDropped).
func (tr *Trunk) ReadBatch(b platform.Batch) (int, error) {
	return tr.readBatch(b, nil)
}

// readBatch is ReadBatch for a consumer that may also be stopped by stop
// (a Handle's Close). When stop is closed, the batch the consumer holds
// is given back to its member and ErrClosed returned.
func (tr *Trunk) readBatch(b platform.Batch, stop <-chan struct{}) (int, error) {
	frames, offs := b.Frames, b.Offs
	if offs != nil {
		frames = frames[:min(len(frames), len(offs))]
	}
	for {
		if tr.cur != nil && tr.off >= len(tr.curFrames) {
			tr.releaseCur()
		}
		if tr.closed.Load() {
			return 0, platform.ErrClosed
		}
		if stopped(stop) {
			tr.releaseCur()
			return 0, platform.ErrClosed
		}
		if len(frames) == 0 {
			return 0, nil
		}
		if tr.cur == nil {
			select {
			case b := <-tr.rxq:
				tr.cur, tr.off = b, 0
				tr.curFrames, tr.curOffs = b.frames, nil
				if len(b.offs) > 0 {
					tr.curOffs = b.offs
				}
			case <-tr.closing:
				return 0, platform.ErrClosed
			case <-stop:
				return 0, platform.ErrClosed
			}
			if tr.closed.Load() {
				return 0, platform.ErrClosed
			}
		}
		if offs == nil && tr.curOffs != nil && tr.cur.soft {
			tr.finishCur()
		}
		if tr.off < len(tr.curFrames) {
			break
		}
	}
	n := copy(frames, tr.curFrames[tr.off:])
	if offs != nil {
		if tr.curOffs != nil {
			copy(offs[:n], tr.curOffs[tr.off:])
		} else {
			clear(offs[:n])
		}
	}
	tr.off += n
	var bytes uint64
	for _, f := range frames[:n] {
		bytes += uint64(len(f))
	}
	tr.rxPackets.Add(uint64(n))
	tr.rxBytes.Add(bytes)
	return n, nil
}

// finishCur replaces what is left of the current batch by plain frames:
// offloads finished in software into tr.rdSoft, super-frames segmented.
// Called by the ReadBatch caller.
func (tr *Trunk) finishCur() {
	tr.rdSoft.Reset()
	var finished, dropped uint64
	for i, f := range tr.curFrames[tr.off:] {
		o := tr.curOffs[tr.off+i]
		if _, err := tr.rdSoft.Add(f, o); err != nil {
			if dropped == 0 {
				tr.noteOffloadDropped(tr.cur.m.name, o, err)
			}
			dropped++
			continue
		}
		if !o.IsPlain() {
			finished++
		}
	}
	tr.curFrames, tr.curOffs, tr.off = tr.rdSoft.Frames(), nil, 0
	if finished > 0 {
		tr.softOffload.Add(finished)
	}
	if dropped > 0 {
		tr.offloadDropped.Add(dropped)
	}
}

// releaseCur gives the batch the consumer holds back to its member's
// reader, which may then read its member again.
func (tr *Trunk) releaseCur() {
	b := tr.cur
	if b == nil {
		return
	}
	tr.cur, tr.curFrames, tr.curOffs = nil, nil, nil
	select {
	case b.ack <- struct{}{}:
	default:
	}
}

func stopped(stop <-chan struct{}) bool {
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// read is m's reader goroutine: it reads batches from m until m leaves or
// the trunk closes, hands slow-protocol frames to the protocol, drops the
// rest while m is not collecting, and offers what it accepted to
// ReadBatch, waiting until the consumer is done with it before reading m
// again. It closes m's port when it returns.
func (tr *Trunk) read(m *Member) {
	defer tr.readers.Done()
	defer close(m.done)
	defer m.closePort()
	bs := m.port.BatchSize()
	if bs <= 0 {
		bs = platform.DefaultBatchSize
	}
	buf := platform.NewBatch(bs)
	m.rx.frames = make([][]byte, 0, bs)
	m.rx.offs = make([]platform.Offload, 0, bs)
	failing := false
	for {
		if !m.enter(stateRead) {
			return
		}
		var n int
		var err error
		n, err = m.port.ReadBatch(buf)
		// Leaving while in ReadBatch: the port may be closed already and
		// the frames gone. Do not look at them.
		if !m.enter(stateBusy) {
			return
		}
		if n > 0 && !tr.receive(m, buf.Frames[:n], buf.Offs[:n]) {
			return
		}
		clear(buf.Frames[:n])
		switch {
		case err == nil:
			if failing {
				failing = false
				tr.log.Info("port reads again", "port", m.name)
			}
		case errors.Is(err, platform.ErrClosed):
			return
		default:
			if !failing {
				failing = true
				tr.log.Warn("port read failed", "port", m.name, "err", err)
			}
			select {
			case <-time.After(readRetry):
			case <-m.stop:
				return
			}
		}
	}
}

// receive sorts frames m read (with their offloads offs[i] when offs is
// not nil) and offers the accepted ones to ReadBatch. It returns false
// when the reader must stop.
func (tr *Trunk) receive(m *Member, frames [][]byte, offs []platform.Offload) bool {
	collecting := tr.table.Load().collecting.Has(m.id) && !m.gone.Load()
	acc := m.rx.frames[:0]
	accOffs := m.rx.offs[:0]
	soft := false
	var refused uint64
	for i, f := range frames {
		switch {
		case frame.Ethernet(f).IsSlowProtocol():
			tr.control(m, f)
			// The protocol may have changed m's state: the frames
			// after this one obey the new state.
			collecting = tr.table.Load().collecting.Has(m.id) && !m.gone.Load()
		case collecting:
			acc = append(acc, f)
			if offs != nil {
				accOffs = append(accOffs, offs[i])
				soft = soft || !offs[i].IsPlain()
			}
		default:
			refused++
		}
	}
	if refused > 0 {
		m.rxRefused.Add(refused)
		tr.rxRefused.Add(refused)
	}
	if len(acc) == 0 {
		return true
	}
	m.rx.frames, m.rx.offs, m.rx.soft = acc, accOffs, soft
	if !m.enter(stateLent) {
		return false
	}
	select {
	case tr.rxq <- &m.rx:
	case <-m.stop:
		return false
	case <-tr.closing:
		return false
	}
	// The consumer holds the frames: wait for its next ReadBatch even if
	// m is leaving meanwhile; only the trunk's Close ends the wait.
	select {
	case <-m.rx.ack:
	case <-tr.closing:
		return false
	}
	clear(m.rx.frames)
	return m.enter(stateBusy)
}

// control hands a slow-protocol frame m received to the protocol.
func (tr *Trunk) control(m *Member, f []byte) {
	m.rxControl.Add(1)
	tr.rxControl.Add(1)
	tr.mu.Lock()
	if tr.isClosed || m.gone.Load() {
		tr.mu.Unlock()
		return
	}
	tr.proto.Input(m, f)
	tr.publishChangesLocked()
	tr.mu.Unlock()
	tr.notify()
}
