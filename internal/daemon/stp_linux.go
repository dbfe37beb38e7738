package daemon

import (
	"os"
	"strconv"
	"strings"
)

// LinkSpeed reads the interface's speed and duplex from sysfs, as
// ethtool reports them (veth: 10000 Mb/s, full duplex). /sys/class/net
// shows the network namespace sysfs was mounted in: `ip netns exec`
// mounts the namespace's own.
func (s *linuxSystem) LinkSpeed(name string) (uint64, bool) {
	speed, err := os.ReadFile("/sys/class/net/" + name + "/speed")
	if err != nil {
		return 0, false // no such interface, or down: the speed is unknown
	}
	duplex, _ := os.ReadFile("/sys/class/net/" + name + "/duplex")
	return parseLinkSpeed(string(speed), string(duplex))
}

// parseLinkSpeed decodes sysfs's speed (decimal Mb/s; -1 when unknown)
// and duplex ("full", "half", "unknown") files. Anything else is unknown:
// 0 Mb/s, full duplex.
func parseLinkSpeed(speed, duplex string) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(speed), 10, 32)
	if err != nil {
		n = 0
	}
	return n, strings.TrimSpace(duplex) == "half"
}
