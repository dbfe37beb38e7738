// Package statedir owns the daemon's state directory (/var/lib/swctl by
// default): it makes the directory (mode 0700) and holds its lock, an
// exclusive flock(2) on STATE_DIR/lock taken without waiting. One process
// at a time owns the directory and what is in it (the lladdr journal,
// platform/lladdr): the daemon for as long as it runs, or `swctl recover`
// when no daemon does. The kernel drops the lock with the descriptor, so a
// crashed owner never leaves the directory locked.
package statedir
