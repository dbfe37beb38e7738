package daemon

import (
	"time"

	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/trunk"
)

// trunkPolicy is the link policy a trunk's configuration asks for.
func trunkPolicy(c *config.Trunk) trunk.Policy {
	return trunk.Policy{
		UpDelay:   time.Duration(c.UpDelay) * time.Millisecond,
		DownDelay: time.Duration(c.DownDelay) * time.Millisecond,
		MinLinks:  c.MinLinks,
		NoPreempt: c.NoPreempt,
	}
}

// setTrunkQueue sets the backlog options of o from a trunk's queue
// settings q: config's 0 is the trunk's default as trunk.Options' is, and
// config.QueueOff turns a bound off as a negative one does. The members'
// send buffer goes to OpenPort instead.
func setTrunkQueue(o *trunk.Options, q config.TrunkQueue) {
	o.TxQueueBytes = q.TxQueueBytes
	o.TxQueueDelay = time.Duration(q.TxQueueDelay) * time.Millisecond
	o.TxQueueTarget = time.Duration(q.TxQueueTarget) * time.Microsecond
	o.TxQueueSuperFrames = q.SuperFrames
}

// setPolicy makes the trunk's link policy that of c, in place: its ports
// stay, and failover moves at once if preemption now says so.
func (to *trunkObj) setPolicy(c *config.Trunk) error {
	return to.tr.SetPolicy(trunkPolicy(c))
}

// setPriority changes the failover priority of port tpo in place. An
// absent port has nothing running to change: it joins with the
// configured priority when it appears.
func (to *trunkObj) setPriority(tpo *trunkPortObj, priority int) error {
	if tpo.port == nil {
		return nil
	}
	return to.tr.SetPortPriority(tpo.name, priority)
}

// setLACPPortPriority changes the LACP port priority of port tpo in
// place: an LACP trunk advertises it at once. An absent port joins with
// the configured one when it appears.
func (to *trunkObj) setLACPPortPriority(tpo *trunkPortObj, priority int) error {
	if tpo.port == nil {
		return nil
	}
	return to.tr.SetLACPPortPriority(tpo.name, uint16(priority))
}
