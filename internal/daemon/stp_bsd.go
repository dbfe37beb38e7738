//go:build openbsd || freebsd

package daemon

// LinkSpeed reports every link's speed as unknown: the spanning tree then
// gives every port the cost of 10 Mb/s, as the Linux bridge does for a
// speed it cannot read (set ifcost for unequal links).
func (s *bsdSystem) LinkSpeed(string) (uint64, bool) { return 0, false }
