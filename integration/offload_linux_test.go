package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// transferSize is how much each TCP test sends: enough for thousands of
// full-size GSO super-frames.
const transferSize = 32 << 20

// transfer sends transferSize pseudo-random bytes over TCP from a socket
// opened in from to a listener opened in to on addr (ip:port), and fails
// unless the receiver's SHA-256 matches the sender's.
func transfer(t *testing.T, from, to *netnstest.NS, addr string) {
	t.Helper()
	if err := sendOver(from, to, addr); err != nil {
		t.Fatal(err)
	}
}

// sendOver is transfer's work, safe to call from any goroutine: it
// returns the error instead of failing a test. Sockets opened in NS.Do
// stay in their namespace; the copying runs on ordinary goroutines.
func sendOver(from, to *netnstest.NS, addr string) error {
	var ln net.Listener
	var err error
	to.Do(func() { ln, err = net.Listen("tcp", addr) })
	if err != nil {
		return fmt.Errorf("listen %s in %s: %v", addr, to.Name, err)
	}
	defer ln.Close()
	type result struct {
		sum [32]byte
		n   int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		h := sha256.New()
		n, err := io.Copy(h, c)
		var r result
		copy(r.sum[:], h.Sum(nil))
		r.n, r.err = n, err
		got <- r
	}()

	var c net.Conn
	from.Do(func() { c, err = net.DialTimeout("tcp", addr, 10*time.Second) })
	if err != nil {
		return fmt.Errorf("connect to %s from %s: %v", addr, from.Name, err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	data := make([]byte, transferSize)
	rng := rand.NewChaCha8([32]byte{1, 2, 3})
	rng.Read(data)
	want := sha256.Sum256(data)
	if _, err := c.Write(data); err != nil {
		c.Close()
		return fmt.Errorf("send %d bytes to %s: %v", len(data), addr, err)
	}
	c.Close()
	select {
	case r := <-got:
		if r.err != nil || r.n != transferSize || r.sum != want {
			return fmt.Errorf("%s received %d of %d bytes (err %v), SHA-256 %x, want %x", addr, r.n, transferSize, r.err, r.sum[:8], want[:8])
		}
		return nil
	case <-time.After(90 * time.Second):
		return fmt.Errorf("receiver on %s did not finish in 90s", addr)
	}
}

// offloads returns `ethtool -k eth0` of h, for failure messages.
func offloadsOf(h *host) string {
	out, _ := h.Try("ethtool", "-k", "eth0")
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "tx-checksumming") || strings.HasPrefix(l, "tcp-segmentation-offload") ||
			strings.HasPrefix(l, "generic-segmentation-offload") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, ", ")
}

// bridgeStats returns `bridge stats bridge0 -o json` as a map.
func (tb *testbed) bridgeStatsRaw() map[string]any {
	tb.t.Helper()
	out, err := tb.try("bridge", "stats", "bridge0", "-o", "json")
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(out), &m)
	return m
}

// TestIntegrationBridgeTCPDefaultOffloads moves 32 MiB over TCP through
// the bridge with the hosts' default offloads: partial checksums and GSO
// super-frames cross swctl with their virtio_net_hdr and the far host
// receives every byte intact, both ways.
func TestIntegrationBridgeTCPDefaultOffloads(t *testing.T) {
	tb := bridged(t, 2)
	h1, h2 := tb.hosts[0], tb.hosts[1]
	if o := offloadsOf(h1); !strings.Contains(o, "tcp-segmentation-offload: on") {
		t.Fatalf("h1's offloads are not the defaults: %s", o)
	}
	mustPing(t, h1, h2.ip)
	transfer(t, h1.NS, h2.NS, h2.ip+":5001")
	transfer(t, h2.NS, h1.NS, h1.ip+":5002")
	if t.Failed() {
		t.Logf("bridge stats: %v", tb.bridgeStatsRaw())
	}
}

// TestIntegrationBridgeTCPOffloadsOff is the same with offloads off on the
// hosts: plain frames only.
func TestIntegrationBridgeTCPOffloadsOff(t *testing.T) {
	tb := newTestbedWith(t, 2, true)
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	h1, h2 := tb.hosts[0], tb.hosts[1]
	if o := offloadsOf(h1); !strings.Contains(o, "tx-checksumming: off") || !strings.Contains(o, "generic-segmentation-offload: off") {
		t.Fatalf("h1's offloads are not off: %s", o)
	}
	mustPing(t, h1, h2.ip)
	transfer(t, h1.NS, h2.NS, h2.ip+":5001")
}

// TestIntegrationBridgeTaggedSuperFrame sends an 802.1Q-tagged TCP
// super-frame with a partial checksum from h1 (through an AF_PACKET
// socket with vnet headers, as a VM's virtio device would: this kernel has
// no 8021q module for a VLAN subinterface) across the bridge, and checks
// that h2 receives it whole, with its tag and its offload metadata, the
// checksum offset counted from the restored tag.
func TestIntegrationBridgeTaggedSuperFrame(t *testing.T) {
	tb := bridged(t, 2)
	h1, h2 := tb.hosts[0], tb.hosts[1]
	var tx, rx *afpacket.Port
	var err1, err2 error
	h1.Do(func() { tx, err1 = afpacket.Open("eth0", afpacket.Options{Offload: true, OffloadSlots: 64}) })
	h2.Do(func() { rx, err2 = afpacket.Open("eth0", afpacket.Options{Offload: true, OffloadSlots: 64}) })
	if err1 != nil || err2 != nil {
		t.Fatalf("open: %v, %v", err1, err2)
	}
	defer tx.Close()
	defer rx.Close()
	mac := func(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }
	for i, vlan := range []uint16{100, 0} {
		f, o := platformtest.TCPFrame(t, mac(h2.mac), mac(h1.mac), vlan, 30000, 1448)
		// The first frame to h2 may flood: either way h2 gets it.
		if n, err := tx.WriteBatch(platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}); n != 1 || err != nil {
			t.Fatalf("vlan %d: h1 WriteBatch = %d, %v", vlan, n, err)
		}
		got, gotO := readSuper(t, rx)
		if !bytes.Equal(got, f) {
			t.Fatalf("vlan %d (frame %d): h2 got %d bytes, want the %d sent\ngot  % x\nwant % x", vlan, i, len(got), len(f), got[:min(len(got), 40)], f[:40])
		}
		if gotO.GSOType != platform.GSOTCPv4 || gotO.GSOSize != 1448 || gotO.CsumStart != o.CsumStart || gotO.CsumOffset != 16 {
			t.Fatalf("vlan %d: h2 got offload %+v, want %+v", vlan, gotO, o)
		}
	}
}

// readSuper reads p until a frame longer than 10000 bytes arrives and
// returns a copy of it and its Offload.
func readSuper(t *testing.T, p *afpacket.Port) ([]byte, platform.Offload) {
	t.Helper()
	watchdog := time.AfterFunc(5*time.Second, func() { _ = p.Close() })
	defer watchdog.Stop()
	frames, offs := make([][]byte, p.BatchSize()), make([]platform.Offload, p.BatchSize())
	for {
		n, err := p.ReadBatch(platform.Batch{Frames: frames, Offs: offs})
		if err != nil {
			t.Fatalf("%s: no super-frame within 5s: %v", p.Name(), err)
		}
		for i, f := range frames[:n] {
			if len(f) > 10000 {
				return bytes.Clone(f), offs[i]
			}
		}
	}
}

// TestIntegrationBridgeTCPToLocalTap sends TCP with default offloads from a
// host to an address on the bridge's --local TAP, a port without offloads:
// swctl finishes the checksums and cuts the super-frames into segments in
// software.
func TestIntegrationBridgeTCPToLocalTap(t *testing.T) {
	tb := bridged(t, 2, "--local")
	tapIP := fmt.Sprintf("10.66.%d.100", tb.subnet)
	tb.dut.Run("ip", "addr", "add", tapIP+"/24", "dev", "bridge0")
	mustPing(t, tb.hosts[0], tapIP)
	transfer(t, tb.hosts[0].NS, tb.dut, tapIP+":5004")
	transfer(t, tb.dut, tb.hosts[1].NS, tb.hosts[1].ip+":5005")
	if !bytes.Contains([]byte(tb.log.String()), []byte("port added")) {
		t.Logf("daemon log:\n%s", tb.log.String())
	}
}
