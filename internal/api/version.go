package api

import (
	"runtime"
	"runtime/debug"
)

// Version is swctl's release, set at link time:
//
//	go build -ldflags "-X github.com/swctl/swctl/internal/api.Version=v0.1.0" ./cmd/swctl
//
// The CLI and the daemon (one binary) both report it.
var Version = "dev"

// Build describes the running binary: Version, the VCS revision from the
// build info when the binary was built in a checkout, the Go release and
// the protocol version.
func Build() VersionInfo {
	v := VersionInfo{Version: Version, Go: runtime.Version(), Protocol: ProtocolVersion}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v.Revision != "" && dirty {
		v.Revision += "-dirty"
	}
	return v
}
