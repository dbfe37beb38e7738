package daemon

import (
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/trunk"
)

// showPolicy fills in trunk show's link policy of c and what the running
// trunk to counted of its announcements.
func showPolicy(info *api.TrunkInfo, c *config.Trunk, to *trunkObj) {
	info.UpDelay, info.DownDelay, info.MinLinks, info.Preempt = c.UpDelay, c.DownDelay, c.MinLinks, !c.NoPreempt
	info.Announced = to.announced.Load()
}

// showPortCounters fills in trunk show's counters of an attached port:
// the port's own, and the trunk's per-port ones.
func showPortCounters(pi *api.TrunkPortInfo, rp trunk.PortInfo) {
	cn := rp.Counters
	pi.RxPackets, pi.RxBytes, pi.TxPackets, pi.TxBytes = cn.RxPackets, cn.RxBytes, cn.TxPackets, cn.TxBytes
	pi.RxDropped, pi.RxBadOffload, pi.TxDropped, pi.RingDropped, pi.Errors = cn.RxDropped, cn.RxBadOffload, cn.TxDropped, cn.RingDropped, cn.Errors
	pi.RxRefused, pi.RxControl = rp.RxRefused, rp.RxControl
	q := rp.TxQueue
	pi.TxQueueLimit, pi.TxQueueBytes, pi.TxQueueOverflow, pi.TxQueueStale = q.Limit, q.Bytes, q.Overflow, q.Stale
}
