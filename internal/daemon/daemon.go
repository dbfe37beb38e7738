// Package daemon is swctl's engine process: it owns the bridges and their
// ports, the control socket and the configuration file.
package daemon

import (
	"context"
	"errors"
	"log/slog"
)

// Options configures a daemon.
type Options struct {
	// ConfigPath is the configuration file loaded at start and rewritten
	// after every accepted change.
	ConfigPath string
	// SocketPath is the control socket.
	SocketPath string
	// StateDir holds runtime state (journals, the lock).
	StateDir string
	// SocketGroup, when not empty, is a group whose members may use the
	// control socket besides root.
	SocketGroup string
	// Logger receives one line per state change.
	Logger *slog.Logger
}

// Run starts the daemon and serves until ctx is done.
func Run(ctx context.Context, opts Options) error {
	return errors.New("daemon: not built yet")
}
