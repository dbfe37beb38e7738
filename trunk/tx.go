package trunk

import (
	"encoding/binary"

	"github.com/swctl/swctl/platform"
)

// payloadLen returns the L2 payload length of f (at least 14 bytes),
// allowing one tag: the figure checked against the MTU.
func payloadLen(f []byte) int {
	switch binary.BigEndian.Uint16(f[12:14]) {
	case 0x8100, 0x88a8, 0x9100:
		if len(f) >= 18 {
			return len(f) - 18
		}
	}
	return len(f) - 14
}

// WriteBatch implements platform.Port: each frame leaves by the member (or
// members, for broadcast) the protocol's states and Distribution choose:
// frames are grouped per member and each member's WriteBatch is called
// once per batch of its size. Frames shorter than a header or over the
// trunk's MTU are dropped (TxInvalid), and so is everything when no member
// is distributing (TxNoPort). It never blocks and copies nothing itself:
// the members copy what they keep. It returns the number of frames sent;
// for broadcast a frame counts as sent when it was handed to the members.
// Safe for concurrent use.
func (tr *Trunk) WriteBatch(frames [][]byte) (int, error) {
	if tr.closed.Load() {
		return 0, platform.ErrClosed
	}
	if len(frames) == 0 {
		return 0, nil
	}
	t := tr.table.Load()
	set := t.distributing
	if set == 0 {
		tr.txNoPort.Add(uint64(len(frames)))
		return 0, nil
	}
	mtu := t.mtu()
	s := tr.slot()
	var rr uint64
	if t.dist == DistributeRoundRobin && set.Len() > 1 {
		rr = tr.rr.Add(uint64(len(frames))) - uint64(len(frames))
	}
	single := -1
	if set.Len() == 1 {
		single = set.First()
	}
	var invalid, handed, handedBytes uint64
	for i, f := range frames {
		if len(f) < 14 || payloadLen(f) > mtu {
			invalid++
			continue
		}
		handed++
		handedBytes += uint64(len(f))
		switch {
		case single >= 0:
			s.add(single, f)
		case t.dist == DistributeHash:
			s.add(t.sel.Pick(t.hasher.Hash(f), set), f)
		case t.dist == DistributeRoundRobin:
			s.add(set.Nth(rr+uint64(i)), f)
		default:
			for u := set; u != 0; u &= u - 1 {
				s.add(u.First(), f)
			}
		}
	}
	var lost, lostBytes uint64
	for u := s.used; u != 0; u &= u - 1 {
		id := u.First()
		out := s.out[id]
		l, lbytes := send(t.byID[id].port, out)
		lost += l
		lostBytes += lbytes
		clear(out)
		s.out[id] = out[:0]
	}
	s.used = 0
	s.mu.Unlock()
	if invalid > 0 {
		tr.txInvalid.Add(invalid)
	}
	if t.dist == DistributeBroadcast && single < 0 {
		lost, lostBytes = 0, 0
	}
	if lost > 0 {
		tr.txMem.Add(lost)
	}
	sent := handed - lost
	tr.txPackets.Add(sent)
	tr.txBytes.Add(handedBytes - lostBytes)
	return int(sent), nil
}

// add queues f for member id. Call with s.mu held.
func (s *txSlot) add(id int, f []byte) {
	s.out[id] = append(s.out[id], f)
	s.used |= 1 << uint(id)
}

// slot returns a free scratch slot, locked.
func (tr *Trunk) slot() *txSlot {
	for i := range tr.tx {
		if tr.tx[i].mu.TryLock() {
			return &tr.tx[i]
		}
	}
	s := &tr.tx[tr.rr.Load()%uint64(len(tr.tx))]
	s.mu.Lock()
	return s
}

// send writes frames to p in batches of p's batch size and returns how
// many frames p did not send, and (an estimate when it sent some of a
// batch) their bytes.
func send(p platform.Port, frames [][]byte) (lost, lostBytes uint64) {
	bs := p.BatchSize()
	if bs <= 0 {
		bs = len(frames)
	}
	for len(frames) > 0 {
		chunk := frames[:min(bs, len(frames))]
		frames = frames[len(chunk):]
		n, _ := p.WriteBatch(chunk)
		n = max(0, min(n, len(chunk)))
		if n == len(chunk) {
			continue
		}
		var b uint64
		for _, f := range chunk {
			b += uint64(len(f))
		}
		lost += uint64(len(chunk) - n)
		lostBytes += b * uint64(len(chunk)-n) / uint64(len(chunk))
	}
	return lost, lostBytes
}

var _ platform.Port = (*Trunk)(nil)
