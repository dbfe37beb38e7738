//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

func run(config) error {
	return fmt.Errorf("the netns testbed is not implemented on %s (Linux network namespaces and veth)", runtime.GOOS)
}
