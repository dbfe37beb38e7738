//go:build !linux

package regress

import (
	"fmt"
	"runtime"
)

func RunBench(BenchConfig) error {
	return fmt.Errorf("the netns testbed is not implemented on %s (Linux network namespaces and veth)", runtime.GOOS)
}
