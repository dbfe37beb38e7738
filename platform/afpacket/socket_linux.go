package afpacket

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// This file opens a port's sockets and closes them: the receive sockets
// with their options, rings and fanout group; the send side's transmitter;
// the memberships of the first socket; the kernel's statistics.

// openPort is Open on Linux: the receive sockets first, then the control
// path and the transmitter, which use the first of them.
func openPort(name string, opts Options) (*Port, error) {
	opts, err := opts.withDefaults(name)
	if err != nil {
		return nil, err
	}
	p := &Port{headroom: opts.Headroom}
	ifi, err := p.Lookup("afpacket", name, opts.BatchSize)
	if err != nil {
		return nil, err
	}
	p.offload, p.log = opts.Offload, opts.Logger
	queues, err := openQueues(ifi.Index, ifi.MTU, opts)
	if err != nil {
		return nil, fmt.Errorf("afpacket %s: %w", name, err)
	}
	if err := p.rx.init(&p.portState, queues, opts); err != nil {
		_ = p.rx.close()
		return nil, fmt.Errorf("afpacket %s: %w", name, err)
	}
	p.ctl = control{st: &p.portState, ifindex: ifi.Index, fd: queues[0].fd}
	t, err := openTransmitter(&p.portState, queues[0].fd, ifi.Index, ifi.MTU, opts)
	if err != nil {
		_ = p.rx.close()
		return nil, fmt.Errorf("afpacket %s: %w", name, err)
	}
	p.tx.init(&p.portState, t)
	return p, nil
}

// openQueues makes the receive sockets, Workers of them or one, with their
// rings, bound to ifindex; the first also sends with sendmmsg. Each socket
// is created for no protocol, so nothing queues on it until bind, after
// its ring exists. With Workers, every socket binds behind a filter that
// drops everything, joins the fanout group, and only then loses the
// filter: no socket ever sees a frame that another one of the group also
// gets. On failure it closes what it made.
func openQueues(ifindex, mtu int, opts Options) (queues []*rxQueue, err error) {
	defer func() {
		if err != nil {
			for _, q := range queues {
				_ = q.close()
			}
		}
	}()
	n := max(opts.Workers, 1)
	for range n {
		q := &rxQueue{fd: -1}
		queues = append(queues, q)
		if q.fd, err = openSocket(opts); err != nil {
			return queues, err
		}
		if q.ring, err = openRing(q.fd, mtu, opts); err != nil {
			return queues, err
		}
		if n > 1 {
			if err := attachDropAll(q.fd); err != nil {
				return queues, fmt.Errorf("setsockopt SO_ATTACH_FILTER: %w", err)
			}
		}
		sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}
		if opts.SendOnly {
			// Protocol 0: the socket joins no receive path at all.
			sa.Protocol = 0
		}
		if err := unix.Bind(q.fd, sa); err != nil {
			return queues, fmt.Errorf("bind: %w", err)
		}
	}
	if opts.QdiscBypass {
		// The socket that sends with sendmmsg.
		if err := unix.SetsockoptInt(queues[0].fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
			return queues, fmt.Errorf("setsockopt PACKET_QDISC_BYPASS: %w", err)
		}
	}
	if n > 1 {
		return queues, joinFanout(queues)
	}
	return queues, nil
}

// openSocket makes one receive socket with its options, no ring yet.
func openSocket(opts Options) (int, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := setPacketOptions(fd, []packetOption{
		{"PACKET_VERSION", unix.PACKET_VERSION, unix.TPACKET_V2, true},
		{"PACKET_RESERVE", unix.PACKET_RESERVE, opts.Headroom, true},
		{"PACKET_IGNORE_OUTGOING", unix.PACKET_IGNORE_OUTGOING, 1, true},
		// Before the ring: the kernel refuses it (EBUSY) once a ring
		// exists.
		{"PACKET_VNET_HDR", unix.PACKET_VNET_HDR, 1, opts.Offload},
	}); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// packetOption is an integer SOL_PACKET socket option, set when on.
type packetOption struct {
	// name is the option's C name, for errors.
	name string
	// opt and val are the option and its value.
	opt, val int
	// on is set when the option is to be set at all.
	on bool
}

// setPacketOptions sets the options of opts that are on, in order.
func setPacketOptions(fd int, opts []packetOption) error {
	for _, o := range opts {
		if !o.on {
			continue
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, o.opt, o.val); err != nil {
			return fmt.Errorf("setsockopt %s: %w", o.name, err)
		}
	}
	return nil
}

// joinFanout puts the sockets of queues in one fanout group and then
// takes their drop-everything filters off. Hash mode keeps a flow on one
// socket, so in order; DEFRAG hashes the fragments of a datagram as a
// whole; the group, not each socket, ignores outgoing frames
// (PACKET_IGNORE_OUTGOING does not apply to a fanout member); the kernel
// picks an unused group id.
func joinFanout(queues []*rxQueue) error {
	flags := unix.PACKET_FANOUT_FLAG_DEFRAG | unix.PACKET_FANOUT_FLAG_IGNORE_OUTGOING
	if err := unix.SetsockoptInt(queues[0].fd, unix.SOL_PACKET, unix.PACKET_FANOUT,
		(unix.PACKET_FANOUT_HASH|flags|unix.PACKET_FANOUT_FLAG_UNIQUEID)<<16); err != nil {
		return fmt.Errorf("setsockopt PACKET_FANOUT: %w", err)
	}
	arg, err := unix.GetsockoptInt(queues[0].fd, unix.SOL_PACKET, unix.PACKET_FANOUT)
	if err != nil {
		return fmt.Errorf("getsockopt PACKET_FANOUT: %w", err)
	}
	for _, q := range queues[1:] {
		if err := unix.SetsockoptInt(q.fd, unix.SOL_PACKET, unix.PACKET_FANOUT,
			arg&0xffff|(unix.PACKET_FANOUT_HASH|flags)<<16); err != nil {
			return fmt.Errorf("setsockopt PACKET_FANOUT (join group %d): %w", arg&0xffff, err)
		}
	}
	for _, q := range queues {
		if err := unix.SetsockoptInt(q.fd, unix.SOL_SOCKET, unix.SO_DETACH_FILTER, 0); err != nil {
			return fmt.Errorf("setsockopt SO_DETACH_FILTER: %w", err)
		}
	}
	return nil
}

// attachDropAll gives the socket a classic BPF filter that accepts
// nothing (a single "ret #0").
func attachDropAll(fd int) error {
	filter := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
}

// htons converts a protocol number to network byte order.
func htons(v uint16) uint16 { return v<<8 | v>>8 }

// control is a port's control path: the memberships its first socket
// holds, which the kernel drops when the socket closes.
type control struct {
	// st is the port's state; immutable.
	st *portState
	// mu serialises membership changes and statistics reads, and keeps
	// Close from closing the sockets under them.
	mu sync.Mutex
	// ifindex is the interface index the sockets are bound to.
	ifindex int
	// fd is the first receive socket, which holds the memberships. The
	// receive side owns it.
	fd int
}

// setPromisc is SetPromisc.
func (c *control) setPromisc(on bool) error {
	return c.setFlag(&c.st.promisc, on, unix.PACKET_MR_PROMISC, "promiscuous")
}

// setAllMulti is SetAllMulti.
func (c *control) setAllMulti(on bool) error {
	return c.setFlag(&c.st.allmulti, on, unix.PACKET_MR_ALLMULTI, "all-multicast")
}

// setFlag changes a counted, socket-owned membership of type typ.
func (c *control) setFlag(state *atomic.Bool, on bool, typ uint16, what string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.closed.Load() {
		if !on {
			return nil
		}
		return fmt.Errorf("afpacket %s: %s on: %w", c.st.Name(), what, platform.ErrClosed)
	}
	if state.Load() == on {
		return nil
	}
	if err := c.membership(on, typ, nil); err != nil {
		return fmt.Errorf("afpacket %s: %s %s: %w", c.st.Name(), what, onOff(on), err)
	}
	state.Store(on)
	return nil
}

// join is JoinMulticast.
func (c *control) join(mac net.HardwareAddr) error {
	if len(mac) != 6 || mac[0]&1 == 0 {
		return fmt.Errorf("afpacket %s: join multicast %v: not a multicast MAC address", c.st.Name(), mac)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.closed.Load() {
		return fmt.Errorf("afpacket %s: join multicast %v: %w", c.st.Name(), mac, platform.ErrClosed)
	}
	if err := c.membership(true, unix.PACKET_MR_MULTICAST, mac); err != nil {
		return fmt.Errorf("afpacket %s: join multicast %v: %w", c.st.Name(), mac, err)
	}
	return nil
}

// membership adds or drops a packet_mreq on the socket. mu is held.
func (c *control) membership(add bool, typ uint16, addr []byte) error {
	mreq := unix.PacketMreq{Ifindex: int32(c.ifindex), Type: typ, Alen: uint16(len(addr))}
	copy(mreq.Address[:], addr)
	opt := unix.PACKET_DROP_MEMBERSHIP
	if add {
		opt = unix.PACKET_ADD_MEMBERSHIP
	}
	if err := unix.SetsockoptPacketMreq(c.fd, unix.SOL_PACKET, opt, &mreq); err != nil {
		c.st.counters.AddError()
		return err
	}
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// refreshStats is the receive side's readStats for Counters, unless the
// port is closed (Close read them last).
func (p *Port) refreshStats() {
	p.ctl.mu.Lock()
	defer p.ctl.mu.Unlock()
	if !p.closed.Load() {
		p.rx.readStats()
	}
}

// close is Close: it wakes the readers and takes every lock once, so
// that it waits for the readers, a writer and a control call to leave;
// as each checks closed under its lock, none touches the sockets or the
// rings again. Then, without the locks, it reads the statistics a last
// time and closes the receive side and the transmitter. Unmapping the
// rings and closing a packet socket (which waits for an RCU grace
// period) take tens of milliseconds on a busy machine: a bridge reader
// sending to a port being removed gets ErrClosed at once instead of
// waiting for them with its own ring filling up.
func (p *Port) close() error {
	var err error
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		err = p.rx.wake()
		p.rx.lockAll()
		p.tx.mu.Lock()
		p.ctl.mu.Lock()
		p.ctl.mu.Unlock()
		p.tx.mu.Unlock()
		p.rx.unlockAll()
		if p.teardown != nil {
			p.teardown()
		}
		p.rx.readStats()
		err = errors.Join(err, p.rx.close(), p.tx.close())
		p.ctl.fd = -1 // closed with the receive side
		p.promisc.Store(false)
		p.allmulti.Store(false)
		if err != nil {
			err = fmt.Errorf("afpacket %s: close: %w", p.Name(), err)
		}
	})
	return err
}
