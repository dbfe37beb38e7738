//go:build swctl_panictest

package bridge

import (
	"bytes"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// This file is compiled only with the build tag swctl_panictest, into the
// binary the panic-supervisor integration test builds: a reader that
// receives PanicTestFrame panics, so the test can check that the daemon
// gives every interface back and exits non-zero. No other build has it.

// panicTest turns the check in read on.
const panicTest = true

// PanicTestType and PanicTestPayload mark the frame that makes a reader
// panic: IEEE local experimental EtherType, then this payload.
const PanicTestType = 0x88b5

// PanicTestPayload follows the EtherType in the frame that panics.
var PanicTestPayload = []byte("swctl-panic-test")

// panicOnTestFrame panics on a frame marked as above.
func panicOnTestFrame(b platform.Batch) {
	for _, f := range b.Frames {
		if len(f) >= frame.HeaderLen+len(PanicTestPayload) && frame.Ethernet(f).Type() == PanicTestType &&
			bytes.HasPrefix(f[frame.HeaderLen:], PanicTestPayload) {
			panic("bridge: the panic test's frame (build tag swctl_panictest)")
		}
	}
}
