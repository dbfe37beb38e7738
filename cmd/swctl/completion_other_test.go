//go:build !linux

package main

import (
	"syscall"
	"testing"
)

// completionNetns is Linux's; elsewhere there is none.
var completionNetns struct {
	setup string
	free  []string
}

// ownNetns returns nil: network namespaces are Linux's.
func ownNetns(*testing.T) (*syscall.SysProcAttr, string) {
	return nil, "network namespaces are Linux's"
}
