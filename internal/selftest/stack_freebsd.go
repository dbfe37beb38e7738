package selftest

// bsdStack is the zero stackGuard on FreeBSD: its bpf has no filter-drop,
// and swctl does not change the host's firewall (ipfw layer-2 rules, pf
// ether rules) to get one.
var bsdStack stackGuard

// bsdNoStack says why the check skips.
const bsdNoStack = "no stack guard on freebsd: bpf has no filter-drop, and swctl does not add firewall rules (ipfw layer 2, pf ether): a member's own stack still sees the frames it receives"
