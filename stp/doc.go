// Package stp is the spanning tree of a swctl bridge: the Rapid Spanning
// Tree Protocol of IEEE 802.1D-2004 clause 17, with its compatibility with
// the 802.1D Spanning Tree Protocol of the Linux kernel bridge and older
// switches. Like lacp, it is a pure package driven by the frames, link
// changes and clock ticks it is given: no I/O, no goroutines, frames in
// and out as byte slices, the clock injected (clock.Fake in tests).
//
// # Wire format
//
// BPDUs are IEEE 802.3 frames to the Bridge Group Address
// 01:80:c2:00:00:00 whose type field is a length, with the LLC header
// 42 42 03 (HeaderLen = 17 bytes before the BPDU). A Configuration BPDU is
// 35 octets, a Topology Change Notification BPDU 4, an RST BPDU 36
// (802.1D-2004 9.3). We encode them zero-padded to 60 bytes (FrameLen,
// the Ethernet minimum without FCS), the 802.3 length giving the BPDU's
// own size. Decode reads frames in place, allocating nothing, and
// validates as 802.1D-2004 9.3.4 does: a Configuration BPDU (any version)
// of at least 35 octets whose message age is below its max age, a TCN
// BPDU (any version), or an RST BPDU of version 2 or later (an MSTP
// BPDU, version 3, is read as RSTP by its first 36 octets) of at least 36
// octets. Anything else is dropped and counted per port by cause
// (BadCounts), as are our own Configuration BPDUs looped back and BPDUs
// on a port that is down.
//
// # State machines
//
// One Bridge runs the machines of 802.1D-2004 clause 17 for all its
// ports, named as there: Port Timers (17.22), Port Receive (17.23), Port
// Protocol Migration (17.24), Bridge Detection (17.25), Port Transmit
// (17.26), Port Information (17.27), Port Role Selection (17.28), Port
// Role Transitions (17.29), Port State Transition (17.30) and Topology
// Change (17.31). Each event (a BPDU, a link change, a second passing, a
// configuration change) runs them all, round after round, until none
// changes state; then each port sends what it has to. In short:
//
//   - Roles: the bridge with the lowest identifier (priority, then MAC)
//     is the root; each other bridge's root port is its best path there
//     (root path cost, then the designated bridge, the designated port,
//     our own port identifier); on each segment the port offering the
//     best path is designated; the others are alternate (another bridge
//     is designated) or backup (another port of ours is). Information not
//     refreshed within three hello times, or that has travelled beyond
//     its max age, is dropped.
//   - Fast convergence: on a point-to-point link a designated port that
//     does not forward proposes; the bridge across makes every other
//     port of its own safe (discarding, or agreed downstream) and agrees;
//     the proposing port then forwards at once, with no timer. Without
//     an agreement a port waits its fdWhile discarding, then learning.
//   - Edge ports forward at once and stop being edge ports at their first
//     BPDU. With autoedge, a designated port that proposed and heard
//     nothing for MigrateTime (3 s; MaxAge on a shared segment) becomes
//     one.
//   - Topology changes: a non-edge port that starts forwarding, or a TC
//     heard on a port, makes every other forwarding port flush its
//     learned addresses (Outputs.Flush) and signal the change (the TC
//     flag for HelloTime + 1, or TCN BPDUs to an 802.1D root until it
//     acknowledges; a TCN we receive is acknowledged and, on an 802.1D
//     segment, signalled for MaxAge + FwdDelay). A port that stops
//     learning is flushed too. Status counts the changes.
//   - STP compatibility: a port first sends RST BPDUs for MigrateTime,
//     then listens; a Configuration or TCN BPDU makes it speak 802.1D
//     (Configuration BPDUs as designated port, TCN BPDUs as root port,
//     FwdDelay timers) for at least MigrateTime, and an RST BPDU brings it
//     back. The Linux kernel's STP drops BPDUs of any version but 0, so
//     it hears us only once our port has fallen back. MCheck forces a
//     port back to RSTP; Config.Protocol STP (Force Protocol Version 0)
//     keeps every port on 802.1D.
//   - Transmission: a designated port sends every HelloTime; any port
//     sends when it has new information, at most HoldCount BPDUs a second.
//
// # Departures from 802.1D-2004
//
// Where 802.1D-2004 has known errors we follow IEEE 802.1Q-2011, which
// corrected them, as mstpd and Open vSwitch do: an agreement given or
// received survives new information only if that information is not worse
// (betterorsameInfo); a dispute (a worse designated port that is
// learning) clears agreed and makes the port discard; allSynced also
// waits for every port's information to be updated; a message repeated
// by our own port looped back is inferior, not repeated; a TCN BPDU sets
// rcvdTcn (802.1D-2004 never reads it). A message identical to the port's
// information is repeated, not superior (the same-sender rule of 17.6
// applies to changed information only). A root port speaking 802.1D sends
// TCN BPDUs only while it signals a topology change (tcWhile): 802.1D-2004
// would also send one for the new information of an agreement, which an
// 802.1D bridge takes for a topology change. Simplifications: the hello time
// in our BPDUs and of our timers is always ours, never the root's
// (received information still ages by its sender's); timers count whole
// seconds, stepped by Tick; fdbFlush is always an immediate flush (on a
// bridge forced to STP, 802.1D-2004 ages the entries out within FwdDelay
// instead); a topology change seen while the last one is still being
// signalled (HelloTime + 1, or MaxAge + FwdDelay towards 802.1D) is not
// counted again; hello times of 1–10 s are accepted, as 802.1D-1998 and
// the Linux bridge allow. Port numbers are
// given in the order ports are added (the lowest free one), so a restart
// that adds the ports in the same order gives the same identifiers.
//
// # Using it
//
// The daemon creates one Bridge per bridge with New (Config.MAC: the
// bridge's own MAC) and adds its members (AddPort, with the member's MAC,
// link and PortConfig), and then feeds it: Input for every frame a member
// reads for 01:80:c2:00:00:00, LinkChanged for carrier, speed and duplex
// events, Tick from a timer (every 100 ms is plenty). The Bridge calls
// Outputs.Send for every BPDU to send, out of the member whatever its
// state, and Outputs.Flush to drop a member's learned addresses; both
// synchronously with its lock held, so neither may call back into the
// Bridge. Per frame, the forwarding path reads the member's Gate
// (Bridge.Gate, kept from AddPort on): Learning says whether to learn the
// source address of a frame received on it, Forwarding whether frames may
// come in from it and go out to it. A Gate read is one atomic load. Input
// and Tick allocate nothing in steady state. Status and Ports are the
// snapshots `bridge show` prints; SetConfig, SetPortConfig and MCheck
// are the settings.
package stp
