package tap_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/tap"
)

// TestIntegrationMultiQueue joins two hosts, each in its namespace with a
// multi-queue TAP with offloads (one queue per worker, here 2), by
// forwarding each TAP's queues to the other TAP, one goroutine per queue:
// 16 TCP connections, with the hosts' default offloads (TSO), carry their
// bytes intact, super-frames cross whole, and the host spreads its flows
// so that every queue's reader advances.
func TestIntegrationMultiQueue(t *testing.T) {
	const queues = 2
	opts := tap.Options{Up: true, Offload: true, Queues: queues}
	nsA, a := newTap(t, opts)
	nsB, b := newTap(t, opts)
	if a.RxQueues() != queues || b.RxQueues() != queues {
		t.Fatalf("Queues %d: RxQueues() = %d and %d", queues, a.RxQueues(), b.RxQueues())
	}
	nsA.Run("ip", "addr", "add", "10.77.0.1/24", "dev", a.Name())
	nsB.Run("ip", "addr", "add", "10.77.0.2/24", "dev", b.Name())
	if _, err := a.ReadQueue(queues, platform.NewBatch(1)); err == nil {
		t.Errorf("ReadQueue(%d) of %d queues: expected an error", queues, queues)
	}

	// The forwarders: per direction and queue, frames and super-frames.
	var frames, supers [2][queues]atomic.Uint64
	var wg sync.WaitGroup
	t.Cleanup(func() { a.Close(); b.Close(); wg.Wait() })
	for dir, ends := range [2][2]*tap.Port{{a, b}, {b, a}} {
		for q := range queues {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := platform.NewBatch(ends[0].BatchSize())
				for {
					n, err := ends[0].ReadQueue(q, buf)
					for i := range n {
						if buf.Offs[i].GSOType != platform.GSONone {
							supers[dir][q].Add(1)
						}
					}
					frames[dir][q].Add(uint64(n))
					ends[1].WriteBatch(buf.Slice(0, n))
					if err != nil {
						return
					}
				}
			}()
		}
	}

	var ln net.Listener
	var err error
	nsB.Do(func() { ln, err = net.Listen("tcp", "10.77.0.2:5020") })
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const conns, size = 16, 1 << 20
	sums := make(chan [32]byte, conns)
	go func() {
		for range conns {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				h := sha256.New()
				io.Copy(h, c)
				sums <- [32]byte(h.Sum(nil))
			}()
		}
	}()
	want := map[[32]byte]int{}
	var sendErr error
	var mu sync.Mutex
	var senders sync.WaitGroup
	for i := range conns {
		data := make([]byte, size)
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		want[sha256.Sum256(data)]++
		var c net.Conn
		nsA.Do(func() { c, err = (&net.Dialer{Timeout: 10 * time.Second}).Dial("tcp", "10.77.0.2:5020") })
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		senders.Add(1)
		go func() {
			defer senders.Done()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			_, err := io.Copy(c, bytes.NewReader(data))
			if err == nil {
				err = c.(*net.TCPConn).CloseWrite()
			}
			if err != nil {
				mu.Lock()
				sendErr = errors.Join(sendErr, err)
				mu.Unlock()
			}
			io.Copy(io.Discard, c)
			c.Close()
		}()
	}
	senders.Wait()
	if sendErr != nil {
		t.Fatalf("sending: %v", sendErr)
	}
	timeout := time.After(30 * time.Second)
	for i := range conns {
		select {
		case s := <-sums:
			if want[s] == 0 {
				t.Errorf("connection %d of %d: bytes arrived changed", i, conns)
			}
			want[s]--
		case <-timeout:
			t.Fatalf("%d of %d connections arrived in 30 s", i, conns)
		}
	}
	var perQueue []string
	for q := range queues {
		perQueue = append(perQueue, fmt.Sprintf("queue %d: %d frames, %d super-frames", q, frames[0][q].Load(), supers[0][q].Load()))
		if frames[0][q].Load() == 0 {
			t.Errorf("queue %d of %d: its reader never advanced while %d flows crossed", q, queues, conns)
		}
	}
	if supers[0][0].Load()+supers[0][1].Load() == 0 {
		t.Errorf("no super-frame crossed: the hosts' TSO did not reach the TAP")
	}
	t.Log(perQueue)
}
