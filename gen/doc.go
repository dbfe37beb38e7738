// Package gen is swctl's traffic generator: it builds Ethernet/IPv4/UDP
// test frames for many flows, sends them on any platform.Port at maximum
// rate, paced at a fixed frame rate, or with a bounded window of frames in
// flight, and counts them at the far end: loss, duplicates, reordering and
// latency. Package rfc2544 searches for the highest zero-loss rate with it.
//
// # Frames
//
// Every frame is an untagged IPv4/UDP datagram from 198.18.0.0/15 (the
// RFC 2544 benchmarking range). Flow i (0 <= i < Flows) uses source address
// SrcIP+i and UDP source port SrcPort+i, so that L3 and L4 hashes (trunks,
// PACKET_FANOUT, RSS) spread the flows. The first 18 bytes of the UDP
// payload carry the run ID (4 bytes), the sequence number (6 bytes) and
// the sender's monotonic clock in nanoseconds (8 bytes, 0 = not stamped),
// which is why the shortest frame is 60 bytes: veth carries RFC 2544's
// 64-byte frames as 60 bytes, without the 4-byte FCS (see FrameSize).
// Sequence numbers count over the whole run; frame seq belongs to flow
// seq % Flows.
//
// # Timing
//
// Latency is measured against one monotonic epoch of the process, so the
// sender and the receiver must run in the same process (as swctl bench
// does). Pacing busy-waits on the monotonic clock and sends small bursts;
// it never sends a second's quota at once.
//
// # Allocations
//
// Sender.Run and Receiver.Run allocate nothing per frame: buffers are
// made once at NewSender and NewReceiver, and counters are atomics that
// other goroutines (a progress line, a window-mode sender) read while a run
// goes on.
package gen
