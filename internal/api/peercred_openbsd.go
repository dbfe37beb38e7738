package api

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// peerCred reads SO_PEERCRED, a struct sockpeercred { uid_t uid; gid_t gid;
// pid_t pid; } from <sys/socket.h>. x/sys has no typed getter for it, so
// this asks for its first 8 bytes (uid and gid) as a uint64, which the
// kernel truncates to, and splits them in native byte order; the pid is
// not read.
func peerCred(fd int) (Peer, error) {
	v, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return Peer{
		UID:  binary.NativeEndian.Uint32(b[0:4]),
		GIDs: []uint32{binary.NativeEndian.Uint32(b[4:8])},
	}, nil
}
