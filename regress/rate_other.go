//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// rateBed is the Linux forwarding-rate testbed; on other systems it is
// never built.
type rateBed struct{}

func newRateBed(context.Context, RateSpec, RateConfig, int, string, *Commands, string, string) (*rateBed, error) {
	return nil, fmt.Errorf("regress: forwarding-rate testbed not implemented on %s", runtime.GOOS)
}

func (b *rateBed) start(context.Context, RateInstance, string) error { return nil }

func (b *rateBed) measure(context.Context, int) (RateSample, error) { return RateSample{}, nil }

func (b *rateBed) window(context.Context) (WindowSample, error) { return WindowSample{}, nil }

func (b *rateBed) stop() error { return nil }

func (b *rateBed) close() {}

// RunBench is make bench; it needs Linux network namespaces and veth.
func RunBench(BenchConfig) error {
	return fmt.Errorf("the netns testbed is not implemented on %s (Linux network namespaces and veth)", runtime.GOOS)
}
