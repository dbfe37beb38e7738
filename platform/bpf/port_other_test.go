//go:build !openbsd && !freebsd

package bpf_test

import (
	"runtime"
	"testing"

	"github.com/swctl/swctl/platform/bpf"
)

func TestOpenNotImplemented(t *testing.T) {
	p, err := bpf.Open("em0", bpf.Options{})
	want := "bpf em0: not implemented on " + runtime.GOOS
	if p != nil || err == nil || err.Error() != want {
		t.Fatalf("Open(em0) = %v, %v; want nil, %q", p, err, want)
	}
}
