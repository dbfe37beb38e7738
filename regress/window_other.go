//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// window needs the Linux forwarding-rate testbed.
func (b *rateBed) window(context.Context) (WindowSample, error) {
	return WindowSample{}, fmt.Errorf("regress: window benchmark testbed not implemented on %s", runtime.GOOS)
}
