package afpacket

import (
	"fmt"

	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// mmsg is the transmitter that sends with sendmmsg(2) on the port's first
// receive socket: one message per frame, its iovec pointing at the
// caller's frame (behind one for the virtio_net_hdr with Offload), so the
// kernel copies each frame once, into its socket buffer. The TX ring
// sends its frames too large for a slot with one too.
type mmsg struct {
	// st is the port's state; immutable.
	st *portState
	// fd is the sending socket, which the receive side owns.
	fd int
	// msgs is the preallocated sendmmsg array; msgs[i] points at the
	// iovecs of message i.
	msgs []unix.Mmsghdr
	// iovs is the preallocated iovec array: one per message, or two (the
	// vnet header, the frame) with Offload.
	iovs []unix.Iovec
	// vhdrs holds the virtio_net_hdr of each message with Offload.
	vhdrs [][vnetHdrLen]byte
}

// newMmsg makes a sendmmsg transmitter on fd for up to n frames a call.
func newMmsg(st *portState, fd, n int) *mmsg {
	iovPerMsg := 1
	if st.offload {
		iovPerMsg = 2
	}
	m := &mmsg{
		st:   st,
		fd:   fd,
		msgs: make([]unix.Mmsghdr, n),
		iovs: make([]unix.Iovec, iovPerMsg*n),
	}
	if st.offload {
		m.vhdrs = make([][vnetHdrLen]byte, n)
	}
	for i := range m.msgs {
		m.msgs[i].Hdr.Iov = &m.iovs[iovPerMsg*i]
		m.msgs[i].Hdr.SetIovlen(iovPerMsg)
		if st.offload {
			m.iovs[2*i].Base = &m.vhdrs[i][0]
			m.iovs[2*i].SetLen(vnetHdrLen)
		}
	}
	return m
}

// send implements transmitter with one sendmmsg, or more when the kernel
// takes part of the batch.
func (m *mmsg) send(frames [][]byte, offs []platform.Offload) (int, error) {
	// fi is the index of the frame's iovec: behind the vnet header's
	// with Offload.
	stride, fi := 1, 0
	if m.st.offload {
		stride, fi = 2, 1
	}
	k := len(frames)
	for i, f := range frames {
		if m.st.offload {
			var o platform.Offload
			if offs != nil {
				o = offs[i]
			}
			o.EncodeVirtioHdr(m.vhdrs[i][:])
		}
		m.iovs[stride*i+fi].Base = &f[0]
		m.iovs[stride*i+fi].SetLen(len(f))
	}
	sent, bytes, dropped := 0, 0, 0
	var err error
	for i := 0; i < k; {
		n, errno := sendmmsg(m.fd, m.msgs[i:k], unix.MSG_DONTWAIT)
		if errno == 0 && n > 0 {
			for j := i; j < i+n; j++ {
				bytes += int(m.iovs[stride*j+fi].Len)
			}
			sent += n
			i += n
			continue
		}
		switch errno {
		case unix.EINTR:
			continue
		case 0, unix.EAGAIN, unix.ENOBUFS:
			// Queue full: the rest waits for no one.
			dropped += k - i
			i = k
		case unix.ENETDOWN, unix.ENXIO, unix.ENODEV:
			// The link went away under us: drop the rest.
			m.st.counters.AddError()
			dropped += k - i
			i = k
		case unix.EMSGSIZE, unix.EINVAL:
			// Too large for the kernel's rule (a full-size frame with an
			// 802.1ad tag gets no allowance), or a virtio_net_hdr the
			// kernel refuses: drop this one, go on.
			m.st.counters.AddError()
			dropped++
			i++
		default:
			m.st.counters.AddError()
			if err == nil {
				err = fmt.Errorf("afpacket %s: sendmmsg: %w", m.st.name, errno)
			}
			dropped++
			i++
		}
	}
	for j := 0; j < k; j++ {
		m.iovs[stride*j+fi].Base = nil // keep no caller memory alive
	}
	if sent > 0 {
		m.st.counters.AddTx(sent, bytes)
	}
	if dropped > 0 {
		m.st.counters.AddTxDropped(dropped)
	}
	return sent, err
}

// close implements transmitter: the socket belongs to the receive side.
// room returns -1: the kernel's queue says it is full only by refusing.
func (m *mmsg) room(int) int { return -1 }

// fit implements transmitter: -1, as room.
func (m *mmsg) fit([][]byte) int { return -1 }

func (m *mmsg) close() error { return nil }
