package trunk

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
	"github.com/swctl/swctl/platform/platformtest"
)

// newTestTrunk returns a trunk named name running proto over ports, closed
// at the end of the test.
func newTestTrunk(t *testing.T, name string, proto Proto, mac byte, ports ...platform.Port) *Trunk {
	t.Helper()
	tr, err := New(name, Options{Protocol: builtin(t, proto), Seed: 1, TickInterval: -1, Logger: quiet, MAC: net.HardwareAddr{0x02, 0x88, 0, 0, 0, mac}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	for _, port := range ports {
		if err := tr.AddPort(port, PortConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// TestContract runs the platform.Port contract suite against trunks: one
// member facing a plain memport, and two members facing a second trunk
// under protocols that keep one flow on one port (the suite checks order).
func TestContract(t *testing.T) {
	t.Run("OneMember", func(t *testing.T) {
		platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
			near, far := memport.Pair("eth0", nearMAC(0), "peer0", farMAC(0))
			t.Cleanup(func() { _ = far.Close() })
			return newTestTrunk(t, "trunk0", ProtoFailover, 1, near), far
		})
	})
	for _, proto := range []Proto{ProtoFailover, ProtoLoadBalance} {
		t.Run("TwoMembers/"+string(proto), func(t *testing.T) {
			platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
				var near, far []platform.Port
				for i := 0; i < 2; i++ {
					n, f := memport.Pair(fmt.Sprintf("eth%d", i), nearMAC(i), fmt.Sprintf("peer%d", i), farMAC(i))
					near, far = append(near, n), append(far, f)
				}
				return newTestTrunk(t, "trunk0", proto, 1, near...), newTestTrunk(t, "trunk1", proto, 2, far...)
			})
		})
	}
}

// TestCloseWakesReadBatch closes a trunk while ReadBatch is blocked, with
// and without members.
func TestCloseWakesReadBatch(t *testing.T) {
	for _, members := range []int{0, 2} {
		fx := newFixture(t, ProtoLoadBalance)
		for i := 0; i < members; i++ {
			fx.add(PortConfig{})
		}
		res := make(chan error, 1)
		go func() {
			_, err := fx.tr.ReadBatch(platform.Batch{Frames: make([][]byte, 8)})
			res <- err
		}()
		time.Sleep(10 * time.Millisecond)
		if err := fx.tr.Close(); err != nil {
			t.Fatalf("%d members: Close: %v", members, err)
		}
		select {
		case err := <-res:
			if !errors.Is(err, platform.ErrClosed) {
				t.Errorf("%d members: ReadBatch returned %v after Close, want ErrClosed", members, err)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("%d members: ReadBatch still blocked %v after Close", members, waitTimeout)
		}
		for i, n := range fx.near {
			if _, err := n.TryReadBatch(nil); !errors.Is(err, platform.ErrClosed) {
				t.Errorf("%d members: member %d not closed by Close (TryReadBatch: %v)", members, i, err)
			}
		}
	}
}

// TestRemovePortClosesMember removes a member in both reader states: idle
// (closed at once) and while the consumer holds frames from it (closed at
// the consumer's next ReadBatch, and the frames stay intact until then).
func TestRemovePortClosesMember(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		fx := newFixture(t, ProtoLoadBalance, PortConfig{}, PortConfig{})
		if err := fx.tr.RemovePort("eth0"); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.near[0].TryReadBatch(nil); !errors.Is(err, platform.ErrClosed) {
			t.Errorf("removed member not closed when RemovePort returned (TryReadBatch: %v)", err)
		}
		if got := len(fx.tr.Ports()); got != 1 {
			t.Errorf("Ports() has %d members after removal, want 1", got)
		}
		fx.write(udp4(1, 1))
		if got := fx.drainCounts(); got[0] != 0 || got[1] != 1 {
			t.Errorf("frames per port after removal = %v, want [0 1]", got)
		}
	})
	t.Run("held by consumer", func(t *testing.T) {
		fx := newFixture(t, ProtoLoadBalance, PortConfig{}, PortConfig{})
		fx.sendFar(0, udp4(1, 42))
		frames := make([][]byte, 8)
		n, err := fx.tr.ReadBatch(platform.Batch{Frames: frames})
		if err != nil || n != 1 {
			t.Fatalf("ReadBatch = %d, %v; want 1, nil", n, err)
		}
		if err := fx.tr.RemovePort("eth0"); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.near[0].TryReadBatch(nil); err != nil {
			t.Errorf("member closed while the consumer holds its frames (TryReadBatch: %v)", err)
		}
		if seqOf(frames[0]) != 42 {
			t.Errorf("held frame changed: seq %d, want 42", seqOf(frames[0]))
		}
		// The next ReadBatch releases the frames; the member then closes.
		fx.sendFar(1, udp4(1, 43))
		if n, err := fx.tr.ReadBatch(platform.Batch{Frames: frames}); err != nil || n != 1 || seqOf(frames[0]) != 43 {
			t.Fatalf("next ReadBatch = %d, %v; want the frame from eth1", n, err)
		}
		waitFor(t, "eth0 to close after release", func() bool {
			_, err := fx.near[0].TryReadBatch(nil)
			return errors.Is(err, platform.ErrClosed)
		})
	})
}

// TestTrafficWhileReconfiguring sends and receives through a trunk while
// ports are added and removed and the protocol changes, for the race
// detector: nothing may panic or race, and the trunk still works after.
func TestTrafficWhileReconfiguring(t *testing.T) {
	fx := newFixture(t, ProtoLoadBalance, PortConfig{}, PortConfig{})
	fx.consume()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Go(func() {
			batch := [][]byte{udp4(uint16(w), 0), udp4(uint16(w+10), 1), udp4(uint16(w+20), 2)}
			for !stop.Load() {
				_, _ = fx.tr.WriteBatch(platform.Batch{Frames: batch})
				time.Sleep(50 * time.Microsecond)
			}
		})
	}
	// The far ends of the two permanent ports echo traffic back in and
	// drain what the trunk sends.
	for i := 0; i < 2; i++ {
		wg.Go(func() {
			for !stop.Load() {
				fx.drain(i)
				_, _ = fx.far[i].WriteBatch(platform.Batch{Frames: [][]byte{udp4(7, 7), slowFrame(farMAC(i))}})
				time.Sleep(100 * time.Microsecond)
			}
		})
	}
	protos := []Proto{ProtoRoundRobin, ProtoBroadcast, ProtoFailover, ProtoLoadBalance}
	for round := 0; round < 30; round++ {
		near, far := memport.Pair("eth9", nearMAC(9), "peer9", farMAC(9))
		if err := fx.tr.AddPort(near, PortConfig{Priority: round % 3}); err != nil {
			t.Fatal(err)
		}
		_, _ = far.WriteBatch(platform.Batch{Frames: [][]byte{udp4(9, 9), udp4(9, 10)}})
		_ = fx.tr.SetProtocol(builtin(t, protos[round%len(protos)]))
		fx.tr.SetHash(0)
		_ = fx.tr.Ports()
		time.Sleep(200 * time.Microsecond)
		if err := fx.tr.RemovePort("eth9"); err != nil {
			t.Fatal(err)
		}
		_ = far.Close()
	}
	stop.Store(true)
	wg.Wait()
	if err := fx.tr.SetProtocol(builtin(t, ProtoFailover)); err != nil {
		t.Fatal(err)
	}
	fx.drainCounts()
	fx.write(udp4(1, 99))
	if got := fx.drainCounts(); got[0] != 1 {
		t.Errorf("after the churn, frames per port = %v, want [1 0]", got)
	}
	if s := fx.tr.Stats(); s.RxPackets == 0 || s.TxPackets == 0 {
		t.Errorf("Stats after the churn = %+v, want traffic both ways", s)
	}
}
