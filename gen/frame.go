package gen

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/swctl/swctl/frame"
)

// Frame sizes, as the port carries them: without the 4-byte FCS.
const (
	// MinSize is the shortest test frame: Ethernet, IPv4 and UDP headers
	// and the 18-byte mark (RFC 2544's 64-byte frame without its FCS).
	MinSize = offEnd
	// MaxSize is the longest test frame: a 9216-byte jumbo payload.
	MaxSize = 9216 + frame.HeaderLen
	// FCSLen is the length of the Ethernet frame check sequence, which
	// RFC 2544's frame sizes include and veth does not carry.
	FCSLen = 4
	// MaxFlows is the largest number of flows a Stream may have.
	MaxFlows = 1 << 20
)

// RFC2544Sizes are the frame sizes RFC 2544 section 9.1 lists for
// Ethernet, FCS included. FrameSize converts them to what a port carries.
var RFC2544Sizes = []int{64, 128, 256, 512, 1024, 1280, 1518}

// FrameSize returns the length a port carries for an RFC 2544 frame size
// (which counts the 4-byte FCS): FrameSize(64) is 60, FrameSize(1518) 1514.
func FrameSize(rfc2544Size int) int { return rfc2544Size - FCSLen }

// Offsets in a test frame.
const (
	offIP     = frame.HeaderLen // IPv4 header
	offUDP    = offIP + 20      // UDP header
	offRun    = offUDP + 8      // run ID, 4 bytes
	offSeq    = offRun + 4      // sequence number, 6 bytes
	offTime   = offSeq + 6      // send time in ns since epoch, 8 bytes
	offEnd    = offTime + 8     // end of the mark
	ipProtUDP = 17
)

// DefaultSrcIP is the zero Stream's flow 0 source address, in
// 198.18.0.0/15, the range RFC 2544 appendix C reserves for benchmarks.
var DefaultSrcIP = netip.AddrFrom4([4]byte{198, 18, 0, 1})

// DefaultDstIP is the zero Stream's destination address, in the same
// range.
var DefaultDstIP = netip.AddrFrom4([4]byte{198, 19, 0, 1})

// DefaultSrcPort is the zero Stream's flow 0 UDP source port.
const DefaultSrcPort = 1024

// DefaultDstPort is the zero Stream's UDP destination port: discard.
const DefaultDstPort = 9

// Stream describes the frames of one run: both the Sender and the
// Receiver are made from it.
type Stream struct {
	// Src is the source MAC address of every frame.
	Src frame.MAC
	// Dst is the destination MAC address of every frame.
	Dst frame.MAC
	// SrcIP is flow 0's IPv4 source address; flow i uses SrcIP+i. The
	// zero value means DefaultSrcIP.
	SrcIP netip.Addr
	// DstIP is the IPv4 destination address of every flow; the zero value
	// means DefaultDstIP.
	DstIP netip.Addr
	// SrcPort is flow 0's UDP source port; flow i uses SrcPort+i, modulo
	// 65536. 0 means DefaultSrcPort.
	SrcPort uint16
	// DstPort is the UDP destination port of every flow; the Receiver
	// ignores frames to other ports. 0 means DefaultDstPort.
	DstPort uint16
	// Flows is the number of flows, 1 to MaxFlows; 0 means 1.
	Flows int
	// Size is the frame length without FCS, MinSize to MaxSize; 0 means
	// MinSize.
	Size int
	// RunID tells this run's frames from any other's. 0 means none yet:
	// Bench picks a fresh one for every run.
	RunID uint32
}

// WithDefaults returns s with zero fields set to their defaults, or an
// error naming the first field out of range.
func (s Stream) WithDefaults() (Stream, error) {
	s.SrcIP = cmp.Or(s.SrcIP, DefaultSrcIP) // the zero Addr is the invalid one
	s.DstIP = cmp.Or(s.DstIP, DefaultDstIP)
	s.SrcPort = cmp.Or(s.SrcPort, DefaultSrcPort)
	s.DstPort = cmp.Or(s.DstPort, DefaultDstPort)
	s.Flows = cmp.Or(s.Flows, 1)
	s.Size = cmp.Or(s.Size, MinSize)
	switch {
	case !s.SrcIP.Is4():
		return s, fmt.Errorf("source address %v: not an IPv4 address", s.SrcIP)
	case !s.DstIP.Is4():
		return s, fmt.Errorf("destination address %v: not an IPv4 address", s.DstIP)
	case s.Flows < 1 || s.Flows > MaxFlows:
		return s, fmt.Errorf("flows %d out of range 1-%d", s.Flows, MaxFlows)
	case s.Size < MinSize || s.Size > MaxSize:
		return s, fmt.Errorf("frame size %d out of range %d-%d (without FCS)", s.Size, MinSize, MaxSize)
	}
	return s, nil
}

// template writes the parts of a frame that are the same for every flow
// and sequence number into b (len(b) == s.Size), and returns the partial
// one's-complement sum of the IPv4 header without its source address.
// s has its defaults.
func (s Stream) template(b []byte) uint32 {
	clear(b)
	frame.Encode(b, s.Dst, s.Src, frame.TypeIPv4)
	ip := b[offIP:offUDP]
	ip[0] = 0x45 // version 4, 5 words
	binary.BigEndian.PutUint16(ip[2:4], uint16(s.Size-offIP))
	binary.BigEndian.PutUint16(ip[6:8], 0x4000) // don't fragment
	ip[8] = 64                                  // TTL
	ip[9] = ipProtUDP
	copy(ip[16:20], s.DstIP.AsSlice())
	binary.BigEndian.PutUint16(b[offUDP+2:], s.DstPort)
	binary.BigEndian.PutUint16(b[offUDP+4:], uint16(s.Size-offUDP))
	// UDP checksum 0: none (allowed over IPv4).
	binary.BigEndian.PutUint32(b[offRun:], s.RunID)
	var sum uint32 // the checksum and source address are still 0
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	return sum
}

// stamp writes what differs between frames into b, which holds a
// template: flow's source address and port, the IPv4 checksum, the
// sequence number and the send time (0 = not stamped).
func (s Stream) stamp(b []byte, base uint32, srcIP uint32, seq uint64, now int64) {
	flow := uint32(seq % uint64(s.Flows))
	src := srcIP + flow
	binary.BigEndian.PutUint32(b[offIP+12:], src)
	sum := base + src>>16 + src&0xffff
	sum = sum&0xffff + sum>>16
	sum = sum&0xffff + sum>>16
	binary.BigEndian.PutUint16(b[offIP+10:], ^uint16(sum))
	binary.BigEndian.PutUint16(b[offUDP:], s.SrcPort+uint16(flow))
	binary.BigEndian.PutUint16(b[offSeq:], uint16(seq>>32))
	binary.BigEndian.PutUint32(b[offSeq+2:], uint32(seq))
	binary.BigEndian.PutUint64(b[offTime:], uint64(now))
}

// Frame returns a new frame of s (with its defaults) carrying seq and the
// send time now (0 = not stamped). It allocates; the Sender does not use
// it. It is for tests and tools that need a single frame.
func (s Stream) Frame(seq uint64, now int64) ([]byte, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, err
	}
	b := make([]byte, s.Size)
	s.stamp(b, s.template(b), s.srcIP(), seq, now)
	return b, nil
}

// srcIP is s's source IPv4 address as a number.
func (s Stream) srcIP() uint32 { return binary.BigEndian.Uint32(s.SrcIP.AsSlice()) }

// Mark is what a test frame carries for the receiver.
type Mark struct {
	// RunID is the run the frame belongs to.
	RunID uint32
	// Seq is the frame's sequence number in its run (48 bits).
	Seq uint64
	// Time is the sender's clock (Now) when it sent the frame; 0 when
	// it was not stamped.
	Time int64
	// DstPort is the UDP destination port.
	DstPort uint16
}

// Decode reads the mark of a test frame: an IPv4 (5-word header) UDP
// frame, with at most one 802.1Q or 802.1ad tag, long enough to hold a
// mark. It reports false for any other frame. It does not allocate and
// does not keep f.
func Decode(f []byte) (Mark, bool) {
	if frame.Ethernet(f).IsTagged() {
		f = f[frame.TagLen:] // offsets below are for an untagged frame
	}
	if len(f) < offEnd || binary.BigEndian.Uint16(f[12:14]) != frame.TypeIPv4 ||
		f[offIP] != 0x45 || f[offIP+9] != ipProtUDP {
		return Mark{}, false
	}
	return Mark{RunID: binary.BigEndian.Uint32(f[offRun:]), DstPort: binary.BigEndian.Uint16(f[offUDP+2:]),
		Seq:  uint64(binary.BigEndian.Uint16(f[offSeq:]))<<32 | uint64(binary.BigEndian.Uint32(f[offSeq+2:])),
		Time: int64(binary.BigEndian.Uint64(f[offTime:]))}, true
}

// epoch is the origin of Now.
var epoch = time.Now()

// Now returns the process's monotonic clock in nanoseconds since the
// package was initialised, never 0: the clock the sender stamps frames
// with and the receiver measures latency against.
func Now() int64 { return max(1, int64(time.Since(epoch))) }
