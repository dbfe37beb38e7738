package config

import (
	"fmt"
	"strconv"
	"strings"
)

// TrunkQueue is how a trunk queues what its members send (trunk.Options'
// backlog and CoDel bounds, and the members' send buffer). The zero
// TrunkQueue takes every default; it is set when the trunk is created and
// cannot change while the trunk runs (its members' backlogs and sockets
// are made with it).
type TrunkQueue struct {
	// TxQueueBytes bounds each member's transmit backlog in bytes, 1 to
	// MaxQueueBytes; 0 means the trunk's default (1 MiB), QueueOff no
	// backlog ("tx-queue-bytes off").
	TxQueueBytes int `json:"tx_queue_bytes,omitempty"`
	// TxQueueDelay is how long, in milliseconds (1 to MaxQueueDelay), a
	// frame may wait in a backlog; 0 means the default (20 ms).
	TxQueueDelay int `json:"tx_queue_delay,omitempty"`
	// TxQueueTarget is CoDel's target sojourn time in microseconds (1 to
	// MaxQueueTarget, below TxQueueDelay); 0 means the default (1 ms),
	// QueueOff no CoDel ("tx-queue-target off").
	TxQueueTarget int `json:"tx_queue_target,omitempty"`
	// SuperFrames keeps in the backlog the super-frames a member's send
	// buffer has no room for, instead of dropping them.
	SuperFrames bool `json:"tx_queue_super_frames,omitempty"`
	// SendBuffer is the members' socket send buffer in bytes, 1 to
	// MaxQueueBytes; 0 keeps the kernel's default.
	SendBuffer int `json:"send_buffer,omitempty"`
}

const (
	// QueueOff is the TrunkQueue value of a bound turned off.
	QueueOff = -1
	// MaxQueueBytes is the largest backlog or send buffer, 1 GiB (the
	// kernel's own bound on a send buffer).
	MaxQueueBytes = 1 << 30
	// MaxQueueDelay is the longest backlog delay, in milliseconds.
	MaxQueueDelay = 1000
	// MaxQueueTarget is the longest CoDel target, in microseconds.
	MaxQueueTarget = MaxQueueDelay * 1000
	// defaultQueueDelay is the trunk's default TxQueueDelay in
	// milliseconds (trunk.DefaultTxQueueDelay), which a target must stay
	// below.
	defaultQueueDelay = 20
)

// TrunkQueueSettings are the keywords of a trunk's queue settings, in
// the configuration and as trunk create's flags.
var TrunkQueueSettings = []string{"tx-queue-bytes", "tx-queue-delay", "tx-queue-target", "tx-queue-super-frames", "send-buffer"}

// queueField is one setting of TrunkQueue: its field, whether "off" is
// a value, its range and unit.
type queueField struct {
	n        *int
	off      bool
	max      int
	unit     string
	defaults string
}

// field returns the integer setting kw of q; false for
// tx-queue-super-frames (a boolean) and for a word that is no setting.
func (q *TrunkQueue) field(kw string) (queueField, bool) {
	switch kw {
	case "tx-queue-bytes":
		return queueField{&q.TxQueueBytes, true, MaxQueueBytes, "bytes", "0 = 1 MiB"}, true
	case "tx-queue-delay":
		return queueField{&q.TxQueueDelay, false, MaxQueueDelay, "ms", "0 = 20 ms"}, true
	case "tx-queue-target":
		return queueField{&q.TxQueueTarget, true, MaxQueueTarget, "us", "0 = 1000 us"}, true
	case "send-buffer":
		return queueField{&q.SendBuffer, false, MaxQueueBytes, "bytes", "0 = the kernel's"}, true
	}
	return queueField{}, false
}

// Set parses and checks value as queue setting kw (one of
// TrunkQueueSettings): a number, "off" where a bound can be off, on|off
// for tx-queue-super-frames.
func (q *TrunkQueue) Set(kw, value string) error {
	if kw == "tx-queue-super-frames" {
		on, err := ParseOnOff(kw, value)
		q.SuperFrames = on
		return err
	}
	f, ok := q.field(kw)
	if !ok {
		return fmt.Errorf("%s: not a queue setting (want %s)", kw, strings.Join(TrunkQueueSettings, ", "))
	}
	if f.off && value == "off" {
		*f.n = QueueOff
		return nil
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return fmt.Errorf("%s: %q is not a number", kw, value)
	}
	*f.n = n
	return f.check(kw)
}

// check reports whether the setting kw is in its range.
func (f queueField) check(kw string) error {
	if n := *f.n; (n < 0 && !(f.off && n == QueueOff)) || n > f.max {
		off := ""
		if f.off {
			off = " or off"
		}
		return fmt.Errorf("%s %d out of range (0 to %d %s%s, %s)", kw, n, f.max, f.unit, off, f.defaults)
	}
	return nil
}

// Check reports whether every setting of q is in its range and the CoDel
// target is below the backlog's delay bound.
func (q TrunkQueue) Check() error {
	for _, kw := range TrunkQueueSettings {
		if f, ok := q.field(kw); ok {
			if err := f.check(kw); err != nil {
				return err
			}
		}
	}
	delay := q.TxQueueDelay
	if delay == 0 {
		delay = defaultQueueDelay
	}
	if q.TxQueueTarget > 0 && q.TxQueueTarget >= delay*1000 {
		return fmt.Errorf("tx-queue-target %d us: not below tx-queue-delay %d ms", q.TxQueueTarget, delay)
	}
	return nil
}

// Words gives q's settings that differ from the defaults as they are
// written in the configuration: keyword and value, in
// TrunkQueueSettings' order.
func (q TrunkQueue) Words() [][2]string {
	var out [][2]string
	for _, kw := range TrunkQueueSettings {
		f, ok := q.field(kw)
		switch {
		case !ok:
			if q.SuperFrames {
				out = append(out, [2]string{kw, "on"})
			}
		case *f.n == QueueOff:
			out = append(out, [2]string{kw, "off"})
		case *f.n != 0:
			out = append(out, [2]string{kw, strconv.Itoa(*f.n)})
		}
	}
	return out
}

// Differs names the first setting that differs between q and r, "" when
// none does.
func (q TrunkQueue) Differs(r TrunkQueue) string {
	for _, kw := range TrunkQueueSettings {
		f, ok := q.field(kw)
		g, _ := r.field(kw)
		if (!ok && q.SuperFrames != r.SuperFrames) || (ok && *f.n != *g.n) {
			return kw
		}
	}
	return ""
}
