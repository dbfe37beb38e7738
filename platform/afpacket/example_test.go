package afpacket_test

import (
	"errors"
	"log"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
)

// A reader loop: frames are views into the ring, valid until the next
// ReadBatch, so they are handled (or copied) before the loop goes round.
func Example() {
	p, err := afpacket.Open("eth1", afpacket.Options{})
	if err != nil {
		log.Fatal(err) // afpacket eth1: no such network interface
	}
	defer p.Close()
	frames := make([][]byte, p.BatchSize())
	for {
		n, err := p.ReadBatch(platform.Batch{Frames: frames})
		if errors.Is(err, platform.ErrClosed) {
			return
		}
		if err != nil {
			log.Fatal(err)
		}
		// Send them back out of the same port: WriteBatch copies.
		_, _ = p.WriteBatch(platform.Batch{Frames: frames[:n]})
	}
}
