// Package lacp is the IEEE 802.1AX Link Aggregation Control Protocol of a
// swctl trunk: a state machine driven by the frames, link changes and
// clock ticks it is given, doing no I/O of its own. Its frames go out
// through a send function; its clock is injected (clock.Fake in tests).
//
// # Wire format
//
// LACPDUs and Marker PDUs are untagged frames to the slow-protocols
// address 01:80:c2:00:00:02, ethertype 0x8809, subtype 1 (LACP) or 2
// (marker), 110 octets after the Ethernet header (FrameLen = 124 bytes,
// no FCS). LACPDU, Marker and Decode read frames in place, allocating
// nothing; EncodeLACP and EncodeMarker write into a caller's buffer.
//
// We send version 1 and accept any version ≥ 1, read by its version-1
// fields (a version-2 LACPDU's extra TLVs are ignored). Frames that are
// not slow protocols, other subtypes, PDUs shorter than 110 octets, of
// version 0, or whose TLVs have the wrong type or length (actor 1/20,
// partner 2/20, collector 3/16, terminator 0/0; marker 1 or 2/16, then
// 0/0) are counted per port by cause (BadCounts) and dropped.
//
// A Marker Information PDU is answered at once with a Marker Response
// carrying the same requester port, system and transaction ID, out of
// the port it came from, with that port's MAC as source.
//
// # State machines
//
// One Actor serves one trunk; each member port has the machines of
// 802.1AX, simplified as Open vSwitch and OpenBSD do:
//
//   - Receive: PORT_DISABLED while the link is down. When it comes up,
//     EXPIRED. A LACPDU makes the port CURRENT, records the partner and
//     restarts current_while: ShortTimeoutTime (3 s) if our Timeout is
//     fast, LongTimeoutTime (90 s) if slow. current_while expiring in
//     CURRENT gives EXPIRED: the partner's Synchronization is cleared, we
//     advertise the short timeout and Expired, send fast, and the port
//     is no longer selected, so it stops collecting and distributing at
//     once. After ShortTimeoutTime more without a LACPDU (802.1AX always
//     uses the short timeout there): DEFAULTED, the partner forgotten.
//     The default partner's Timeout is Short when ours is fast
//     (Partner_Admin_Port_State), so a defaulted port keeps sending every
//     FastPeriodicTime and a partner that starts late is heard at once.
//   - Periodic: none while the link is down or when we and the partner
//     are both passive (a passive port stays silent until it hears an
//     active partner); otherwise every FastPeriodicTime (1 s) when the
//     partner's Timeout bit asks for fast, SlowPeriodicTime (30 s) if not.
//     A partner switching to fast gets a LACPDU at once.
//   - Transmit: a LACPDU is needed when what we advertise changes, when
//     the partner's LACPDU shows it has us wrong, or when the periodic
//     timer fires; at most 3 go out per FastPeriodicTime, the rest wait.
//   - Selection: a port is a candidate when its link is up, its partner
//     CURRENT and aggregatable. Candidates whose partners report the same
//     system (priority and MAC) and key form a group. One group is the
//     active aggregator: the one with most candidates, ties broken by
//     lowest partner system priority, then system MAC, then key. Once one
//     of its ports has attached (mux ATTACHED or beyond) it is kept as
//     long as it has a candidate, even if another group grows larger
//     (stability: a new choice is made only when it empties). Before
//     that, while its ports still wait to attach, a better group may
//     take its place, so that the order in which LACPDUs arrive at
//     start-up does not decide.
//     Ports of other groups stay out, with Reason "partner differs from
//     the aggregator's"; every port not selected says why.
//   - Mux (independent control): DETACHED → WAITING (selected; waits
//     AggregateWaitTime, 2 s) → ATTACHED (we advertise Synchronization) →
//     COLLECTING once the partner is in sync → DISTRIBUTING once the
//     partner collects too. Losing the partner's sync falls back to
//     ATTACHED, losing its collecting to COLLECTING; losing selection
//     (link down, EXPIRED, DEFAULTED, another partner, another
//     aggregator) detaches. The partner is in sync only when its LACPDU
//     says so and describes our port as we are.
//
// # Using it
//
// The trunk creates one Actor with New, adds its members (AddPort), and
// then feeds it: Receive for every slow-protocols frame a member reads,
// LinkChanged for carrier events, Tick from a timer (every 100 ms is
// plenty). The Actor calls send, synchronously and with its lock held,
// for every frame to send; send must not call back into the Actor.
// Per frame, the data path asks Collecting (accept RX from this port?)
// and Distributing (may TX use it?), which read atomics and take no lock;
// the trunk reads them again after every call it makes into the Actor.
// Receive and Tick allocate nothing in steady state.
//
// Our port numbers are assigned 1, 2, ... in the order ports are added
// (lowest free number). Our key is Config.Key (default 1) for every port
// of the trunk; the system MAC should be the trunk's MAC, which tells
// trunks of one host apart. We impose no limit on ports per aggregator,
// so port priorities only inform the partner.
package lacp
