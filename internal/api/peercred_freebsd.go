package api

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// xucredVersion is XUCRED_VERSION from <sys/ucred.h>.
const xucredVersion = 0

// peerCred reads LOCAL_PEERCRED: the credentials of the peer at connect
// time, with its groups.
func peerCred(fd int) (Peer, error) {
	x, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	if x.Version != xucredVersion {
		return Peer{}, fmt.Errorf("LOCAL_PEERCRED: unknown xucred version %d", x.Version)
	}
	n := max(0, min(int(x.Ngroups), len(x.Groups)))
	return Peer{UID: x.Uid, GIDs: append([]uint32(nil), x.Groups[:n]...)}, nil
}
