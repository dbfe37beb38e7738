package bridge

import (
	"fmt"
	"time"

	"github.com/swctl/swctl/frame"
)

// The address table as the control plane sees it: static entries,
// deletions, flushes, listing, and the ageing sweep.

// AddStatic puts mac in VLAN vlan on the member called port, statically:
// the entry never ages, never moves and survives Flush(false). It replaces
// an entry for the same address and VLAN.
func (b *Bridge) AddStatic(mac frame.MAC, vlan uint16, port string) error {
	switch {
	case mac.IsMulticast():
		return fmt.Errorf("%s: static %s: multicast address", b.name, mac)
	case mac.IsZero():
		return fmt.Errorf("%s: static %s: zero address", b.name, mac)
	case vlan > 4095:
		return fmt.Errorf("%s: static %s vlan %d: VLAN ID out of range 0-4095", b.name, mac, vlan)
	}
	// mu keeps RemovePort from forgetting the member's addresses before
	// this one is in.
	b.mu.Lock()
	defer b.mu.Unlock()
	m, err := b.member("static "+mac.String()+" on", port)
	if err != nil {
		return err
	}
	if !b.fdb.addStatic(fdbKey(vlan, mac.Key()), m, b.since(b.clock.Now())) {
		return fmt.Errorf("%s: static %s: address table full (%d entries)", b.name, mac, b.MaxAddr())
	}
	return nil
}

// DeleteAddr removes mac in every VLAN, static or dynamic, and returns how
// many entries it removed.
func (b *Bridge) DeleteAddr(mac frame.MAC) (int, error) {
	n := b.fdb.deleteMAC(mac.Key())
	if n == 0 {
		return 0, fmt.Errorf("%s: delete address %s: not in the address table", b.name, mac)
	}
	b.noteDrained()
	return n, nil
}

// DeleteEntry removes the entry for mac in VLAN vlan, static or dynamic.
func (b *Bridge) DeleteEntry(mac frame.MAC, vlan uint16) error {
	if !b.fdb.deleteKey(fdbKey(vlan, mac.Key())) {
		return fmt.Errorf("%s: delete address %s vlan %d: not in the address table", b.name, mac, vlan)
	}
	b.noteDrained()
	return nil
}

// Flush removes the dynamic addresses, and the static ones too when all is
// set.
func (b *Bridge) Flush(all bool) {
	n := b.fdb.flush(all, nil)
	b.noteDrained()
	b.log.Info("addresses flushed", "all", all, "addresses", n)
}

// FlushPort removes the dynamic addresses learned on the member called
// port, and its static ones too when all is set, and returns how many it
// removed.
func (b *Bridge) FlushPort(port string, all bool) (int, error) {
	m, err := b.member("flush", port)
	if err != nil {
		return 0, err
	}
	n := b.fdb.flush(all, m)
	b.noteDrained()
	b.log.Info("addresses flushed", "port", port, "all", all, "addresses", n)
	return n, nil
}

// Addrs returns the address table, expired entries left out, sorted by
// VLAN, then MAC.
func (b *Bridge) Addrs() []Addr { return b.fdb.addrs(b.since(b.clock.Now())) }

// AddrPage returns at most limit entries of the address table in the
// order of Addrs, expired entries left out: those after (VLAN vlan, MAC
// after), or from the first entry when after is nil. Passing the last entry
// of one page as the next page's start lists every entry present during
// the whole walk exactly once, while others come and go. Its cost follows
// limit, not the size of the table.
func (b *Bridge) AddrPage(after *Addr, limit int) []Addr {
	now := b.since(b.clock.Now())
	if after == nil {
		return b.fdb.page(0, true, limit, now)
	}
	return b.fdb.page(after.key(), false, limit, now)
}

// AddrCount returns the number of entries in the address table, static
// ones included, without taking the table's locks: entries expired since
// the last ageing sweep are still counted.
func (b *Bridge) AddrCount() int { return b.fdb.len() }

// noteFull logs, once until it drains, that the address table is full.
func (b *Bridge) noteFull() {
	if b.full.CompareAndSwap(false, true) {
		b.log.Warn("address table full: new addresses are not learned", "maxaddr", b.MaxAddr())
	}
}

// noteDrained logs that the address table has room again, if it was full.
func (b *Bridge) noteDrained() {
	if b.full.Load() && b.fdb.len() < b.MaxAddr() && b.full.CompareAndSwap(true, false) {
		b.log.Info("address table has room again", "addresses", b.fdb.len(), "maxaddr", b.MaxAddr())
	}
}

// sweep deletes expired addresses until Close.
func (b *Bridge) sweep() {
	defer close(b.sweepDone)
	t := time.NewTimer(b.sweepInterval())
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		b.expire(b.clock.Now())
		t.Reset(b.sweepInterval())
	}
}

// sweepInterval is a tenth of the timeout, between minSweepInterval and
// maxSweepInterval.
func (b *Bridge) sweepInterval() time.Duration {
	d := b.Timeout() / 10
	if d <= 0 || d > maxSweepInterval {
		return maxSweepInterval
	}
	return max(d, minSweepInterval)
}

// expire deletes the addresses aged out at now.
func (b *Bridge) expire(now time.Time) {
	if n := b.fdb.expire(b.since(now)); n > 0 {
		b.ctrs[cAged].Add(uint64(n))
		b.noteDrained()
	}
}
