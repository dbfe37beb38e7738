package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LockFile is the name of the state directory's lock file.
const LockFile = "lock"

// LockedError is Lock's error when another process holds
// the state directory's lock.
type LockedError struct {
	// Dir is the state directory.
	Dir string
	// Path is its lock file.
	Path string
}

// Error says which directory is locked and by which file.
func (e *LockedError) Error() string {
	return fmt.Sprintf("state dir %s: another swctl process holds %s", e.Dir, e.Path)
}

// Lock makes the state directory dir (mode 0700) and takes an
// exclusive flock on dir/lock without waiting, so that two daemons, or a
// daemon and `swctl recover`, never share it. When another process holds
// the lock the error is a *LockedError. unlock releases the lock;
// the kernel also releases it when the process dies, however it dies.
func Lock(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	// Never through a link: O_CREAT would make (as root) whatever file
	// a planted link names.
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		// ELOOP on Linux and OpenBSD, EMLINK on FreeBSD.
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("state dir %s: %s is a symbolic link; remove it (swctl makes the lock file itself)", dir, path)
		}
		return nil, fmt.Errorf("state dir %s: %s: %w", dir, path, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, Path: path}
		}
		return nil, fmt.Errorf("state dir %s: lock %s: %w", dir, path, err)
	}
	return func() { unix.Close(fd) }, nil
}
