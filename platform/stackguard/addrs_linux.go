package stackguard

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// tcActUnspec is TC_ACT_UNSPEC (include/uapi/linux/pkt_cls.h), TCX_NEXT
// for tcx: the packet goes on to the next program, or to the stack.
const tcActUnspec = -1

// Offsets of an untagged frame, which a tc program sees from its
// Ethernet header on.
const (
	offEtherType = 12
	offIPv4Dst   = 14 + 16
	offIPv6Dst   = 14 + 24
)

// addrsSpec is the program that drops IPv4 and IPv6 packets to addrs and
// passes everything else. It reads with the classic LD_ABS loads, which
// check bounds themselves (a short packet ends the program with 0, pass)
// and convert to host order.
func addrsSpec(addrs []netip.Addr) *ebpf.ProgramSpec {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // LD_ABS reads the packet of the context in r6
		asm.LoadAbs(offEtherType, asm.Half),
		asm.JEq.Imm32(asm.R0, 0x0800, "ipv4"),
		asm.JEq.Imm32(asm.R0, 0x86dd, "ipv6"),
		asm.Ja.Label("pass"),
	}
	var v4, v6 asm.Instructions
	for i, a := range addrs {
		if a.Is4() {
			b := a.As4()
			v4 = append(v4, asm.JEq.Imm32(asm.R0, int32(binary.BigEndian.Uint32(b[:])), "drop"))
			continue
		}
		b := a.As16()
		next := fmt.Sprintf("next%d", i)
		for w := range 4 {
			v6 = append(v6,
				asm.LoadAbs(int32(offIPv6Dst+4*w), asm.Word),
				asm.JNE.Imm32(asm.R0, int32(binary.BigEndian.Uint32(b[4*w:])), next))
		}
		v6 = append(v6, asm.Ja.Label("drop"), asm.Mov.Imm(asm.R0, 0).WithSymbol(next))
	}
	insns = append(insns, asm.LoadAbs(offIPv4Dst, asm.Word).WithSymbol("ipv4"))
	insns = append(insns, v4...)
	insns = append(insns, asm.Ja.Label("pass"), asm.Mov.Imm(asm.R0, 0).WithSymbol("ipv6"))
	insns = append(insns, v6...)
	insns = append(insns,
		asm.Mov.Imm(asm.R0, tcActUnspec).WithSymbol("pass"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, tcActShot).WithSymbol("drop"),
		asm.Return(),
	)
	return &ebpf.ProgramSpec{
		Name:         "swctl_dropaddrs",
		Type:         ebpf.SchedCLS,
		Instructions: insns,
		License:      "Dual MIT/GPL",
	}
}
