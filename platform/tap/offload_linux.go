package tap

import (
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// TUNSETOFFLOAD flags (include/uapi/linux/if_tun.h): what the reader of
// the TAP (we) takes from the host stack.
const (
	tunFCSUM   = 0x01 // TUN_F_CSUM: partial checksums
	tunFTSO4   = 0x02 // TUN_F_TSO4
	tunFTSO6   = 0x04 // TUN_F_TSO6
	tunFTSOECN = 0x08 // TUN_F_TSO_ECN
	tunFUSO4   = 0x20 // TUN_F_USO4 (Linux 6.2)
	tunFUSO6   = 0x40 // TUN_F_USO6 (Linux 6.2)
)

// setOffload tells the kernel which offloads we take: checksums, TSO and,
// where the kernel has it, UDP segmentation.
func (p *Port) setOffload() error {
	all := tunFCSUM | tunFTSO4 | tunFTSO6 | tunFTSOECN
	if err := unix.IoctlSetInt(p.fd, unix.TUNSETOFFLOAD, all|tunFUSO4|tunFUSO6); err == nil {
		return nil
	}
	return unix.IoctlSetInt(p.fd, unix.TUNSETOFFLOAD, all)
}

// readOffload is ReadBatch (only < 0) or ReadQueue(only) on a TAP with
// offloads: each frame's virtio_net_hdr, read in front of it, is checked
// against it and returned in b.Offs; one that does not describe its frame
// drops the frame.
func (p *Port) readOffload(b platform.Batch, only int) (int, error) {
	got, q, err := p.readFrom(b.Frames, only)
	n := 0
	for i := range got {
		f := b.Frames[i]
		o := frame.DecodeVirtioHdr(p.rxq[q].bufs[i][Headroom:])
		switch {
		case o.IsPlain():
		case frame.CheckOffload(f, o) != nil:
			p.counters.AddRxDropped(1)
			p.counters.AddRxBadOffload(1)
			continue
		case b.Offs == nil && (o.GSOType != frame.GSONone || frame.FinishChecksum(f, o) != nil):
			// The caller takes plain frames only.
			p.counters.AddRxDropped(1)
			continue
		}
		b.Frames[n] = f
		if b.Offs != nil {
			b.Offs[n] = o
		}
		n++
	}
	clear(b.Frames[n:got])
	return n, err
}

// writeOffload is WriteBatch on a TAP with offloads: the batch's TCP
// segments merged by flow where they can be (frame.GRO), each frame goes
// with its virtio_net_hdr in one writev.
func (p *Port) writeOffload(b platform.Batch) (int, error) {
	if !p.rlockOpen() {
		return 0, platform.ErrClosed
	}
	defer p.fdMu.RUnlock()
	for i := range p.gro {
		if s := &p.gro[i]; s.mu.TryLock() {
			sent := p.writeMerged(&s.g, b)
			s.mu.Unlock()
			return sent, nil
		}
	}
	// More writers than coalescers: this one writes as it is.
	sent := 0
	for i, f := range b.Frames {
		if p.writeOne(f, b.Offload(i)) {
			sent++
		}
	}
	return sent, nil
}

// writeMerged writes the frames g makes of b and returns how many of b's
// frames were sent.
func (p *Port) writeMerged(g *frame.GRO, b platform.Batch) int {
	sent := 0
	for k := range g.Plan(b.Frames, b.Offs) {
		f, o := g.Item(k, b.Frames, b.Offs)
		n := g.Frames(k)
		if !p.writeOne(f, o) {
			// writeOne counted one drop; the others of a merged frame
			// are dropped too.
			p.counters.AddTxDropped(n - 1)
			continue
		}
		sent += n
	}
	return sent
}

// writeOne writes f with its virtio_net_hdr and reports whether it was
// sent; a frame too short or too long for the MTU, or refused by the
// kernel, is counted as dropped.
func (p *Port) writeOne(f []byte, o frame.Offload) bool {
	if !frame.FitsMTU(f, o, p.MTU()) {
		p.counters.AddTxDropped(1)
		return false
	}
	var hdr [frame.VirtioHdrLen]byte
	o.EncodeVirtioHdr(hdr[:])
	var err error = unix.EINTR
	for err == unix.EINTR {
		err = writev2(p.txFD(f), hdr[:], f)
	}
	return p.countWrite(err, len(f))
}
