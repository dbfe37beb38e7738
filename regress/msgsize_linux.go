package regress

import (
	"context"
	"strconv"
)

// measureMsgSize runs one iperf3 test of the Forward path with -l size.
func measureMsgSize(ctx context.Context, b *bed, size, seconds int) (Sample, error) {
	return b.measure(ctx, RowForward, seconds, "-l", strconv.Itoa(size))
}
