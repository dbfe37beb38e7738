package trunk

import (
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

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
	return tr.writeBatch(frames, nil)
}

// WriteBatchOffload implements platform.OffloadPort: WriteBatch with
// offs[i] the offload of frames[i] (len(offs) must be at least
// len(frames)). Each frame leaves by the member WriteBatch would choose,
// with its offload: a member that carries offloads gets it with the frame
// (from its WriteBatchOffload); for any other member the trunk finishes
// the checksum and cuts a super-frame into segments in software first
// (platform.SoftwareFinisher), and a frame it cannot finish is dropped
// (Stats.OffloadDropped). A super-frame is checked against the MTU by the
// size of its segments. Neither frames nor offs are changed; the members
// copy what they keep.
func (tr *Trunk) WriteBatchOffload(frames [][]byte, offs []platform.Offload) (int, error) {
	if offs == nil {
		return tr.writeBatch(frames, nil)
	}
	return tr.writeBatch(frames[:min(len(frames), len(offs))], offs)
}

// writeBatch is WriteBatch (offs nil) or WriteBatchOffload.
func (tr *Trunk) writeBatch(frames [][]byte, offs []platform.Offload) (int, error) {
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
	withOffs := offs != nil
	var invalid, handed, handedBytes uint64
	for i, f := range frames {
		var o platform.Offload
		if withOffs {
			o = offs[i]
		}
		if len(f) < frame.HeaderLen || frame.SegmentPayloadLen(f, o) > mtu {
			invalid++
			continue
		}
		handed++
		handedBytes += uint64(len(f))
		switch {
		case single >= 0:
			s.add(single, f, o, withOffs)
		case t.dist == DistributeHash:
			s.add(t.sel.Pick(t.hasher.Hash(f), set), f, o, withOffs)
		case t.dist == DistributeRoundRobin:
			s.add(set.Nth(rr+uint64(i)), f, o, withOffs)
		default:
			for u := set; u != 0; u &= u - 1 {
				s.add(u.First(), f, o, withOffs)
			}
		}
	}
	var lost, lostBytes uint64
	for u := s.used; u != 0; u &= u - 1 {
		id := u.First()
		out := s.out[id]
		var l, lbytes uint64
		m := t.byID[id]
		switch {
		case !withOffs:
			l, lbytes = send(m.port, out)
		case m.offload != nil:
			l, lbytes = sendOffload(m.offload, out, s.offs[id])
		case s.soft.Has(id):
			l, lbytes = tr.sendSoftware(s, m, out, s.offs[id])
		default:
			l, lbytes = send(m.port, out)
		}
		lost += l
		lostBytes += lbytes
		clear(out)
		s.out[id] = out[:0]
		s.offs[id] = s.offs[id][:0]
	}
	s.used, s.soft = 0, 0
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

// add queues f, with its offload o when withOffs is set, for member id.
// Call with s.mu held.
func (s *txSlot) add(id int, f []byte, o platform.Offload, withOffs bool) {
	s.out[id] = append(s.out[id], f)
	s.used |= 1 << uint(id)
	if withOffs {
		s.offs[id] = append(s.offs[id], o)
		if !o.IsPlain() {
			s.soft |= 1 << uint(id)
		}
	}
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

// sendOffload is send for a member that carries offloads: frames go with
// their offloads offs.
func sendOffload(p platform.OffloadPort, frames [][]byte, offs []platform.Offload) (lost, lostBytes uint64) {
	bs := p.BatchSize()
	if bs <= 0 {
		bs = len(frames)
	}
	for len(frames) > 0 {
		k := min(bs, len(frames))
		chunk := frames[:k]
		n, _ := p.WriteBatchOffload(chunk, offs[:k])
		frames, offs = frames[k:], offs[k:]
		n = max(0, min(n, k))
		if n == k {
			continue
		}
		var b uint64
		for _, f := range chunk {
			b += uint64(len(f))
		}
		lost += uint64(k - n)
		lostBytes += b * uint64(k-n) / uint64(k)
	}
	return lost, lostBytes
}

// sendSoftware is send for member m, which carries no offloads, of frames
// some of whose offloads offs are not plain: they are finished in
// software in s's finisher first. It returns how many of frames were not
// sent (a frame dropped for its offload, or as many as the segments m
// did not send; at most len(frames)), and an estimate of their bytes.
func (tr *Trunk) sendSoftware(s *txSlot, m *Member, frames [][]byte, offs []platform.Offload) (lost, lostBytes uint64) {
	st := s.fin.WriteTo(m.port, 0, frames, offs)
	if st.Finished > 0 {
		tr.softOffload.Add(uint64(st.Finished))
	}
	if st.Dropped > 0 {
		tr.offloadDropped.Add(uint64(st.Dropped))
		tr.noteOffloadDropped(m.name, st.ErrOffload, st.Err)
	}
	written := len(frames) - st.Dropped - st.Finished + st.Segments
	l := min(st.Dropped+max(written-st.Sent, 0), len(frames))
	if l == 0 {
		return 0, 0
	}
	var b uint64
	for _, f := range frames {
		b += uint64(len(f))
	}
	return uint64(l), b * uint64(l) / uint64(len(frames))
}

var (
	_ platform.Port        = (*Trunk)(nil)
	_ platform.OffloadPort = (*Trunk)(nil)
)
