//go:build openbsd || freebsd

package bpf

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
)

// pairEnv names two interfaces cabled to each other, "IFA,IFB", for the
// integration tests.
const pairEnv = "SWCTL_BPF_PAIR"

func TestHostLayout(t *testing.T) {
	want := openbsdLayout
	if runtime.GOOS == "freebsd" {
		if strconv.IntSize != 64 {
			t.Skipf("no recorded layout for FreeBSD on %s", runtime.GOARCH)
		}
		want = freebsd64Layout
	}
	if got := hostLayout(); got != want {
		t.Errorf("x/sys/unix BpfHdr gives layout %+v, the recorded %s one is %+v", got, runtime.GOOS, want)
	}
}

func TestOpenMissingInterface(t *testing.T) {
	_, err := Open("swctlnx0", Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "bpf swctlnx0: ") {
		t.Fatalf("Open(swctlnx0) = %v, want an error naming the port and the cause", err)
	}
}

// pair returns the interfaces named in SWCTL_BPF_PAIR, or skips.
func pair(t *testing.T) (a, b string) {
	t.Helper()
	v := os.Getenv(pairEnv)
	if v == "" {
		t.Skipf("needs %s=IFA,IFB: two interfaces cabled to each other, and root for /dev/bpf", pairEnv)
	}
	a, b, ok := strings.Cut(v, ",")
	if !ok || a == "" || b == "" || a == b {
		t.Fatalf("%s=%q: want two different interface names, IFA,IFB", pairEnv, v)
	}
	return a, b
}

// open opens a port and closes it when the test ends.
func open(t *testing.T, name string, opts Options) *Port {
	t.Helper()
	p, err := Open(name, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestIntegrationContract(t *testing.T) {
	a, b := pair(t)
	platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
		return open(t, a, Options{}), open(t, b, Options{})
	})
}

func TestIntegrationPromisc(t *testing.T) {
	a, _ := pair(t)
	p := open(t, a, Options{Promisc: true})
	if !p.Promisc() {
		t.Fatal("Promisc() = false after Open with Options.Promisc")
	}
	for _, on := range []bool{false, false, true, true, false} {
		if err := p.SetPromisc(on); err != nil {
			t.Fatalf("SetPromisc(%v): %v", on, err)
		}
		if p.Promisc() != on {
			t.Fatalf("Promisc() = %v after SetPromisc(%v)", p.Promisc(), on)
		}
	}
	if err := p.SetPromisc(true); err != nil {
		t.Fatalf("SetPromisc(true): %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if p.Promisc() {
		t.Error("Promisc() = true after Close")
	}
	if err := p.SetPromisc(false); err != nil {
		t.Errorf("SetPromisc(false) after Close = %v, want nil", err)
	}
}

func TestIntegrationBufferSize(t *testing.T) {
	a, _ := pair(t)
	p := open(t, a, Options{BufferSize: 64 << 10})
	if got := p.BufferSize(); got <= 0 || got > 64<<10 {
		t.Errorf("BufferSize() = %d after asking for 64 KiB, want 1-65536", got)
	}
}
