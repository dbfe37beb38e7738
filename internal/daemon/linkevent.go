//go:build linux || openbsd || freebsd

package daemon

import "github.com/swctl/swctl/platform/linkwatch"

// linkEventOf is the engine's view of a watcher's event.
func linkEventOf(ev linkwatch.Event) linkEvent {
	return linkEvent{name: ev.Name, state: ev.State, mtu: ev.MTU, renamed: ev.Renamed}
}
