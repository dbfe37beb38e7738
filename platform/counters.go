package platform

import "sync/atomic"

// PortCounters are the live counters behind a backend's Counters: atomics
// that the data path adds to once per batch, without a lock, and that
// Snapshot reads at any time. A backend keeps one as a field of its port
// (not embedded, so that the methods that add stay unexported from the
// backend's API). The zero value is ready; it must not be copied once in
// use.
type PortCounters struct {
	// rxPackets and rxBytes are Counters.RxPackets and RxBytes.
	rxPackets, rxBytes atomic.Uint64
	// txPackets and txBytes are Counters.TxPackets and TxBytes.
	txPackets, txBytes atomic.Uint64
	// rxDropped is Counters.RxDropped, rxBadOffload Counters.RxBadOffload.
	rxDropped, rxBadOffload atomic.Uint64
	// txDropped is Counters.TxDropped.
	txDropped atomic.Uint64
	// ringDropped is Counters.RingDropped.
	ringDropped atomic.Uint64
	// errors is Counters.Errors.
	errors atomic.Uint64
}

// AddRx counts n frames of bytes bytes in all received.
func (c *PortCounters) AddRx(n, bytes int) {
	c.rxPackets.Add(uint64(n))
	c.rxBytes.Add(uint64(bytes))
}

// AddTx counts n frames of bytes bytes in all sent.
func (c *PortCounters) AddTx(n, bytes int) {
	c.txPackets.Add(uint64(n))
	c.txBytes.Add(uint64(bytes))
}

// AddRxDropped counts n received frames the port refused.
func (c *PortCounters) AddRxDropped(n int) { c.rxDropped.Add(uint64(n)) }

// AddRxBadOffload counts n received frames the port refused because
// their offload metadata does not describe them; count them in
// AddRxDropped too.
func (c *PortCounters) AddRxBadOffload(n int) { c.rxBadOffload.Add(uint64(n)) }

// AddTxDropped counts n frames WriteBatch dropped.
func (c *PortCounters) AddTxDropped(n int) { c.txDropped.Add(uint64(n)) }

// AddRingDropped counts n frames the kernel (or, in memory, the peer)
// dropped for a full receive ring, for a kernel that reports the drops
// since its last report.
func (c *PortCounters) AddRingDropped(n uint64) { c.ringDropped.Add(n) }

// SetRingDropped sets the ring drops to n, for a kernel that reports its
// total since the port opened.
func (c *PortCounters) SetRingDropped(n uint64) { c.ringDropped.Store(n) }

// AddError counts one error: a failed system call, or what else the
// backend's Counters documents.
func (c *PortCounters) AddError() { c.errors.Add(1) }

// Snapshot returns the counters' current values. Each is read atomically;
// the set is not read at one instant.
func (c *PortCounters) Snapshot() Counters {
	return Counters{
		RxPackets: c.rxPackets.Load(), RxBytes: c.rxBytes.Load(),
		TxPackets: c.txPackets.Load(), TxBytes: c.txBytes.Load(),
		RxDropped: c.rxDropped.Load(), RxBadOffload: c.rxBadOffload.Load(), TxDropped: c.txDropped.Load(),
		RingDropped: c.ringDropped.Load(), Errors: c.errors.Load(),
	}
}

// WritePlain is WriteBatch for a port that carries no offloads: it
// writes b's runs of plain frames with write (the port's own write of
// plain frames) and counts every frame whose offload is not plain in c
// as dropped. It returns the number write sent.
func WritePlain(b Batch, c *PortCounters, write func([][]byte) (int, error)) (int, error) {
	if b.Offs == nil {
		return write(b.Frames)
	}
	sent := 0
	for i := 0; i < b.Len(); {
		if !b.Offs[i].IsPlain() {
			c.AddTxDropped(1)
			i++
			continue
		}
		j := i + 1
		for j < b.Len() && b.Offs[j].IsPlain() {
			j++
		}
		n, err := write(b.Frames[i:j])
		sent += n
		if err != nil {
			return sent, err
		}
		i = j
	}
	return sent, nil
}

// ReadPlain is ReadBatch for a port that carries no offloads: it reads
// with read (the port's own read of frames) and zeroes the offloads of
// what it read.
func ReadPlain(b Batch, read func([][]byte) (int, error)) (int, error) {
	n, err := read(b.Frames)
	if b.Offs != nil && n > 0 {
		clear(b.Offs[:n])
	}
	return n, err
}
