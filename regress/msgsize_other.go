//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// measureMsgSize needs the Linux testbed.
func measureMsgSize(context.Context, *bed, int, int) (Sample, error) {
	return Sample{}, fmt.Errorf("regress: message-size testbed not implemented on %s", runtime.GOOS)
}
