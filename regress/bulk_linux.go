package regress

import (
	"context"
	"fmt"
)

// measureBulk runs one instance's bulk tests on a bridge0 testbed with
// two pairs: pair 1 alone, both pairs at once, pair 1's UDP stream.
func measureBulk(ctx context.Context, b *bed, c BulkConfig) ([]BulkSample, error) {
	if b.pair2 == nil {
		return nil, fmt.Errorf("bulk: testbed %s has one host pair, want two", b.spec.Name)
	}
	one, err := b.measure(ctx, RowForward, c.Seconds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", BulkOnePair, err)
	}
	two, _, err := b.iperf(ctx, b.spec.Name+" "+RowForward, RowForward, c.Seconds,
		b.client(b.peer, b.peer2IP, c.Seconds), b.client(b.pair2.src.ns, b.pair2.dst.ip, c.Seconds))
	if err != nil {
		return nil, fmt.Errorf("TCP two pairs: %w", err)
	}
	udp, res, err := b.iperf(ctx, b.spec.Name+" "+RowForward, RowForward, c.Seconds, b.client(b.peer, b.peer2IP, c.Seconds, c.udpArgs()...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.udpRow(), err)
	}
	if res[0].UDP == nil {
		return nil, fmt.Errorf("%s: iperf3 reported no datagram counts", c.udpRow())
	}
	return []BulkSample{{Test: BulkOnePair, Sample: one}, {Test: BulkPair1, Sample: two[0]}, {Test: BulkPair2, Sample: two[1]},
		{Test: BulkUDP, Sample: udp[0], UDP: &UDPResult{SentMbps: res[0].SentBps / 1e6, UDP: *res[0].UDP}}}, nil
}
