// Package defaultroute names the interfaces the host's default routes
// leave by: the interface a host is managed through, which the daemon
// refuses to take from it without --force.
//
// On Linux the main table is dumped over rtnetlink and each RTM_NEWROUTE
// is decoded here (decodeDefault), every length checked before it is read,
// and fuzzed; IPv4 and IPv6 unicast routes to 0.0.0.0/0 and ::/0 count,
// with every hop of a multipath route. On the BSDs the routing table's
// dump is read with golang.org/x/net/route, as the BSD link watcher reads
// the interface list, for routes up through a gateway to 0.0.0.0 or ::.
package defaultroute

// Ifaces names the interfaces the default routes of the calling thread's
// network namespace leave by, each once, in the routing table's order.
func Ifaces() ([]string, error) { return ifaces() }
