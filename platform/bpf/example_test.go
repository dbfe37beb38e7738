package bpf_test

import (
	"fmt"
	"log"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/bpf"
)

// Open a port on em1, read one batch of frames and send them back out.
// The frames are views into the port's buffer: they are sent before the
// next ReadBatch.
func Example() {
	p, err := bpf.Open("em1", bpf.Options{})
	if err != nil {
		log.Fatal(err) // on Linux: bpf em1: not implemented on linux
	}
	defer p.Close()
	frames := make([][]byte, p.BatchSize())
	n, err := p.ReadBatch(platform.Batch{Frames: frames})
	if err != nil {
		log.Fatal(err)
	}
	sent, err := p.WriteBatch(platform.Batch{Frames: frames[:n]})
	fmt.Println(n, sent, err)
}
