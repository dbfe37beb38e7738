package afpacket_test

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// fanoutModes are the ports with several receive queues the contract
// suite covers.
var fanoutModes = []portMode{
	{"offload false", afpacket.Options{Workers: 2}},
	{"offload true", afpacket.Options{Offload: true, Workers: 2}},
}

func TestIntegrationContractFanout(t *testing.T) { forModes(t, fanoutModes, runContract) }

// udpFrame builds a UDP/IPv4 frame of flow (its source port) carrying seq.
func udpFrame(t *testing.T, dst, src net.HardwareAddr, flow, seq int) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IP{10, 9, 0, 1}, DstIP: net.IP{10, 9, 0, 2}}
	udp := &layers.UDP{SrcPort: layers.UDPPort(10000 + flow), DstPort: 9}
	_ = udp.SetNetworkLayerForChecksum(ip)
	pl := make([]byte, 8)
	binary.BigEndian.PutUint32(pl, uint32(flow))
	binary.BigEndian.PutUint32(pl[4:], uint32(seq))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(pl)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIntegrationFanoutQueues sends many UDP flows to a port with two
// workers and reads each queue with its own goroutine: every frame arrives
// once, each flow on one queue only and in order, and both queues get some.
func TestIntegrationFanoutQueues(t *testing.T) {
	const flows, perFlow = 64, 8
	ns, a, b := cable(t)
	src := openIn(t, ns, afpacket.Options{}, a)[0]
	dst := openIn(t, ns, afpacket.Options{Offload: true, Workers: 2}, b)[0]
	if dst.RxQueues() != 2 {
		t.Fatalf("RxQueues = %d, want 2", dst.RxQueues())
	}
	var sent [][]byte
	for seq := range perFlow {
		for flow := range flows {
			sent = append(sent, udpFrame(t, dst.HardwareAddr(), src.HardwareAddr(), flow, seq))
		}
	}
	if n, err := src.WriteBatch(platform.Batch{Frames: sent}); n != len(sent) || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(sent))
	}

	type rx struct{ flow, seq, queue int }
	var mu sync.Mutex
	var got []rx
	var wg sync.WaitGroup
	for q := range dst.RxQueues() {
		wg.Go(func() {
			frames := make([][]byte, dst.BatchSize())
			offs := make([]platform.Offload, dst.BatchSize())
			for {
				n, err := dst.ReadQueue(q, platform.Batch{Frames: frames, Offs: offs})
				if err != nil {
					return // closed by the watchdog or the test
				}
				mu.Lock()
				for _, f := range frames[:n] {
					if len(f) < 42+8 || f[12] != 0x08 || f[13] != 0 || f[23] != 17 {
						continue
					}
					got = append(got, rx{int(binary.BigEndian.Uint32(f[42:])), int(binary.BigEndian.Uint32(f[46:])), q})
				}
				mu.Unlock()
			}
		})
	}
	deadline := time.Now().Add(platformtest.Timeout)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(sent) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = dst.Close()
	wg.Wait()
	if len(got) != len(sent) {
		t.Fatalf("received %d frames, want %d (counters %+v)", len(got), len(sent), dst.Counters())
	}
	queueOf := map[int]int{}
	next := map[int]int{}
	perQueue := [2]int{}
	for _, r := range got {
		if q, ok := queueOf[r.flow]; ok && q != r.queue {
			t.Fatalf("flow %d arrived on queues %d and %d", r.flow, q, r.queue)
		}
		queueOf[r.flow] = r.queue
		if r.seq != next[r.flow] {
			t.Fatalf("flow %d: frame %d arrived when %d was due", r.flow, r.seq, next[r.flow])
		}
		next[r.flow]++
		perQueue[r.queue]++
	}
	if perQueue[0] == 0 || perQueue[1] == 0 {
		t.Fatalf("frames per queue %v: the fanout group did not spread %d flows", perQueue, flows)
	}
	t.Logf("frames per queue: %v", perQueue)
}

// TestIntegrationFanoutZeroAllocs checks that reading a port with two
// queues allocates nothing, through ReadBatch (every queue in turn) and
// through ReadQueue (a goroutine per queue).
func TestIntegrationFanoutZeroAllocs(t *testing.T) {
	ns, a, b := cable(t)
	src := openIn(t, ns, afpacket.Options{}, a)[0]
	dst := openIn(t, ns, afpacket.Options{Offload: true, Workers: 2}, b)[0]
	if allocs := exchangeAllocs(t, src, dst, 100); allocs != 0 {
		t.Errorf("%v allocations per WriteBatch+ReadBatch, want 0", allocs)
	}

	// Many flows, each queue read by its own goroutine.
	flows := make([][]byte, 16)
	for i := range flows {
		flows[i] = udpFrame(t, dst.HardwareAddr(), src.HardwareAddr(), i, 0)
	}
	got := make(chan int, 64)
	var wg sync.WaitGroup
	for q := range dst.RxQueues() {
		frames := make([][]byte, dst.BatchSize())
		offs := make([]platform.Offload, dst.BatchSize())
		wg.Go(func() {
			for {
				n, err := dst.ReadQueue(q, platform.Batch{Frames: frames, Offs: offs})
				if err != nil {
					return
				}
				got <- n
			}
		})
	}
	timeout := time.NewTimer(30 * time.Second) // time.After would allocate
	defer timeout.Stop()
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		if n, e := src.WriteBatch(platform.Batch{Frames: flows}); (n != len(flows) || e != nil) && err == nil {
			err = fmt.Errorf("WriteBatch = %d, %v", n, e)
		}
		for k := 0; k < len(flows) && err == nil; {
			select {
			case n := <-got:
				k += n
			case <-timeout.C:
				err = fmt.Errorf("%d of %d frames read", k, len(flows))
			}
		}
	})
	_ = dst.Close()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per WriteBatch+ReadQueue, want 0", allocs)
	}
}
