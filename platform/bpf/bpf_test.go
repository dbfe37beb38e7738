package bpf

import (
	"strings"
	"testing"

	"github.com/swctl/swctl/platform"
)

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{}.withDefaults("em0")
	if err != nil {
		t.Fatalf("zero Options: %v", err)
	}
	if o.BatchSize != platform.DefaultBatchSize || o.BufferSize != DefaultBufferSize || o.Logger == nil {
		t.Errorf("zero Options gave batch %d, buffer %d, logger %v; want %d, %d, slog.Default()",
			o.BatchSize, o.BufferSize, o.Logger, platform.DefaultBatchSize, DefaultBufferSize)
	}
}

func TestOptionsRefused(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"negative batch", Options{BatchSize: -1}, "bpf em0: batch size -1 out of range"},
		{"batch too large", Options{BatchSize: 1025}, "bpf em0: batch size 1025 out of range"},
		{"buffer below BPF_MINBUFSIZE", Options{BufferSize: 31}, "bpf em0: buffer size 31 out of range"},
		{"negative buffer", Options{BufferSize: -5}, "bpf em0: buffer size -5 out of range"},
	}
	for _, c := range cases {
		_, err := c.opts.withDefaults("em0")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one starting %q", c.name, err, c.want)
		}
	}
}
