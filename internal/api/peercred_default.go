//go:build !linux && !freebsd && !openbsd

package api

import (
	"fmt"
	"runtime"
)

// peerCred is not implemented here: every peer is refused when an
// Authorizer is in use.
func peerCred(fd int) (Peer, error) {
	return Peer{}, fmt.Errorf("peer credentials not implemented on %s", runtime.GOOS)
}
