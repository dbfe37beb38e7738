package bridge

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Storm control and BPDU guard: two protections beyond the standard, so
// that a loop cannot take the host down.
//
// Storm control limits, per ingress member, the frames the bridge floods
// (broadcast, multicast, unknown unicast) to a rate in packets per second;
// the rest are dropped and counted in DroppedStorm. Known unicast is never
// limited. The limit is a GCRA token bucket (a virtual scheduling
// algorithm): one atomic theoretical arrival time per member, advanced by
// compare-and-swap, so that the reader goroutines of a MultiQueuePort
// share one bucket without a lock and the limit is the member's, however
// many queues it has. Its clock is the batch's time (read once per batch).
//
// BPDU guard disables a member that receives a BPDU (a frame to
// 01:80:c2:00:00:00): from then on it receives nothing from the bridge and
// forwards nothing into it (its frames are counted in DroppedDiscarding and
// DroppedDiscardingOut, as a gate that does not forward), until EnablePort.
// Whether a BPDU means a fault is the caller's choice: the daemon arms the
// guard on an edge port with the spanning tree on, and on any guarded port
// with it off.

// MaxStormLimit is the highest storm limit, in packets per second.
const MaxStormLimit = 100_000_000

// stormBurstMin is the least burst a storm limit allows, in frames: one
// receive batch, so that a limit does not cut a batch in two.
const stormBurstMin = 64

// stormBucket is a member's storm limit and its state.
type stormBucket struct {
	// pps is the limit in packets per second; immutable.
	pps int
	// interval is the time one frame uses up, in nanoseconds; immutable.
	interval int64
	// tolerance is how far the theoretical arrival time may run ahead of
	// the clock: the burst less one frame, in nanoseconds; immutable.
	tolerance int64
	// tat is the theoretical arrival time of the next frame, in
	// nanoseconds since the bridge's epoch. Atomic.
	tat atomic.Int64
}

// newStormBucket returns the bucket of a limit of pps frames per second
// (pps > 0), with a burst of a tenth of a second's frames, at least
// stormBurstMin.
func newStormBucket(pps int) *stormBucket {
	iv := int64(time.Second) / int64(pps)
	burst := max(int64(pps)/10, stormBurstMin)
	return &stormBucket{pps: pps, interval: iv, tolerance: (burst - 1) * iv}
}

// allow reports whether one more frame fits at now (nanoseconds since the
// bridge's epoch), and takes its share if so.
func (s *stormBucket) allow(now int64) bool {
	for {
		old := s.tat.Load()
		tat := max(old, now)
		if tat-now > s.tolerance {
			return false
		}
		if s.tat.CompareAndSwap(old, tat+s.interval) {
			return true
		}
	}
}

// CheckStormLimit returns the error SetStormLimit gives for pps (without
// the bridge's name), or nil.
func CheckStormLimit(pps int) error {
	if pps < 0 || pps > MaxStormLimit {
		return fmt.Errorf("storm-limit %d: want 0 (off) to %d packets per second", pps, MaxStormLimit)
	}
	return nil
}

// SetStormLimit limits the frames received on the member called name that
// the bridge floods to pps per second; 0 turns the limit off. A new limit
// starts with a full burst.
func (b *Bridge) SetStormLimit(name string, pps int) error {
	m, err := b.member("set storm-limit of", name)
	if err != nil {
		return err
	}
	if err := CheckStormLimit(pps); err != nil {
		return fmt.Errorf("%s: %s: %w", b.name, name, err)
	}
	var s *stormBucket
	if pps > 0 {
		s = newStormBucket(pps)
	}
	if old := m.storm.Swap(s); old.limit() != pps {
		b.log.Info("storm limit changed", "port", name, "pps", pps)
	}
	return nil
}

// limit returns s's limit, 0 for none.
func (s *stormBucket) limit() int {
	if s == nil {
		return 0
	}
	return s.pps
}

// SetBPDUGuard arms (on) or disarms the BPDU guard of the member called
// name. Disarming does not enable a member the guard disabled.
func (b *Bridge) SetBPDUGuard(name string, on bool) error {
	m, err := b.member("set bpdu-guard of", name)
	if err != nil {
		return err
	}
	if m.guard.Swap(on) != on {
		b.log.Info("bpdu guard changed", "port", name, "on", on)
	}
	return nil
}

// EnablePort enables the member called name again after its BPDU guard
// disabled it; it does nothing to a member that is not disabled.
func (b *Bridge) EnablePort(name string) error {
	m, err := b.member("enable", name)
	if err != nil {
		return err
	}
	if m.disabled.CompareAndSwap(true, false) {
		b.log.Info("port enabled", "port", name)
	}
	return nil
}

// tripGuard disables in, which received a BPDU with its guard armed, and
// logs it once.
func (b *Bridge) tripGuard(in *Member) {
	if in.disabled.CompareAndSwap(false, true) {
		b.log.Warn("bpdu guard: BPDU received, port disabled", "port", in.name)
	}
}
