// Package stp is the spanning tree of a swctl bridge: the Rapid Spanning
// Tree Protocol of IEEE 802.1D-2004 clause 17, with its compatibility with
// the 802.1D Spanning Tree Protocol, written as a pure, clock-driven
// package like lacp: no I/O, no goroutines, frames in and out as byte
// slices.
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
// octets. Anything else is dropped, with the Cause.
package stp
