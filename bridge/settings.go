package bridge

import (
	"fmt"
	"time"

	"github.com/swctl/swctl/platform"
)

// The bridge's settings and per-member flags, changed while it runs:
// learning, discovery, blocknonip, the link-local handler and forward
// mask, the spanning tree switch, ageing and table size, link changes.

// Reserved group addresses 01:80:c2:00:00:0n by n (IEEE 802.1Q table
// 8-1) that SetForwardMask refuses: BPDUs follow the spanning tree, MAC
// control (pause) and slow protocols (LACP, marker) never cross a bridge.
const (
	groupBPDU      = 0x0
	groupPause     = 0x1
	groupSlowProto = 0x2
	// restrictedGroups are the bits SetForwardMask refuses (Linux's
	// BR_GROUPFWD_RESTRICTED).
	restrictedGroups = 1<<groupBPDU | 1<<groupPause | 1<<groupSlowProto
)

// SetPortFlags changes a member's flags. Frames already being forwarded
// may still see the old ones.
func (b *Bridge) SetPortFlags(name string, f PortFlags) error {
	m, err := b.member("set flags of", name)
	if err != nil {
		return err
	}
	if old := m.flags.Swap(f.bits()); old != f.bits() {
		b.log.Info("port flags changed", "port", name, "learning", f.Learning, "discover", f.Discover, "blocknonip", f.BlockNonIP)
	}
	return nil
}

// SetLinkLocalHandler sets the function a member's reader calls with each
// frame to 01:80:c2:00:00:00-0f that the member receives and the bridge
// does not forward (nil: drop them; see SetForwardMask and
// SetSpanningTree).
// The frame is valid only during the call; the handler must copy what it
// keeps, must not block for long, and runs on a reader's goroutine (one per
// receive queue of a MultiQueuePort: then possibly several calls at once).
func (b *Bridge) SetLinkLocalHandler(name string, h func(frame []byte)) error {
	m, err := b.member("set link-local handler of", name)
	if err != nil {
		return err
	}
	if h == nil {
		m.linkLocal.Store(nil)
	} else {
		m.linkLocal.Store(&h)
	}
	return nil
}

// SetForwardMask chooses the reserved groups 01:80:c2:00:00:0n, by bit n,
// that the bridge forwards like ordinary multicast instead of handing
// them to the link-local handler (LLDP is bit 0x0e, 802.1X bit 0x03), as
// Linux's group_fwd_mask does. Bits 0 (BPDUs: forwarded exactly while no
// spanning tree runs, see SetSpanningTree), 1 (pause) and 2 (slow
// protocols) are refused.
func (b *Bridge) SetForwardMask(mask uint16) error {
	if err := CheckForwardMask(mask); err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fwdMask = mask
	b.storeLinkLocalFwd()
	return nil
}

// CheckForwardMask returns the error SetForwardMask gives for mask
// (without the bridge's name), or nil: the configuration and the command
// line check a mask with it.
func CheckForwardMask(mask uint16) error {
	if bad := mask & restrictedGroups; bad != 0 {
		return fmt.Errorf("fwd-mask 0x%04x: %s cannot be forwarded", mask, restrictedName(bad))
	}
	return nil
}

// ForwardMask returns the mask SetForwardMask set.
func (b *Bridge) ForwardMask() uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fwdMask
}

// SetSpanningTree says whether a spanning tree runs on the bridge. While
// one runs, BPDUs (01:80:c2:00:00:00) go to each member's link-local
// handler; while none runs they are forwarded like ordinary multicast, as
// the Linux bridge does with STP off, so that an outer spanning tree still
// sees loops through the bridge.
func (b *Bridge) SetSpanningTree(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stp = on
	b.storeLinkLocalFwd()
}

// storeLinkLocalFwd publishes the groups forwarded. mu is held.
func (b *Bridge) storeLinkLocalFwd() {
	fwd := uint32(b.fwdMask)
	if !b.stp {
		fwd |= 1 << groupBPDU
	}
	b.linkLocalFwd.Store(fwd)
}

// restrictedName names the lowest restricted group in bits.
func restrictedName(bits uint16) string {
	switch {
	case bits&(1<<groupBPDU) != 0:
		return "bit 0 (BPDUs, 01:80:c2:00:00:00: they follow the spanning tree setting)"
	case bits&(1<<groupPause) != 0:
		return "bit 1 (MAC control/pause, 01:80:c2:00:00:01)"
	default:
		return "bit 2 (slow protocols: LACP and marker, 01:80:c2:00:00:02)"
	}
}

// LinkChanged tells the bridge that the link state of the port called name
// may have changed; the bridge reads it with Link. When it is not up, the
// dynamic addresses learned on the port are flushed. A port whose link is
// not up is never sent to, whether LinkChanged was called or not. An
// unknown name is ignored.
func (b *Bridge) LinkChanged(name string) {
	m := b.table.Load().find(name)
	if m == nil {
		return
	}
	st := m.port.Link()
	if old := platform.LinkState(m.link.Swap(uint32(st))); old != st {
		b.log.Info("link changed", "port", name, "link", st.String())
	}
	if st != platform.LinkUp && !m.span {
		if n := b.fdb.flush(false, m); n > 0 {
			b.noteDrained()
			b.log.Info("addresses flushed", "port", name, "addresses", n)
		}
	}
}

// SetTimeout changes the ageing time; 0 (or less) means never. It applies
// at once to every dynamic entry, by its last-seen time.
func (b *Bridge) SetTimeout(d time.Duration) {
	d = max(d, 0)
	if old := time.Duration(b.fdb.timeout.Swap(int64(d))); old != d {
		b.log.Info("timeout changed", "timeout", d)
	}
}

// Timeout returns the ageing time; 0 means never.
func (b *Bridge) Timeout() time.Duration { return time.Duration(b.fdb.timeout.Load()) }

// SetMaxAddr changes the size of the address table. A size below the
// number of entries trims the table as bridge(4) does: expired entries
// first, then the dynamic ones seen least recently; static entries are
// never trimmed (see the package documentation).
func (b *Bridge) SetMaxAddr(n int) error {
	if n < 0 {
		return fmt.Errorf("%s: maxaddr %d: negative", b.name, n)
	}
	old := b.fdb.max.Swap(int64(n))
	removed := b.fdb.trim(n, b.since(b.clock.Now()))
	b.noteDrained()
	if old != int64(n) || removed > 0 {
		b.log.Info("maxaddr changed", "maxaddr", n, "trimmed", removed)
	}
	return nil
}

// MaxAddr returns the size of the address table.
func (b *Bridge) MaxAddr() int { return int(b.fdb.max.Load()) }
