//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// measureBulk needs the Linux testbed.
func measureBulk(context.Context, *bed, BulkConfig) ([]BulkSample, error) {
	return nil, fmt.Errorf("regress: bulk testbed not implemented on %s", runtime.GOOS)
}
