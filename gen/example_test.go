package gen_test

import (
	"context"
	"fmt"
	"net"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
	"github.com/swctl/swctl/platform/memport"
)

// A window run over an in-memory cable: at most 16 frames in flight,
// every frame counted at the far end. With afpacket ports the same code
// measures a real path, as swctl bench does.
func ExampleBench() {
	a, b := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	bench, err := gen.NewBench(a, b, gen.Stream{Size: 60, Flows: 8}, nil)
	if err != nil {
		panic(err)
	}
	defer bench.Close()
	res, err := bench.Run(context.Background(), gen.Load{Window: 16, Count: 10000})
	if err != nil {
		panic(err)
	}
	fmt.Printf("sent %d, received %d, lost %d, reordered %d\n", res.Sent, res.Received, res.Lost, res.Reordered)
	// Output: sent 10000, received 10000, lost 0, reordered 0
}

// The RFC 2544 throughput: the highest paced rate without loss, from one
// short trial per rate.
func Example_throughput() {
	a, b := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	bench, _ := gen.NewBench(a, b, gen.Stream{Size: 60}, nil)
	defer bench.Close()
	trial := func(rate float64) (uint64, uint64, error) {
		res, err := bench.Run(context.Background(), gen.Load{Rate: rate, Count: uint64(rate / 100)})
		return res.Sent, res.Received, err
	}
	res, err := rfc2544.Search(context.Background(), trial, 0, 100_000, 1000, 10, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(res.Trials) > 0)
	// Output: true
}
