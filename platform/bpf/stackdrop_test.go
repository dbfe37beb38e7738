package bpf

import (
	"runtime"
	"strings"
	"testing"
)

// iow is _IOW(group, num, size) as OpenBSD's sys/sys/ioccom.h builds it:
// IOC_IN, the argument's size in bits 16-28, the group, the number.
func iow(group byte, num, size uint32) uint32 {
	const iocIn = 0x80000000
	return iocIn | (size&0x1fff)<<16 | uint32(group)<<8 | num
}

func TestFildropConstants(t *testing.T) {
	cases := []struct {
		name      string
		got, want uint32
	}{
		// sys/net/bpf.h: #define BIOCSFILDROP _IOW('B', 121, u_int).
		{"BIOCSFILDROP", biocSFildrop, iow('B', 121, 4)},
		{"BPF_FILDROP_PASS", bpfFildropPass, 0},
		{"BPF_FILDROP_CAPTURE", bpfFildropCapture, 1},
		{"BPF_FILDROP_DROP", bpfFildropDrop, 2},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

func TestDropFromStackUnavailable(t *testing.T) {
	if runtime.GOOS == "openbsd" {
		t.Skip("OpenBSD has the drop: TestIntegrationDropFromStack covers it")
	}
	d, err := DropFromStack("em0")
	want := "bpf em0: drop from stack: not available on " + runtime.GOOS
	if d != nil || err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("DropFromStack(em0) = %v, %v; want nil and an error starting %q", d, err, want)
	}
}
