package daemon

import (
	"time"

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

// showQueue fills in trunk show's queue settings of c, the trunk's
// defaults where c leaves one at 0.
func showQueue(info *api.TrunkInfo, c *config.Trunk) {
	q := c.Queue
	pick := func(n, def int) int {
		switch {
		case n == config.QueueOff:
			return 0
		case n == 0:
			return def
		}
		return n
	}
	info.Queue = api.TrunkQueueInfo{
		TxQueueBytes:    pick(q.TxQueueBytes, trunk.DefaultTxQueueBytes),
		TxQueueDelayMS:  pick(q.TxQueueDelay, int(trunk.DefaultTxQueueDelay/time.Millisecond)),
		TxQueueTargetUS: pick(q.TxQueueTarget, int(trunk.DefaultTxQueueTarget/time.Microsecond)),
		SuperFrames:     q.SuperFrames,
		SendBuffer:      q.SendBuffer,
	}
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
