package api

import "golang.org/x/sys/unix"

// peerCred reads SO_PEERCRED: the credentials of the peer at connect time.
func peerCred(fd int) (Peer, error) {
	u, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	return Peer{UID: u.Uid, GIDs: []uint32{u.Gid}, PID: u.Pid}, nil
}
